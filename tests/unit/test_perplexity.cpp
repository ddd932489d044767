// harness::measure_perplexity's windowing and arithmetic on a scripted generator (every scored
// token costs log 5, so the perplexity is 5); the real llama.cpp figure is checked against
// llama-perplexity in tests/e2e/llm_real_text_test.py.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "harness/perplexity.hpp"

namespace infermark::harness {
namespace {

// One token per byte of the text; remembers the windows it scored.
class ScriptedScorer final : public Generator {
 public:
  int context_length() const override { return 1024; }
  int vocab_size() const override { return 256; }
  int max_slots() const override { return 1; }
  GenerationBatching batching() const override { return GenerationBatching::kContinuous; }
  std::vector<TokenId> prompt_vocabulary() const override { return {}; }
  // Greedy continuations: the prompt's last token + 1, + 2, ...
  void start(int, const std::vector<TokenId>& prompt, int) override { next = prompt.back() + 1; }
  void step(const std::function<void(const GeneratedToken&)>& on_token) override { on_token({0, next++}); }
  void finish(int) override {}
  std::vector<EffectiveSetting> effective_settings() const override { return {}; }
  std::vector<TokenId> tokenize(const std::string& text) const override { return {text.begin(), text.end()}; }
  WindowScore score_window(const std::vector<TokenId>& window, std::size_t first_scored) override {
    windows.emplace_back(window.size(), first_scored);
    const int scored = static_cast<int>(window.size() - 1 - first_scored);
    return {scored * std::log(5.0), scored};
  }
  std::vector<std::pair<std::size_t, std::size_t>> windows;  // (size, first scored)
  TokenId next = 0;
};

std::filesystem::path text_file(std::size_t bytes) {
  const auto path = std::filesystem::temp_directory_path() / ("perplexity_" + std::to_string(bytes) + ".txt");
  std::ofstream(path) << std::string(bytes, 'a');
  return path;
}

TEST(Perplexity, WholeWindowsSecondHalfScored) {
  ScriptedScorer scorer;
  const auto result = measure_perplexity(scorer, text_file(100), 32);
  EXPECT_EQ(result.windows, 3);  // 100 tokens: three whole windows, the last 4 dropped
  EXPECT_EQ(result.text_tokens, 100);
  EXPECT_EQ(result.tokens_scored, 3 * 15);
  EXPECT_NEAR(result.perplexity, 5.0, 1e-9);
  for (const auto& [size, first] : scorer.windows) {
    EXPECT_EQ(size, 32u);
    EXPECT_EQ(first, 16u);
  }
}

TEST(Perplexity, GreedyContinuationsOfEachWindowsContextHalf) {
  ScriptedScorer scorer;
  const auto result = measure_perplexity(scorer, text_file(100), 32);
  ASSERT_EQ(result.continuations.size(), 3u);  // one per whole window, at most four
  EXPECT_EQ(result.continuation_tokens, 16);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(result.continuation_prompts[i], std::vector<int>(16, 'a'));
    ASSERT_EQ(result.continuations[i].size(), 16u);
    EXPECT_EQ(result.continuations[i].front(), 'a' + 1);
  }
}

TEST(Perplexity, GreedyAgreementIsTheShareOfEqualTokensAndTheFirstDivergence) {
  result::PerplexityResult reference, candidate, other_prompts;
  reference.continuation_prompts = candidate.continuation_prompts = {{1, 2}, {3, 4}};
  reference.continuations = {{5, 6, 7, 8}, {9, 10, 11, 12}};
  candidate.continuations = {{5, 6, 0, 8}, {9, 0, 11, 12}};
  const auto agreement = result::greedy_agreement(candidate, reference);
  ASSERT_TRUE(agreement);
  EXPECT_DOUBLE_EQ(agreement->identical_share, 6.0 / 8.0);
  EXPECT_EQ(agreement->first_divergence, 1);
  EXPECT_EQ(result::greedy_agreement(reference, reference)->first_divergence, -1);
  EXPECT_EQ(agreement->continuations, 2);
  other_prompts.continuation_prompts = {{1, 2}, {3, 5}};  // the second prompt cut otherwise: not compared
  other_prompts.continuations = {{5, 6, 7, 0}, {0, 0, 0, 0}};
  const auto partly = result::greedy_agreement(other_prompts, reference);
  ASSERT_TRUE(partly);
  EXPECT_EQ(partly->continuations, 1);
  EXPECT_DOUBLE_EQ(partly->identical_share, 3.0 / 4.0);
  EXPECT_EQ(partly->first_divergence, 3);
  other_prompts.continuation_prompts = {{9}, {9}};
  EXPECT_FALSE(result::greedy_agreement(other_prompts, reference));  // another text: nothing to compare
}

TEST(Perplexity, TextShorterThanOneWindowIsAnErrorNamingTheFlag) {
  ScriptedScorer scorer;
  try {
    measure_perplexity(scorer, text_file(10), 32);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--perplexity-text"), std::string::npos) << e.what();
  }
  EXPECT_THROW(measure_perplexity(scorer, "/nonexistent/text.txt", 32), Error);
}

TEST(Perplexity, OfScoresIsExpOfMeanNegativeLogLikelihood) {
  EXPECT_NEAR(perplexity_of({{2 * std::log(4.0), 2}, {std::log(4.0), 1}}), 4.0, 1e-12);
  EXPECT_THROW(perplexity_of({}), Error);
}

}  // namespace
}  // namespace infermark::harness
