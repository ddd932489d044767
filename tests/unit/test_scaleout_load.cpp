// Distributed load (`mpirun -np N infermark load`): each rank's share of a scenario, its own seed,
// an outcome's trip to rank 0 as JSON, and the exact merge there. The load generator runs on the
// fake system (its own logic only); the MPI side is tests/e2e/scaleout_load_test.py.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "core/error.hpp"
#include "loadgen/rank_outcome.hpp"
#include "loadgen/rank_share.hpp"
#include "unit/fake_system.hpp"

namespace infermark::loadgen {
namespace {

using namespace std::chrono_literals;
using testing::FakeSystem;

ScenarioSpec spec_of(Scenario name) {
  ScenarioSpec spec;
  spec.name = name;
  spec.warmup_queries = 0;
  return spec;
}

TEST(ScaleoutShare, ClosedLoopClientsAndQueriesSplitWithTheRemainderToLowRanks) {
  auto total = spec_of(Scenario::kConcurrency);
  total.concurrency = 5;
  total.max_queries = 101;
  EXPECT_EQ(share_for_rank(total, 0, 2).concurrency, 3);
  EXPECT_EQ(share_for_rank(total, 1, 2).concurrency, 2);
  EXPECT_EQ(share_for_rank(total, 0, 2).max_queries, 51u);
  EXPECT_EQ(share_for_rank(total, 1, 2).max_queries, 50u);
  auto offline = total;
  offline.name = Scenario::kOffline;
  EXPECT_EQ(share_for_rank(offline, 2, 3).concurrency, 1);
  std::uint64_t queries = 0;
  for (int r = 0; r < 3; ++r) queries += share_for_rank(offline, r, 3).max_queries;
  EXPECT_EQ(queries, 101u);
}

TEST(ScaleoutShare, WhatCannotBeSplitIsAClearError) {
  auto single = spec_of(Scenario::kSingleStream);
  try {
    share_for_rank(single, 0, 2);
    FAIL() << "single-stream split over ranks";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--scenario concurrency"), std::string::npos) << e.what();
  }
  auto few = spec_of(Scenario::kConcurrency);
  few.concurrency = 2;
  EXPECT_THROW(share_for_rank(few, 0, 3), Error);
  auto search = spec_of(Scenario::kServer);
  search.find_max_qps = true;
  search.sla_p99_ms = 10;
  EXPECT_THROW(share_for_rank(search, 0, 2), Error);
  auto ramp = spec_of(Scenario::kRamp);  // clients 1, 10, 20...: the first step has one client
  EXPECT_THROW(share_for_rank(ramp, 1, 2), Error);
  ramp.ramp_start = 4;
  ramp.ramp_step = 2;
  EXPECT_NO_THROW(share_for_rank(ramp, 1, 2));
  EXPECT_EQ(ramp_clients_for_rank(5, 0, 2), 3);
  EXPECT_EQ(ramp_clients_for_rank(5, 1, 2), 2);
}

TEST(ScaleoutShare, OpenLoopRatesDivideAndCapacityPatternsKeepTheirShares) {
  auto server = spec_of(Scenario::kServer);
  server.qps = 100;
  server.concurrency = 3;
  EXPECT_DOUBLE_EQ(share_for_rank(server, 3, 4).qps, 25);
  EXPECT_EQ(share_for_rank(server, 3, 4).concurrency, 3);  // in flight is per rank
  auto ramp = spec_of(Scenario::kRamp);
  ramp.ramp_by = RampBy::kRate;
  ramp.ramp_step = 40;
  ramp.ramp_start = 20;
  EXPECT_DOUBLE_EQ(share_for_rank(ramp, 1, 2).ramp_step, 20);
  EXPECT_DOUBLE_EQ(share_for_rank(ramp, 1, 2).ramp_start, 10);
  for (auto name : {Scenario::kSoak, Scenario::kPulse}) {
    auto spec = spec_of(name);
    const auto share = share_for_rank(spec, 1, 2);
    EXPECT_DOUBLE_EQ(share.soak_share, spec.soak_share);
    EXPECT_DOUBLE_EQ(share.pulse_burst_share, spec.pulse_burst_share);
  }
  EXPECT_EQ(share_for_rank(server, 0, 1).qps, 100);  // one rank: the whole
}

TEST(ScaleoutShare, EveryRankDrawsFromItsOwnSeed) {
  EXPECT_EQ(seed_for_rank(42, 0), 42u);
  std::set<std::uint64_t> seeds;
  for (int r = 0; r < 16; ++r) seeds.insert(seed_for_rank(42, r));
  EXPECT_EQ(seeds.size(), 16u);
  auto server = spec_of(Scenario::kServer);
  server.qps = 10;
  EXPECT_NE(share_for_rank(server, 0, 2).seed, share_for_rank(server, 1, 2).seed);
}

ScenarioOutcome server_outcome(std::uint64_t seed, int tokens) {
  FakeSystem system(2, 200us);
  system.tokens = tokens;
  auto spec = spec_of(Scenario::kServer);
  spec.qps = 400;
  spec.duration_s = 0.25;
  spec.concurrency = 2;
  spec.seed = seed;
  return run_scenario(system, spec, 2, nullptr);
}

TEST(ScaleoutOutcome, JsonRoundTripKeepsHistogramsSeriesSamplesAndRequests) {
  const auto outcome = server_outcome(7, 3);
  const auto back = outcome_from_json(nlohmann::json::parse(to_json(outcome).dump()));
  ASSERT_EQ(back.phases.size(), outcome.phases.size());
  const auto& a = outcome.phases[0];
  const auto& b = back.phases[0];
  EXPECT_GT(a.recorder.completed(), 0u);
  EXPECT_EQ(b.recorder.latency().to_json(), a.recorder.latency().to_json());
  EXPECT_EQ(b.recorder.series().to_exact_json(), a.recorder.series().to_exact_json());
  EXPECT_EQ(b.recorder.series().to_json(), a.recorder.series().to_json());
  EXPECT_EQ(b.issue_lateness.to_json(), a.issue_lateness.to_json());
  EXPECT_EQ(b.recorder.samples_ms(), a.recorder.samples_ms());
  EXPECT_EQ(b.recorder.samples_complete(), a.recorder.samples_complete());
  ASSERT_EQ(b.recorder.requests().size(), a.recorder.requests().size());
  EXPECT_EQ(b.recorder.requests().front().token_ns, a.recorder.requests().front().token_ns);
  EXPECT_EQ(b.issued, a.issued);
  EXPECT_EQ(back.headline, outcome.headline);
  EXPECT_EQ(to_json(b), to_json(a));
}

TEST(ScaleoutOutcome, MergeGivesTheSumOfCountsAndThePercentilesOfTheUnion) {
  auto total = spec_of(Scenario::kServer);
  total.qps = 800;
  total.sla_p99_ms = 1000;  // an SLA verdict concluded again from the merged phase
  const auto one = server_outcome(1, 0), two = server_outcome(2, 0);
  const auto merged = merge_rank_outcomes({one, two}, total);
  ASSERT_EQ(merged.phases.size(), 1u);
  const auto& m = merged.phases[0];
  const auto& a = one.phases[0].recorder;
  const auto& b = two.phases[0].recorder;
  EXPECT_EQ(m.recorder.completed(), a.completed() + b.completed());
  EXPECT_EQ(m.issued, one.phases[0].issued + two.phases[0].issued);
  EXPECT_DOUBLE_EQ(m.target_qps, 800);
  EXPECT_EQ(m.issue_lateness.count(), one.phases[0].issue_lateness.count() + two.phases[0].issue_lateness.count());
  auto both = a.latency();
  both.merge(b.latency());
  for (double p : {50.0, 90.0, 99.0, 100.0}) EXPECT_EQ(m.recorder.latency().value_at_percentile(p), both.value_at_percentile(p));
  // Every sample of both ranks kept: exact percentiles stay exact.
  EXPECT_TRUE(m.recorder.samples_complete());
  EXPECT_EQ(m.recorder.samples_ms().size(), a.completed() + b.completed());
  ASSERT_TRUE(merged.analysis.sla);
  EXPECT_EQ(merged.analysis.sla->good_queries, m.recorder.met_targets());
  EXPECT_EQ(merged.parameters["lanes"], 4);
}

TEST(ScaleoutOutcome, ARankThatFailedOrFellBehindMakesTheRunInvalid) {
  auto total = spec_of(Scenario::kServer);
  total.qps = 800;
  total.duration_s = 0.25;  // as server_outcome runs
  RankOutcome good{0, "a", 400, 0, server_outcome(1, 0), "", {}};
  RankOutcome failed{1, "b", 400, 0, std::nullopt, "connection refused", {}};
  auto summary = summarize_ranks({good, good}, total);
  EXPECT_TRUE(summary.valid) << summary.problems;
  EXPECT_EQ(summary.section["per_rank"][1]["completed"], good.outcome->phases[0].recorder.completed());
  summary = summarize_ranks({good, failed}, total);
  EXPECT_FALSE(summary.valid);
  EXPECT_NE(summary.problems.find("rank 1 (b) failed: connection refused"), std::string::npos) << summary.problems;
  // One lane of 2 ms service asked for 2000/s: completes far below its rate.
  FakeSystem slow(1, 2ms);
  auto spec = spec_of(Scenario::kServer);
  spec.qps = 2000;
  spec.duration_s = 0.25;
  spec.concurrency = 1;
  RankOutcome behind{1, "c", 2000, 0, run_scenario(slow, spec, 1, nullptr), "", {}};
  summary = summarize_ranks({good, behind}, total);
  EXPECT_FALSE(summary.valid);
  EXPECT_TRUE(summary.section["per_rank"][1]["fell_behind"].get<bool>());
  EXPECT_NE(summary.problems.find("fell behind"), std::string::npos) << summary.problems;
}

TEST(ScaleoutOutcome, ARankRunsItsShareOfAClientRampAndOfTheSummedCapacity) {
  RankCoordination ranks;  // rank 1 of 2, its peer pretending to measure what it measures
  ranks.rank = 1;
  ranks.ranks = 2;
  int starts = 0;
  ranks.all = [](bool mine) { return mine; };
  ranks.sum = [](double mine) { return 2 * mine; };
  ranks.start_together = [&starts] { ++starts; };
  FakeSystem system(8, 100us);
  auto ramp = spec_of(Scenario::kRamp);
  ramp.ramp_start = 4;
  ramp.ramp_step = 2;
  ramp.ramp_steps = 2;
  ramp.step_duration_s = 0.05;
  const auto out = run_scenario(system, share_for_rank(ramp, 1, 2), 8, nullptr, {}, &ranks);
  ASSERT_EQ(out.phases.size(), 2u);
  EXPECT_EQ(out.phases[0].concurrency, 2);  // 4 clients over 2 ranks
  EXPECT_EQ(out.phases[1].concurrency, 3);  // 6
  EXPECT_EQ(starts, 3);                     // after the warm-up, and before each step
  auto pulse = spec_of(Scenario::kPulse);
  pulse.capacity_probe_s = 0.05;
  pulse.pulse_baseline_s = pulse.pulse_burst_s = pulse.pulse_recovery_s = 0.05;
  pulse.concurrency = 2;
  const auto pulsed = run_scenario(system, share_for_rank(pulse, 1, 2), 8, nullptr, {}, &ranks);
  const double capacity = pulsed.parameters["capacity_qps"];  // the summed probe
  EXPECT_NEAR(pulsed.parameters["schedule"][1]["rate_qps"].get<double>(), pulse.pulse_burst_share * capacity / 2, 1e-6);
}

}  // namespace
}  // namespace infermark::loadgen
