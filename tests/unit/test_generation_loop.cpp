// The LLM system under test's own logic — continuous batching over lanes, slot reuse, prompt
// draws, failures, metrics — on a scripted generator that emits one token per active slot per step. The real llama.cpp
// generator is tested in tests/integration/test_llamacpp_backend.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "generation/generation_scheduler.hpp"
#include "harness/generator_system.hpp"
#include "harness/prompt_library.hpp"
#include "loadgen/closed_loop.hpp"
#include "loadgen/generation_metrics.hpp"
#include "loadgen/query_recorder.hpp"
#include "loadgen/scenario.hpp"

namespace infermark::loadgen {
namespace {

using harness::PromptLibrary;

// Prefill takes one step and yields the first token; each later step yields one token per slot.
class ScriptedGenerator final : public Generator {
 public:
  explicit ScriptedGenerator(int slots, int context = 256) : slots_(static_cast<std::size_t>(slots)), context_(context) {}

  int context_length() const override { return context_; }
  int vocab_size() const override { return 100; }
  int max_slots() const override { return static_cast<int>(slots_.size()); }
  GenerationBatching batching() const override { return GenerationBatching::kContinuous; }
  std::vector<TokenId> prompt_vocabulary() const override { return {5, 6, 7}; }
  // A BOS (0), then 'a' 'b' 'c' as the ordinary tokens 5 6 7 and any other byte as a control token (1).
  std::vector<TokenId> tokenize(const std::string& text) const override {
    std::vector<TokenId> tokens{0};
    for (const char c : text) tokens.push_back(c >= 'a' && c <= 'c' ? 5 + (c - 'a') : 1);
    return tokens;
  }

  void start(int slot, const std::vector<TokenId>& prompt, int max_new_tokens) override {
    auto& s = slots_.at(static_cast<std::size_t>(slot));
    if (s.active) throw Error("slot busy");
    s = {true, 0, max_new_tokens};
    prompts.push_back(prompt);
    start_slots.push_back(slot);
    max_active = std::max(max_active, active());
  }
  void step(const std::function<void(const GeneratedToken&)>& on_token) override {
    ++steps;
    if (step_time.count() > 0) std::this_thread::sleep_for(step_time);
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
  std::vector<int> start_slots;  // the slot of each start, in order
  int steps = 0, finished = 0, max_active = 0;
  std::chrono::microseconds step_time{0};  // a forward pass's duration (requests queue meanwhile)

 private:
  struct Slot {
    bool active = false;
    int produced = 0, wanted = 0;
  };
  std::vector<Slot> slots_;
  int context_;
};

PromptLibrary prompts_of(const Generator& generator, double prompt, double output, std::uint64_t seed = 42) {
  return PromptLibrary({prompt, 0}, {output, 0}, generator, harness::TokenSource::vocabulary(generator), seed, {}, 64);
}

ScenarioSpec closed_spec(int concurrency, std::uint64_t requests) {
  ScenarioSpec spec;
  spec.name = concurrency == 1 ? Scenario::kSingleStream : Scenario::kConcurrency;
  spec.concurrency = concurrency;
  spec.warmup_queries = 2;
  spec.max_queries = requests;
  return spec;
}

TEST(GeneratorSystem, RecordsEveryRequestWithAllItsTokens) {
  ScriptedGenerator generator(4);
  const auto prompts = prompts_of(generator, 16, 8);
  harness::GeneratorSystem system(generator, prompts, 4);
  const auto outcome = run_scenario(system, closed_spec(4, 10), 2, nullptr);
  ASSERT_EQ(outcome.phases.size(), 1u);
  const auto& requests = outcome.phases[0].recorder.requests();
  ASSERT_EQ(requests.size(), 10u);
  for (const auto& r : requests) {
    EXPECT_EQ(r.prompt_tokens, 16);
    EXPECT_EQ(r.output_tokens, 8);
    ASSERT_EQ(r.token_ns.size(), 8u);
    EXPECT_LE(r.start_ns, r.token_ns.front());
    EXPECT_TRUE(std::is_sorted(r.token_ns.begin(), r.token_ns.end()));
  }
  EXPECT_GE(generator.finished, 12);  // warm-up requests (2 per lane at least) run and are freed too
  EXPECT_EQ(generator.active(), 0);
  EXPECT_GE(system.steps(), 8u);
}

TEST(GeneratorSystem, BatchesConcurrentRequestsIntoOneStep) {
  ScriptedGenerator generator(4);
  generator.step_time = std::chrono::microseconds(300);
  const auto prompts = prompts_of(generator, 4, 50);
  harness::GeneratorSystem system(generator, prompts, 3);
  ClosedLoopConfig config;
  config.concurrency = 3;
  config.max_queries = 9;
  run_closed_loop(system, config);
  EXPECT_EQ(generator.max_active, 3);  // never more than the lanes, even with a fourth slot free
  EXPECT_GE(generator.max_active, 2);  // requests share steps: continuous batching
  // 9 requests of 50 tokens: one at a time would take 450 steps; batched, far fewer.
  EXPECT_LT(system.steps(), 300u);
}

TEST(GeneratorSystem, PromptsAreSeededDrawnAndClampedToTheContext) {
  ScriptedGenerator a(2, 64), b(2, 64), c(2, 64);
  const auto vocabulary = harness::TokenSource::vocabulary(a);  // a, b and c alike
  const PromptLibrary first({40, 15}, {20, 10}, a, vocabulary, 42, {}, 200),
      second({40, 15}, {20, 10}, b, vocabulary, 42, {}, 200), other({40, 15}, {20, 10}, c, vocabulary, 7, {}, 200);
  std::set<std::size_t> prompt_lengths;
  bool differs = false;
  for (std::uint32_t i = 0; i < first.sample_count(); ++i) {
    const auto& p = first.at(i);
    EXPECT_EQ(p.tokens, second.at(i).tokens);
    EXPECT_EQ(p.output_tokens, second.at(i).output_tokens);
    differs = differs || p.tokens != other.at(i).tokens;
    prompt_lengths.insert(p.tokens.size());
    EXPECT_GE(p.tokens.size(), 1u);
    EXPECT_GE(p.output_tokens, 1);
    EXPECT_LE(static_cast<int>(p.tokens.size()) + p.output_tokens, 64);
    for (auto token : p.tokens) EXPECT_TRUE(token >= 5 && token <= 7);  // only from the prompt vocabulary
  }
  EXPECT_TRUE(differs);
  EXPECT_GT(prompt_lengths.size(), 5u);
}

TEST(GeneratorSystem, DatasetPromptsAreWindowsOfTheCorpusOrdinaryTokens) {
  const ScriptedGenerator generator(1);
  const auto text = std::filesystem::temp_directory_path() / "infermark-dataset-test.txt";
  {
    std::ofstream out(text);
    out << "abc\naab cba";  // ordinary tokens 5 6 7 5 5 6 7 6 5; the BOS, newline and space left out
  }
  const std::vector<TokenId> corpus{5, 6, 7, 5, 5, 6, 7, 6, 5};
  const auto source = harness::TokenSource::corpus(generator, text);
  EXPECT_NE(source.describe().find("9 ordinary tokens by the model's own tokenizer"), std::string::npos) << source.describe();
  const PromptLibrary prompts({12, 0}, {3, 0}, generator, source, 7, {}, 32);
  std::set<std::size_t> starts;
  for (std::uint32_t s = 0; s < prompts.sample_count(); ++s) {
    const auto& tokens = prompts.at(s).tokens;
    ASSERT_EQ(tokens.size(), 12u);  // exactly the length asked, wrapping round the corpus
    std::optional<std::size_t> start;
    for (std::size_t at = 0; at < corpus.size() && !start; ++at) {
      bool window = true;
      for (std::size_t i = 0; i < tokens.size() && window; ++i) window = tokens[i] == corpus[(at + i) % corpus.size()];
      if (window) start = at;
    }
    ASSERT_TRUE(start.has_value()) << "sample " << s << " is not a window of the corpus";
    starts.insert(*start);
  }
  EXPECT_GT(starts.size(), 3u);  // offsets drawn, not one window for all
  {
    std::ofstream out(text);
    out << "xyz";
  }
  try {
    harness::TokenSource::corpus(generator, text);
    ADD_FAILURE() << "a corpus without ordinary tokens was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--dataset " + text.string() + ": 0 tokens"), std::string::npos) << e.what();
  }
  std::filesystem::remove(text);
  EXPECT_THROW(harness::TokenSource::corpus(generator, text), Error);  // cannot be read
}

TEST(GeneratorSystem, SharedPrefixPromptsStartWithTheirGroupsPrefixAndKeepTheirOwnTokens) {
  ScriptedGenerator generator(2, 256);
  const SharedPrefix shared{3, 24};
  const auto vocabulary = harness::TokenSource::vocabulary(generator);
  const PromptLibrary plain({16, 0}, {8, 0}, generator, vocabulary, 42, {}, 200),
      prefixed({16, 0}, {8, 0}, generator, vocabulary, 42, shared, 200);
  EXPECT_EQ(prefixed.prefix_groups(), 3u);
  EXPECT_EQ(plain.prefix_groups(), 0u);
  std::map<std::uint32_t, std::vector<TokenId>> prefix_of_group;
  for (std::uint32_t i = 0; i < prefixed.sample_count(); ++i) {
    const auto& p = prefixed.at(i);
    ASSERT_TRUE(p.prefix_group.has_value());
    ASSERT_LT(*p.prefix_group, 3u);
    ASSERT_EQ(p.tokens.size(), 24u + 16u);
    const std::vector<TokenId> prefix(p.tokens.begin(), p.tokens.begin() + 24), own(p.tokens.begin() + 24, p.tokens.end());
    auto [known, first] = prefix_of_group.emplace(*p.prefix_group, prefix);
    EXPECT_EQ(known->second, prefix) << "sample " << i << " does not start with its group's prefix";
    EXPECT_EQ(own, plain.at(i).tokens) << "the prefix changed the prompt's own tokens";
    EXPECT_FALSE(plain.at(i).prefix_group.has_value());
  }
  ASSERT_EQ(prefix_of_group.size(), 3u);  // 200 draws over 3 groups use every group
  EXPECT_NE(prefix_of_group[0], prefix_of_group[1]);
  EXPECT_NE(prefix_of_group[1], prefix_of_group[2]);
  try {
    const PromptLibrary too_long({200, 0}, {40, 0}, generator, vocabulary, 42, shared, 10);
    ADD_FAILURE() << "a prefix + prompt + output longer than the context was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--shared-prefix 24"), std::string::npos) << e.what();
  }
}

TEST(GeneratorSystem, TheFirstRequestOfEachPrefixIsColdAndTheRestWarmWarmUpIncluded) {
  ScriptedGenerator generator(2);
  const PromptLibrary prompts({8, 0}, {4, 0}, generator, harness::TokenSource::vocabulary(generator), 42, SharedPrefix{2, 8}, 64);
  harness::GeneratorSystem system(generator, prompts, 2);
  auto spec = closed_spec(2, 30);
  spec.warmup_queries = 0;
  const auto outcome = run_scenario(system, spec, 2, nullptr);
  const auto& requests = outcome.phases.at(0).recorder.requests();
  ASSERT_EQ(requests.size(), 30u);
  std::size_t cold = 0, warm = 0;
  for (const auto& r : requests) {
    EXPECT_NE(r.prefix, PrefixWarmth::kUnshared);
    (r.prefix == PrefixWarmth::kCold ? cold : warm) += 1;
  }
  EXPECT_EQ(cold, 2u);  // one per group: 30 draws over 2 groups hit both
  EXPECT_EQ(warm, 28u);
  const auto metrics = summarize_requests(requests, 1.0);
  ASSERT_TRUE(metrics.prefix.has_value());
  EXPECT_EQ(metrics.prefix->cold, 2u);
  EXPECT_EQ(metrics.prefix->warm, 28u);
  EXPECT_NEAR(metrics.prefix->warm_share(), 28.0 / 30.0, 1e-12);
  ASSERT_TRUE(metrics.prefix->ttft_warm_ms && metrics.prefix->ttft_cold_ms);
  EXPECT_EQ(metrics.prefix->ttft_cold_ms->count, 2u);

  // With warm-up, the warm-up's requests have sent the prefixes already: nothing measured is cold.
  harness::GeneratorSystem warmed(generator, prompts, 2);
  spec.warmup_queries = 20;
  const auto after_warm_up = run_scenario(warmed, spec, 2, nullptr);
  for (const auto& r : after_warm_up.phases.at(0).recorder.requests()) EXPECT_EQ(r.prefix, PrefixWarmth::kWarm);
}

TEST(GeneratorSystem, RefusesWhatCannotFit) {
  ScriptedGenerator generator(2, 128);
  const auto prompts = prompts_of(generator, 10, 10);
  EXPECT_THROW(harness::GeneratorSystem(generator, prompts, 4), Error);  // more lanes than slots
  try {
    prompts_of(generator, 120, 10);
    ADD_FAILURE() << "a prompt longer than the context was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("context of 128 tokens"), std::string::npos) << e.what();
  }
}

// A generator whose step fails on the n-th call: the failed requests are errors, not a crash,
// and the next requests still run.
class FailingGenerator final : public Generator {
 public:
  int context_length() const override { return 256; }
  int vocab_size() const override { return 100; }
  int max_slots() const override { return 2; }
  GenerationBatching batching() const override { return GenerationBatching::kContinuous; }
  std::vector<TokenId> prompt_vocabulary() const override { return {5}; }
  void start(int slot, const std::vector<TokenId>&, int wanted) override {
    wanted_[slot] = wanted, produced_[slot] = 0, active_[slot] = true;
  }
  void step(const std::function<void(const GeneratedToken&)>& on_token) override {
    if (++steps == 3) throw Error("planted decode failure");
    for (int i = 0; i < 2; ++i)
      if (active_[i] && produced_[i] < wanted_[i]) {
        ++produced_[i];
        on_token({i, 1});
      }
  }
  void finish(int slot) override { active_[slot] = false; }
  std::vector<EffectiveSetting> effective_settings() const override { return {}; }
  int steps = 0;

 private:
  int wanted_[2]{}, produced_[2]{};
  bool active_[2]{};
};

TEST(GeneratorSystem, AFailedStepFailsItsRequestsOnly) {
  FailingGenerator generator;
  const auto prompts = prompts_of(generator, 4, 2);
  harness::GeneratorSystem system(generator, prompts, 1);
  ClosedLoopConfig config;
  config.max_queries = 4;
  const auto phase = run_closed_loop(system, config);
  EXPECT_EQ(phase.recorder.errors(), 1u);
  EXPECT_EQ(phase.recorder.completed(), 3u);
}

// One request of `tokens` tokens that says when it ended.
class CountedSequence final : public generation::Sequence {
 public:
  CountedSequence(int tokens, std::promise<void> ended) : tokens_(tokens), ended_(std::move(ended)) {}
  const std::vector<TokenId>& prompt() const override { return prompt_; }
  int max_tokens() const override { return tokens_; }
  bool on_token(TokenId, std::int64_t) override { return ++received_ == tokens_; }
  void on_end(generation::SequenceEnd, const std::string&) override { ended_.set_value(); }

 private:
  std::vector<TokenId> prompt_{5, 6};
  int tokens_, received_ = 0;
  std::promise<void> ended_;
};

// Requests one after another take the idle slot used longest ago, as llama-server's do, so each
// finished prompt stays in its slot's cells for a prefix cache instead of the next overwriting it.
TEST(GenerationScheduler, GivesEachRequestTheSlotUsedLongestAgo) {
  ScriptedGenerator generator(3);
  generation::GenerationScheduler scheduler(generator);
  for (int i = 0; i < 5; ++i) {
    std::promise<void> ended;
    auto done = ended.get_future();
    ASSERT_TRUE(scheduler.submit(std::make_unique<CountedSequence>(2, std::move(ended))));
    ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  }
  scheduler.close();
  EXPECT_EQ(generator.start_slots, (std::vector<int>{0, 1, 2, 0, 1}));
}

TEST(GenerationMetrics, DerivesTtftTpotAndRatesFromTokenTimes) {
  std::vector<RequestRecord> requests;
  // Two requests, times in ms: start 0, tokens at 10, 12, 14 (TTFT 10, TPOT 2); start 5, tokens 25, 29 (TTFT 20, TPOT 4).
  auto ns = [](double ms) { return static_cast<std::int64_t>(ms * 1e6); };
  requests.push_back({100, 3, ns(0), {ns(10), ns(12), ns(14)}});
  requests.push_back({200, 2, ns(5), {ns(25), ns(29)}});
  const auto m = summarize_requests(requests, 0.029);
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

// Each request's latencies as its targets judge them: TTFT to the first stamp, end to end to the
// response's end, TPOT over the tokens the server counted (a piece may carry several).
TEST(RequestLatencies, AreWhatTheTargetsJudgeAndTheRecorderCountsGoodputByThem) {
  RequestRecord streamed{10, 5, 100, {130, 150, 170}};
  streamed.done_ns = 200;
  const auto l = latencies_of(streamed);
  EXPECT_EQ(l.ttft_ns, 30);
  EXPECT_EQ(l.e2e_ns, 100);
  ASSERT_TRUE(l.tpot_ns.has_value());
  EXPECT_EQ(*l.tpot_ns, 10);  // 40 ns over 4 tokens after the first, not over 2 gaps between stamps
  const auto one_token = latencies_of(RequestRecord{10, 1, 100, {140}});
  EXPECT_FALSE(one_token.tpot_ns.has_value());
  EXPECT_EQ(one_token.e2e_ns, 40);  // no end recorded: the last token's time

  EXPECT_TRUE(meets(ServiceTargets{}, l));
  EXPECT_TRUE(meets(ServiceTargets{100, 30, 10}, l));
  EXPECT_FALSE(meets(ServiceTargets{99, 0, 0}, l));
  EXPECT_FALSE(meets(ServiceTargets{0, 29, 0}, l));
  EXPECT_FALSE(meets(ServiceTargets{0, 0, 9}, l));
  EXPECT_TRUE(meets(ServiceTargets{0, 0, 1}, one_token));  // no TPOT: cannot miss a TPOT target

  // The recorder's goodput count is the same rule over the same latencies, which the result keeps.
  QueryRecorder recorder(RecorderLimits{0, 1'000'000'000, 0, 1, ServiceTargets{0, 35, 12}});
  const auto record = [&](std::int64_t start, std::vector<std::int64_t> tokens, std::int64_t done, int output_tokens) {
    Completion completion;
    completion.token_ns = std::move(tokens);
    completion.output_tokens = output_tokens;
    recorder.record_query(0, start, done, 0, completion);
  };
  record(100, {130, 150, 170}, 200, 5);  // TTFT 30, TPOT 10: good
  record(100, {140, 150}, 160, 2);       // TTFT 40: late
  record(100, {120, 160}, 170, 2);       // TPOT 40: slow
  record(100, {110}, 300, 1);            // one token: good
  EXPECT_EQ(recorder.met_targets(), 2u);
  const auto latencies = latencies_of(recorder.requests());
  ASSERT_EQ(latencies.size(), 4u);
  EXPECT_EQ(std::count_if(latencies.begin(), latencies.end(),
                          [](const auto& r) {
                            return meets(ServiceTargets{0, 35, 12}, r);
                          }),
            2);
  EXPECT_EQ(latencies[3].e2e_ns, 200);
  // Distributed load sends recorders as JSON: the request's end travels with it.
  const auto back = QueryRecorder::from_json(recorder.to_json());
  EXPECT_EQ(latencies_of(back.requests())[3].e2e_ns, 200);
}

TEST(LengthDistribution, DescribesFixedAndDrawnLengths) {
  EXPECT_EQ((LengthDistribution{512, 0}.describe()), "512");
  EXPECT_EQ((LengthDistribution{512, 64}.describe()), "512 ± 64");
  SeededRandom random(1);
  EXPECT_EQ((LengthDistribution{512, 0}.draw(random, 100)), 100);
}

}  // namespace
}  // namespace infermark::loadgen
