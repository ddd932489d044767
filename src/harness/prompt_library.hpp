// The sample library of a language model: prompts of drawn lengths from a token source (the
// model's ordinary vocabulary, or windows of a real text), each with the number of tokens to
// generate. Drawn once from the seed, so every backend, scenario and concurrency sees the same
// requests. With a shared prefix, each
// prompt is one of the groups' prefixes followed by its own drawn tokens. In conversations, each
// turn's prompt is the conversation's history followed by a new message.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/generator.hpp"
#include "harness/token_source.hpp"
#include "loadgen/conversation.hpp"
#include "loadgen/generation.hpp"
#include "loadgen/system_under_test.hpp"
#include "loadgen/trace.hpp"

namespace infermark::harness {

struct PromptSample {
  std::vector<TokenId> tokens;  // the shared prefix (if any) first
  int output_tokens = 0;
  std::optional<std::uint32_t> prefix_group;  // shared-prefix workloads and traces with blocks
};

class PromptLibrary final : public loadgen::SampleLibrary {
 public:
  // Throws infermark::Error naming the flag when a fixed length cannot fit the context or the
  // vocabulary has no ordinary tokens; drawn lengths are clamped to what fits.
  PromptLibrary(const loadgen::LengthDistribution& prompt_tokens, const loadgen::LengthDistribution& output_tokens,
                const Generator& generator, const TokenSource& tokens, std::uint64_t seed,
                const loadgen::SharedPrefix& shared_prefix = {}, std::uint32_t count = 1024);

  // A replayed trace's requests, in order: the k-th prompt has the k-th request's input length (its
  // recorded blocks' tokens first, each block's tokens the same wherever it recurs) and asks for its
  // output length. A request longer than the context is shortened to fit, and counted.
  PromptLibrary(const loadgen::Trace& trace, const Generator& generator, const TokenSource& tokens, std::uint64_t seed);

  // Multi-turn conversations (conversations_in_library of them, sample = conversation x turns +
  // turn): turn t's prompt is the earlier turns' messages and answers, then a new message of
  // `message_tokens`. The answers in the history are drawn tokens of each turn's output length (the
  // same for every engine, not what the engine said), so an engine that kept turn t's prompt
  // cached reuses all of it at turn t + 1. Throws when the last turn's mean length cannot fit the context.
  PromptLibrary(const loadgen::LengthDistribution& message_tokens, const loadgen::LengthDistribution& output_tokens,
                const Generator& generator, const TokenSource& tokens, std::uint64_t seed,
                const loadgen::Conversation& conversation);

  std::uint32_t sample_count() const override { return static_cast<std::uint32_t>(samples_.size()); }
  const PromptSample& at(std::uint32_t sample) const { return samples_[sample]; }
  std::uint32_t group_count() const override { return turns_.count(); }
  std::uint32_t group_of(std::uint32_t sample) const override { return turns_.of(sample); }
  std::string group_label(std::uint32_t group) const override { return turns_.label(group); }
  // Prefix groups the samples' prefix_group counts (shared-prefix groups, or a trace's first blocks).
  std::uint32_t prefix_groups() const { return prefix_groups_; }
  // Trace requests shortened to fit the context.
  std::uint32_t shortened() const { return shortened_; }

 private:
  std::vector<PromptSample> samples_;
  std::uint32_t shortened_ = 0;
  std::uint32_t prefix_groups_ = 0;
  loadgen::TurnGroups turns_;
};

}  // namespace infermark::harness
