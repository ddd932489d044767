#include "harness/prompt_library.hpp"

#include <fmt/core.h>

#include "core/error.hpp"
#include "core/random.hpp"

namespace infermark::harness {

PromptLibrary::PromptLibrary(const loadgen::LengthDistribution& prompt_tokens, const loadgen::LengthDistribution& output_tokens,
                             const Generator& generator, std::uint64_t seed, std::uint32_t count) {
  const int context = generator.context_length();
  const double longest = prompt_tokens.mean + output_tokens.mean;
  if (longest > context)
    throw Error(fmt::format("--prompt-tokens {} + --output-tokens {} = {} tokens: longer than the model's context of {} tokens",
                            prompt_tokens.mean, output_tokens.mean, longest, context));
  const auto vocabulary = generator.prompt_vocabulary();
  if (vocabulary.empty()) throw Error("the model's vocabulary has no ordinary tokens to build prompts from");
  SeededRandom random(seed);
  samples_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    PromptSample sample;
    const int prompt_length = prompt_tokens.draw(random, context - 1);
    sample.output_tokens = output_tokens.draw(random, context - prompt_length);
    sample.tokens.resize(static_cast<std::size_t>(prompt_length));
    for (auto& token : sample.tokens) token = vocabulary[random.next() % vocabulary.size()];
    samples_.push_back(std::move(sample));
  }
}

}  // namespace infermark::harness
