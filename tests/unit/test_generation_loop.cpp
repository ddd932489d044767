// The LLM load loop's own logic — continuous batching, slot reuse, length draws, metrics — on a
// scripted generator that emits one token per active slot per step. The real llama.cpp
// generator is tested in tests/integration/test_llamacpp_backend.cpp.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/error.hpp"
#include "loadgen/generation.hpp"
#include "loadgen/generation_metrics.hpp"

namespace infermark::loadgen {
namespace {

// Prefill takes one step and yields the first token; each later step yields one token per slot.
class ScriptedGenerator final : public Generator {
 public:
  explicit ScriptedGenerator(int slots, int context = 256) : slots_(static_cast<std::size_t>(slots)), context_(context) {}

  int context_length() const override { return context_; }
  int vocab_size() const override { return 100; }
  int max_slots() const override { return static_cast<int>(slots_.size()); }
  std::vector<TokenId> prompt_vocabulary() const override { return {5, 6, 7}; }

  void start(int slot, const std::vector<TokenId>& prompt, int max_new_tokens) override {
    auto& s = slots_.at(static_cast<std::size_t>(slot));
    if (s.active) throw Error("slot busy");
    s = {true, 0, max_new_tokens};
    prompts.push_back(prompt);
    max_active = std::max(max_active, active());
  }
  void step(const std::function<void(const GeneratedToken&)>& on_token) override {
    ++steps;
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].active && slots_[i].produced < slots_[i].wanted) {
        ++slots_[i].produced;
        on_token({static_cast<int>(i), 42});
      }
  }
  void finish(int slot) override {
    slots_.at(static_cast<std::size_t>(slot)).active = false;
    ++finished;
  }
  std::vector<EffectiveSetting> effective_settings() const override { return {}; }

  int active() const {
    int n = 0;
    for (const auto& s : slots_) n += s.active;
    return n;
  }

  std::vector<std::vector<TokenId>> prompts;
  int steps = 0, finished = 0, max_active = 0;

 private:
  struct Slot {
    bool active = false;
    int produced = 0, wanted = 0;
  };
  std::vector<Slot> slots_;
  int context_;
};

GenerationSpec spec_of(int concurrency, std::uint64_t requests, double prompt, double output) {
  GenerationSpec spec;
  spec.concurrency = concurrency;
  spec.warmup_requests = 2;
  spec.requests = requests;
  spec.prompt_tokens = {prompt, 0};
  spec.output_tokens = {output, 0};
  return spec;
}

TEST(GenerationLoop, RecordsEveryRequestWithAllItsTokens) {
  ScriptedGenerator generator(4);
  const auto outcome = run_generation(generator, spec_of(4, 10, 16, 8));
  ASSERT_EQ(outcome.requests.size(), 10u);
  for (const auto& r : outcome.requests) {
    EXPECT_EQ(r.prompt_tokens, 16);
    EXPECT_EQ(r.output_tokens, 8);
    ASSERT_EQ(r.token_ns.size(), 8u);
    EXPECT_LE(r.start_ns, r.token_ns.front());
    EXPECT_TRUE(std::is_sorted(r.token_ns.begin(), r.token_ns.end()));
  }
  EXPECT_EQ(generator.finished, 12);  // warm-up requests are run and freed too
  EXPECT_EQ(generator.active(), 0);
  EXPECT_GT(outcome.wall_s, 0);
}

TEST(GenerationLoop, KeepsConcurrencySequencesInFlightAndRefillsFreedSlots) {
  ScriptedGenerator generator(4);
  auto spec = spec_of(3, 9, 4, 5);
  spec.warmup_requests = 0;
  const auto outcome = run_generation(generator, spec);
  EXPECT_EQ(generator.max_active, 3);  // never more than asked, even with a fourth slot free
  // 9 requests of 5 tokens, 3 at a time, a freed slot refilled before the next step: 3 waves of 5 steps.
  EXPECT_EQ(outcome.steps, 15);
}

TEST(GenerationLoop, DrawnLengthsAreSeededAndClampedToTheContext) {
  ScriptedGenerator a(2, 64), b(2, 64);
  auto spec = spec_of(2, 40, 40, 20);
  spec.prompt_tokens.stddev = 15;
  spec.output_tokens.stddev = 10;
  const auto first = run_generation(a, spec);
  const auto second = run_generation(b, spec);
  ASSERT_EQ(a.prompts, b.prompts);  // same seed, same prompts and lengths
  std::set<int> prompt_lengths;
  for (const auto& r : first.requests) {
    prompt_lengths.insert(r.prompt_tokens);
    EXPECT_GE(r.prompt_tokens, 1);
    EXPECT_GE(r.output_tokens, 1);
    EXPECT_LE(r.prompt_tokens + r.output_tokens, 64);
  }
  EXPECT_GT(prompt_lengths.size(), 5u);
  spec.seed = 7;
  ScriptedGenerator c(2, 64);
  run_generation(c, spec);
  EXPECT_NE(a.prompts, c.prompts);
  for (const auto& prompt : a.prompts)
    for (auto token : prompt) EXPECT_TRUE(token >= 5 && token <= 7);  // only from the prompt vocabulary
  (void)second;
}

TEST(GenerationLoop, RefusesWhatCannotFit) {
  ScriptedGenerator generator(2, 128);
  EXPECT_THROW(run_generation(generator, spec_of(4, 4, 10, 10)), Error);   // more sequences than slots
  EXPECT_THROW(run_generation(generator, spec_of(1, 4, 120, 10)), Error);  // longer than the context
  try {
    run_generation(generator, spec_of(1, 4, 120, 10));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("context of 128 tokens"), std::string::npos) << e.what();
  }
}

TEST(GenerationLoop, StopFlagKeepsCompletedRequests) {
  ScriptedGenerator generator(1);
  std::atomic<bool> stop{true};
  const auto outcome = run_generation(generator, spec_of(1, 5, 4, 4), &stop);
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_TRUE(outcome.requests.empty());
  EXPECT_EQ(generator.active(), 0);  // in-flight sequences are freed
}

TEST(GenerationMetrics, DerivesTtftTpotAndRatesFromTokenTimes) {
  GenerationOutcome outcome;
  // Two requests, times in ms: start 0, tokens at 10, 12, 14 (TTFT 10, TPOT 2); start 5, tokens 25, 29 (TTFT 20, TPOT 4).
  auto ns = [](double ms) { return static_cast<std::int64_t>(ms * 1e6); };
  outcome.requests.push_back({100, 3, ns(0), {ns(10), ns(12), ns(14)}});
  outcome.requests.push_back({200, 2, ns(5), {ns(25), ns(29)}});
  outcome.wall_s = 0.029;
  const auto m = summarize_generation(outcome);
  EXPECT_EQ(m.requests, 2u);
  EXPECT_EQ(m.prompt_tokens, 300);
  EXPECT_EQ(m.output_tokens, 5);
  ASSERT_TRUE(m.ttft_ms && m.tpot_ms && m.itl_ms && m.e2e_ms);
  EXPECT_NEAR(m.ttft_ms->mean, 15, 1e-9);
  EXPECT_NEAR(m.tpot_ms->min, 2, 1e-9);
  EXPECT_NEAR(m.tpot_ms->max, 4, 1e-9);
  EXPECT_EQ(m.itl_ms->count, 3u);  // 2 gaps + 1 gap
  EXPECT_NEAR(m.e2e_ms->max, 24, 1e-9);
  EXPECT_NEAR(m.prefill_tokens_per_s, 300 / 0.030, 1e-6);  // prompt tokens / summed TTFT
  EXPECT_NEAR(m.decode_tokens_per_s, 3 / 0.008, 1e-6);     // 3 tokens after the first over 4 + 4 ms
  EXPECT_NEAR(m.output_tokens_per_s, 5 / 0.029, 1e-6);
  EXPECT_NEAR(m.requests_per_s, 2 / 0.029, 1e-6);
}

TEST(LengthDistribution, DescribesFixedAndDrawnLengths) {
  EXPECT_EQ((LengthDistribution{512, 0}.describe()), "512");
  EXPECT_EQ((LengthDistribution{512, 64}.describe()), "512 ± 64");
  SeededRandom random(1);
  EXPECT_EQ((LengthDistribution{512, 0}.draw(random, 100)), 100);
}

}  // namespace
}  // namespace infermark::loadgen
