// The load generator's side of the seam: every query carries a sample drawn from the seed by its
// id (the same under any concurrency), latency is kept per sample group, goodput counts queries
// within every target, and streamed tokens give TTFT from the scheduled arrival.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "loadgen/closed_loop.hpp"
#include "loadgen/open_loop.hpp"
#include "loadgen/patterns.hpp"
#include "loadgen/scenario.hpp"
#include "unit/fake_system.hpp"

namespace infermark::loadgen {
namespace {

using namespace std::chrono_literals;
using testing::FakeSystem;

// Eight samples in four groups (two samples each), like input sets of four distinct shapes.
class FourShapes final : public SampleLibrary {
 public:
  std::uint32_t sample_count() const override { return 8; }
  std::uint32_t group_count() const override { return 4; }
  std::uint32_t group_of(std::uint32_t sample) const override { return sample / 2; }
  std::string group_label(std::uint32_t group) const override { return "shape" + std::to_string(group); }
};

ClosedLoopConfig closed(int concurrency, std::uint64_t n, std::uint64_t seed = 7) {
  ClosedLoopConfig c;
  c.concurrency = concurrency;
  c.max_queries = n;
  c.max_duration_s = 60;
  c.seed = seed;
  return c;
}

std::map<std::uint64_t, std::uint32_t> sample_by_id(const FakeSystem& system) {
  std::map<std::uint64_t, std::uint32_t> samples;
  for (const auto& q : system.queries) samples[q.id] = q.sample;
  return samples;
}

TEST(SampleSeam, SampleSequenceIsTheSameUnderAnyConcurrency) {
  FourShapes library;
  FakeSystem one(1, 0us), four(4, 0us);
  one.library_ = &library;
  four.library_ = &library;
  run_closed_loop(one, closed(1, 400));
  run_closed_loop(four, closed(4, 400));
  const auto a = sample_by_id(one), b = sample_by_id(four);
  ASSERT_EQ(a.size(), 400u);
  EXPECT_EQ(a, b);
  for (const auto& [id, sample] : a) EXPECT_EQ(sample, sample_for_query(7, id, 8));
  // Every sample is drawn, roughly evenly (400 draws over 8 samples: 50 each on average).
  std::map<std::uint32_t, int> counts;
  for (const auto& [id, sample] : a) ++counts[sample];
  ASSERT_EQ(counts.size(), 8u);
  for (const auto& [sample, count] : counts) EXPECT_GT(count, 20) << sample;
  // Another seed, another sequence.
  FakeSystem other(1, 0us);
  other.library_ = &library;
  run_closed_loop(other, closed(1, 400, 8));
  EXPECT_NE(sample_by_id(other), a);
}

TEST(SampleSeam, OpenLoopQueriesAreArrivalsInOrder) {
  FourShapes library;
  FakeSystem system(2, 0us);
  system.library_ = &library;
  OpenLoopConfig config;
  config.schedule = {RateSegment{0.3, 500}};
  config.lanes = 2;
  config.seed = 11;
  const auto phase = run_open_loop(system, config);
  const auto samples = sample_by_id(system);
  ASSERT_EQ(samples.size(), phase.issued);  // ids 0 .. issued-1, each once
  EXPECT_EQ(samples.rbegin()->first, phase.issued - 1);
  for (const auto& [id, sample] : samples) EXPECT_EQ(sample, sample_for_query(11, id, 8));
}

TEST(SampleSeam, LatencyIsKeptPerGroupAndShowsTheSlowShape) {
  FourShapes library;
  FakeSystem system(1, 0us);
  system.library_ = &library;
  system.service_by_group = {0us, 0us, 0us, 3ms};  // the largest shape is the cliff
  const auto phase = run_closed_loop(system, closed(1, 200));
  const auto& groups = phase.recorder.latency_by_group();
  ASSERT_EQ(groups.size(), 4u);
  std::uint64_t total = 0;
  for (const auto& g : groups) total += g.count();
  EXPECT_EQ(total, phase.recorder.completed());
  for (int g = 0; g < 3; ++g) EXPECT_LT(groups[g].value_at_percentile(50), groups[3].value_at_percentile(50)) << g;
  EXPECT_GE(groups[3].value_at_percentile(50), 3'000'000);
  const auto json = latency_by_group_json(phase.recorder, {"shape0", "shape1", "shape2", "shape3"});
  ASSERT_EQ(json.size(), 4u);
  EXPECT_EQ(json[3]["group"], "shape3");
  EXPECT_GE(json[3]["p99"].get<double>(), 3.0);
}

TEST(SampleSeam, GoodputCountsOnlyQueriesWithinTheTarget) {
  FakeSystem system(1, 0us);
  system.stall_at = 4;
  system.stall = 20ms;
  auto config = closed(1, 10);
  config.targets.e2e_ns = 10'000'000;  // 10 ms: only the stalled query misses
  const auto phase = run_closed_loop(system, config);
  EXPECT_EQ(phase.recorder.completed(), 10u);
  EXPECT_EQ(phase.recorder.met_targets(), 9u);
}

TEST(SampleSeam, StreamedTokensGiveTtftFromTheScheduledArrival) {
  // One lane, 2 ms to the first token then 4 more tokens 1 ms apart (6 ms per request), at 250/s:
  // the lane is 150% busy, so requests queue and TTFT, measured from the scheduled arrival, grows
  // far beyond the 2 ms a closed loop sees.
  FakeSystem open_system(1, 2ms), closed_system(1, 2ms);
  for (auto* s : {&open_system, &closed_system}) {
    s->tokens = 5;
    s->token_gap = 1ms;
  }
  const auto closed_phase = run_closed_loop(closed_system, closed(1, 20));
  OpenLoopConfig config;
  config.schedule = {RateSegment{0.4, 250}};
  config.arrivals = Arrivals::kConstant;
  config.lanes = 1;
  const auto open_phase = run_open_loop(open_system, config);
  ASSERT_EQ(closed_phase.recorder.requests().size(), 20u);
  for (const auto& r : closed_phase.recorder.requests()) {
    EXPECT_EQ(r.output_tokens, 5);
    EXPECT_EQ(r.token_ns.size(), 5u);
  }
  const double closed_ttft = streamed_p99(closed_phase).ttft_ms, open_ttft = streamed_p99(open_phase).ttft_ms;
  EXPECT_GE(closed_ttft, 2.0);
  EXPECT_GT(open_ttft, 5 * closed_ttft) << "queueing for the lane must show in TTFT";
  EXPECT_GE(streamed_p99(closed_phase).tpot_ms, 1.0);
  // SLO verdicts on TTFT: the closed loop meets a 50 ms TTFT target, the overloaded open loop not.
  EXPECT_TRUE(meets_slo(closed_phase, SloLimits{0, 50, 0}));
  EXPECT_FALSE(meets_slo(open_phase, SloLimits{0, 50, 0}));
  const auto json = phase_json(open_phase);
  ASSERT_TRUE(json.contains("generation")) << json.dump();
  EXPECT_GT(json["generation"]["ttft_ms"]["p99"].get<double>(), 10.0);
}

TEST(SampleSeam, ScenarioTableDrivesNamesLanesAndDurations) {
  std::vector<std::string> names;
  for (const auto& row : scenario_table()) names.push_back(std::string(row.name));
  EXPECT_EQ(names, (std::vector<std::string>{"single-stream", "concurrency", "offline", "server", "interactive", "ramp", "soak",
                                             "pulse", "replay"}));
  for (const auto& row : scenario_table()) EXPECT_EQ(parse_scenario(std::string(row.name)), row.scenario);
  EXPECT_EQ(parse_scenario("generation"), Scenario::kConcurrency);  // results written before LLMs ran every scenario
  EXPECT_EQ(parse_ramp_by("rate"), RampBy::kRate);
  EXPECT_THROW(parse_ramp_by("clients"), Error);
  ScenarioSpec spec;
  spec.name = Scenario::kRamp;
  spec.ramp_step = 4;
  spec.ramp_steps = 3;
  EXPECT_EQ(lanes_needed(spec, 2), 8);  // 1, 4, 8 clients
  spec.ramp_by = RampBy::kRate;
  EXPECT_EQ(lanes_needed(spec, 2), 2);
  EXPECT_TRUE(is_open_loop(spec));
  spec.name = Scenario::kSingleStream;
  EXPECT_EQ(lanes_needed(spec, 16), 1);
  EXPECT_FALSE(is_open_loop(spec));
}

TEST(SampleSeam, FindMaxQpsHonoursATtftSlo) {
  FakeSystem system(2, 4ms);  // two lanes, 4 ms to the first token, 2 tokens
  system.tokens = 2;
  system.token_gap = 1ms;
  OpenLoopConfig trial;
  trial.schedule = {RateSegment{0.4, 100}};
  trial.lanes = 2;
  const auto search = find_max_qps(system, trial, SloLimits{0, 30, 0}, 1500, 6, nullptr);
  EXPECT_GT(search.best_qps, 0.0);
  EXPECT_LT(search.best_qps, 1500.0);  // two lanes of 5 ms cannot take 1500/s within a 30 ms TTFT
  for (const auto& t : search.trials) {
    if (t.target_qps == search.best_qps) {
      EXPECT_LE(streamed_p99(t).ttft_ms, 30.0);
    }
  }
}

}  // namespace
}  // namespace infermark::loadgen
