#include "harness/prompt_library.hpp"

#include <fmt/core.h>

#include "core/error.hpp"
#include "core/random.hpp"

namespace infermark::harness {
namespace {

std::vector<TokenId> drawn_tokens(int count, const std::vector<TokenId>& vocabulary, SeededRandom& random) {
  std::vector<TokenId> tokens(static_cast<std::size_t>(count));
  for (auto& token : tokens) token = vocabulary[random.next() % vocabulary.size()];
  return tokens;
}

}  // namespace

PromptLibrary::PromptLibrary(const loadgen::LengthDistribution& prompt_tokens, const loadgen::LengthDistribution& output_tokens,
                             const Generator& generator, std::uint64_t seed, const loadgen::SharedPrefix& shared_prefix,
                             std::uint32_t count)
    : shared_prefix_(shared_prefix) {
  const int context = generator.context_length();
  const int prefix_length = shared_prefix.enabled() ? shared_prefix.tokens : 0;
  const double longest = prefix_length + prompt_tokens.mean + output_tokens.mean;
  if (longest > context)
    throw Error(
        fmt::format("--shared-prefix {} + --prompt-tokens {} + --output-tokens {} = {} tokens: longer than the model's "
                    "context of {} tokens",
                    prefix_length, prompt_tokens.mean, output_tokens.mean, longest, context));
  const auto vocabulary = generator.prompt_vocabulary();
  if (vocabulary.empty()) throw Error("the model's vocabulary has no ordinary tokens to build prompts from");
  SeededRandom random(seed);
  SeededRandom prefix_random(loadgen::prefix_stream_seed(seed));
  std::vector<std::vector<TokenId>> prefixes;
  for (int g = 0; g < shared_prefix.groups; ++g) prefixes.push_back(drawn_tokens(prefix_length, vocabulary, prefix_random));
  samples_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    PromptSample sample;
    const int prompt_length = prompt_tokens.draw(random, context - 1 - prefix_length);
    sample.output_tokens = output_tokens.draw(random, context - prefix_length - prompt_length);
    const auto own = drawn_tokens(prompt_length, vocabulary, random);
    if (!prefixes.empty()) {
      sample.prefix_group = static_cast<std::uint32_t>(prefix_random.next() % prefixes.size());
      sample.tokens = prefixes[*sample.prefix_group];
    }
    sample.tokens.insert(sample.tokens.end(), own.begin(), own.end());
    samples_.push_back(std::move(sample));
  }
}

}  // namespace infermark::harness
