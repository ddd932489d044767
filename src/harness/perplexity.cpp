#include "harness/perplexity.hpp"

#include <cmath>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text_file.hpp"

namespace infermark::harness {
namespace {

// The greedy continuations the report compares engines on: the context half of the first windows,
// each continued by kContinuationTokens tokens on slot 0 as the benchmark decodes (greedy).
constexpr std::size_t kContinuations = 4;
constexpr int kContinuationTokens = 16;

void continue_greedily(Generator& generator, const std::vector<TokenId>& tokens, std::size_t window,
                       result::PerplexityResult& result, const std::atomic<bool>* stop) {
  const auto context = window / 2;
  if (static_cast<int>(context) + kContinuationTokens > generator.context_length()) return;
  result.continuation_tokens = kContinuationTokens;
  for (std::size_t begin = 0; begin + window <= tokens.size() && result.continuations.size() < kContinuations; begin += window) {
    if (stop && stop->load()) break;
    const std::vector<TokenId> prompt(tokens.begin() + static_cast<std::ptrdiff_t>(begin),
                                      tokens.begin() + static_cast<std::ptrdiff_t>(begin + context));
    std::vector<int> continuation;
    generator.start(0, prompt, kContinuationTokens);
    // One token per step is the contract; a generator that yields none would loop forever.
    for (int steps = 0; continuation.size() < static_cast<std::size_t>(kContinuationTokens); ++steps) {
      if (steps > 2 * kContinuationTokens)
        throw Error("perplexity: the generator stopped producing tokens of a greedy continuation");
      generator.step([&](const GeneratedToken& token) { continuation.push_back(token.token); });
    }
    generator.finish(0);
    result.continuation_prompts.emplace_back(prompt.begin(), prompt.end());
    result.continuations.push_back(std::move(continuation));
  }
}

}  // namespace

double perplexity_of(const std::vector<WindowScore>& scores) {
  double nll = 0;
  long long tokens = 0;
  for (const auto& s : scores) {
    nll += s.negative_log_likelihood;
    tokens += s.tokens;
  }
  if (tokens == 0) throw Error("perplexity: no token was scored");
  return std::exp(nll / static_cast<double>(tokens));
}

result::PerplexityResult measure_perplexity(Generator& generator, const std::filesystem::path& text_file, int window,
                                            const std::atomic<bool>* stop) {
  if (window < 4) throw Error("--perplexity-window " + std::to_string(window) + ": needs at least 4 tokens");
  const auto text = read_text_file(text_file, "--perplexity-text");
  const auto tokens = generator.tokenize(text);
  const auto size = static_cast<std::size_t>(window);
  if (tokens.size() < size)
    throw Error("--perplexity-text " + text_file.string() + ": " + std::to_string(tokens.size()) +
                " tokens, fewer than one window of " + std::to_string(window) + " (--perplexity-window)");
  result::PerplexityResult result;
  result.source = text_file.string();
  result.text_bytes = static_cast<long long>(text.size());
  result.text_tokens = static_cast<long long>(tokens.size());
  result.window = window;
  std::vector<WindowScore> scores;
  const auto start = mono_now_ns();
  for (std::size_t begin = 0; begin + size <= tokens.size(); begin += size) {
    if (stop && stop->load()) break;
    const std::vector<TokenId> chunk(tokens.begin() + static_cast<std::ptrdiff_t>(begin),
                                     tokens.begin() + static_cast<std::ptrdiff_t>(begin + size));
    scores.push_back(generator.score_window(chunk, size / 2));
    result.tokens_scored += scores.back().tokens;
  }
  result.wall_s = static_cast<double>(mono_now_ns() - start) * 1e-9;
  result.windows = static_cast<int>(scores.size());
  result.perplexity = perplexity_of(scores);
  continue_greedily(generator, tokens, size, result, stop);
  return result;
}

}  // namespace infermark::harness
