#include "harness/prompt_library.hpp"

#include <fmt/core.h>

#include "core/error.hpp"
#include "core/random.hpp"

namespace infermark::harness {
namespace {

// Throws when the workload's longest mean request (`sum` says how it adds up) exceeds the context.
void require_fits(double longest, int context, const std::string& sum) {
  if (longest > context)
    throw Error(fmt::format("{} = {} tokens: longer than the model's context of {} tokens", sum, longest, context));
}

}  // namespace

PromptLibrary::PromptLibrary(const loadgen::LengthDistribution& prompt_tokens, const loadgen::LengthDistribution& output_tokens,
                             const Generator& generator, const TokenSource& tokens, std::uint64_t seed,
                             const loadgen::SharedPrefix& shared_prefix, std::uint32_t count)
    : prefix_groups_(shared_prefix.enabled() ? static_cast<std::uint32_t>(shared_prefix.groups) : 0) {
  const int context = generator.context_length();
  const int prefix_length = shared_prefix.enabled() ? shared_prefix.tokens : 0;
  require_fits(prefix_length + prompt_tokens.mean + output_tokens.mean, context,
               fmt::format("--shared-prefix {} + --prompt-tokens {} + --output-tokens {}", prefix_length, prompt_tokens.mean,
                           output_tokens.mean));
  SeededRandom random(seed);
  SeededRandom prefix_random(loadgen::prefix_stream_seed(seed));
  std::vector<std::vector<TokenId>> prefixes;
  for (int g = 0; g < shared_prefix.groups; ++g) prefixes.push_back(tokens.take(prefix_length, prefix_random));
  samples_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    PromptSample sample;
    const int prompt_length = prompt_tokens.draw(random, context - 1 - prefix_length);
    sample.output_tokens = output_tokens.draw(random, context - prefix_length - prompt_length);
    const auto own = tokens.take(prompt_length, random);
    if (!prefixes.empty()) {
      sample.prefix_group = static_cast<std::uint32_t>(prefix_random.next() % prefixes.size());
      sample.tokens = prefixes[*sample.prefix_group];
    }
    sample.tokens.insert(sample.tokens.end(), own.begin(), own.end());
    samples_.push_back(std::move(sample));
  }
}

PromptLibrary::PromptLibrary(const loadgen::Trace& trace, const Generator& generator, const TokenSource& tokens,
                             std::uint64_t seed) {
  const int context = generator.context_length();
  if (context < 3) throw Error(fmt::format("a context of {} tokens holds no prompt and answer", context));
  samples_.reserve(trace.requests.size());
  const auto first_blocks = loadgen::first_block_groups(trace);
  prefix_groups_ = first_blocks.groups;
  for (std::size_t k = 0; k < trace.requests.size(); ++k) {
    const auto& request = trace.requests[k];
    PromptSample sample;
    sample.prefix_group = first_blocks.of_request[k];
    sample.output_tokens = std::min(request.output_tokens, context - 2);
    const int input = std::min(request.input_tokens, context - 1 - sample.output_tokens);
    shortened_ += input < request.input_tokens || sample.output_tokens < request.output_tokens ? 1 : 0;
    for (const auto block : request.blocks) {
      if (static_cast<int>(sample.tokens.size()) >= input) break;
      SeededRandom block_random(loadgen::block_stream_seed(seed, block));
      const auto block_tokens = tokens.take(trace.block_tokens, block_random);
      sample.tokens.insert(sample.tokens.end(), block_tokens.begin(), block_tokens.end());
    }
    SeededRandom own_random(loadgen::request_stream_seed(seed, k));
    const int missing = input - static_cast<int>(sample.tokens.size());
    if (missing > 0) {
      const auto own = tokens.take(missing, own_random);
      sample.tokens.insert(sample.tokens.end(), own.begin(), own.end());
    }
    sample.tokens.resize(static_cast<std::size_t>(input));
    samples_.push_back(std::move(sample));
  }
}

PromptLibrary::PromptLibrary(const loadgen::LengthDistribution& message_tokens, const loadgen::LengthDistribution& output_tokens,
                             const Generator& generator, const TokenSource& tokens, std::uint64_t seed,
                             const loadgen::Conversation& conversation)
    : turns_{conversation.turns} {
  const int context = generator.context_length();
  const int turns = conversation.turns;
  require_fits(turns * (message_tokens.mean + output_tokens.mean), context,
               fmt::format("a conversation's last turn, --turns {} x (--prompt-tokens {} + --output-tokens {})", turns,
                           message_tokens.mean, output_tokens.mean));
  SeededRandom random(seed);
  const auto conversations = loadgen::conversations_in_library(turns);
  samples_.reserve(static_cast<std::size_t>(conversations) * static_cast<std::size_t>(turns));
  for (std::uint32_t c = 0; c < conversations; ++c) {
    std::vector<TokenId> history;
    for (int t = 0; t < turns; ++t) {
      // Drawn lengths are clamped so every later turn keeps at least a token of message and of answer.
      const int room = context - static_cast<int>(history.size()) - 2 * (turns - 1 - t);
      PromptSample sample;
      const auto message = tokens.take(message_tokens.draw(random, room - 2), random);
      history.insert(history.end(), message.begin(), message.end());
      sample.tokens = history;
      sample.output_tokens = output_tokens.draw(random, room - static_cast<int>(message.size()) - 1);
      const auto answer = tokens.take(sample.output_tokens, random);
      history.insert(history.end(), answer.begin(), answer.end());
      samples_.push_back(std::move(sample));
    }
  }
}

}  // namespace infermark::harness
