// Load generator logic on a fake system with controlled service times. No absolute timing is
// asserted: only counts, ratios and relations between scenarios.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "loadgen/closed_loop.hpp"
#include "loadgen/open_loop.hpp"
#include "loadgen/patterns.hpp"
#include "loadgen/scenario.hpp"
#include "unit/fake_async_system.hpp"
#include "unit/fake_system.hpp"

namespace infermark::loadgen {
namespace {

using namespace std::chrono_literals;
using testing::FakeAsyncSystem;
using testing::FakeSystem;

ClosedLoopConfig queries(int concurrency, std::uint64_t n) {
  ClosedLoopConfig c;
  c.concurrency = concurrency;
  c.max_queries = n;
  c.max_duration_s = 60;
  return c;
}

OpenLoopConfig open_loop(double rate, double seconds, Arrivals arrivals, int lanes) {
  OpenLoopConfig c;
  c.schedule = {RateSegment{seconds, rate}};
  c.arrivals = arrivals;
  c.lanes = lanes;
  return c;
}

double coefficient_of_variation(const std::vector<std::int64_t>& times) {
  std::vector<double> gaps;
  for (std::size_t i = 1; i < times.size(); ++i) gaps.push_back(static_cast<double>(times[i] - times[i - 1]));
  const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size());
  double var = 0;
  for (double g : gaps) var += (g - mean) * (g - mean);
  return std::sqrt(var / static_cast<double>(gaps.size())) / mean;
}

// A phase whose completions are spread over `seconds`, each with latency `latency_ns`.
Phase synthetic_phase(double qps, double seconds, std::int64_t latency_ns) {
  Phase p(RecorderLimits{1'000'000'000, static_cast<std::int64_t>(seconds * 1e9) + 1'000'000'000, 0, 1, {}});
  const auto n = static_cast<int>(qps * seconds);
  for (int i = 0; i < n; ++i) p.recorder.record(static_cast<std::int64_t>(i * 1e9 / qps), latency_ns);
  p.duration_s = seconds;
  return p;
}

}  // namespace

TEST(ClosedLoop, RunsExactlyTheRequestedQueries) {
  FakeSystem one(1, 0us), four(4, 0us);
  const auto single = run_closed_loop(one, queries(1, 37));
  EXPECT_EQ(single.recorder.completed(), 37u);
  EXPECT_EQ(one.issued.load(), 37);
  const auto parallel = run_closed_loop(four, queries(4, 101));
  EXPECT_EQ(parallel.recorder.completed(), 101u);  // exact even with 4 clients racing
  EXPECT_TRUE(parallel.recorder.samples_complete());
  EXPECT_EQ(parallel.recorder.samples_ms().size(), 101u);
}

TEST(ClosedLoop, DurationCapEndsARunWithoutACount) {
  FakeSystem system(2, 1ms);
  ClosedLoopConfig c;
  c.concurrency = 2;
  c.max_queries = 0;
  c.max_duration_s = 0.2;
  const auto phase = run_closed_loop(system, c);
  EXPECT_GT(phase.recorder.completed(), 0u);
  EXPECT_TRUE(phase.minimums_met);
}

TEST(ClosedLoop, FailedQueriesAreCountedNotThrown) {
  FakeSystem system(1, 0us);
  system.fail_every = 5;
  const auto phase = run_closed_loop(system, queries(1, 50));
  EXPECT_EQ(phase.recorder.errors(), 10u);
  EXPECT_EQ(phase.recorder.completed(), 40u);
}

TEST(ClosedLoop, RejectsMoreClientsThanLanes) {
  FakeSystem system(2, 0us);
  EXPECT_THROW(run_closed_loop(system, queries(3, 10)), Error);
}

TEST(OpenLoop, ConstantArrivalsIssueRateTimesDuration) {
  FakeSystem system(2, 0us);
  const auto phase = run_open_loop(system, open_loop(500, 0.4, Arrivals::kConstant, 2));
  EXPECT_NEAR(static_cast<double>(phase.issued), 200.0, 1.0);
  EXPECT_EQ(phase.recorder.completed(), phase.issued);
  EXPECT_LT(coefficient_of_variation(system.issue_times_ns), 0.5);
}

// Sleep-only pacing issues the same schedule (each arrival at or after its time, latency from the
// scheduled arrival); only how close to its time an arrival leaves differs, which tests cannot time.
TEST(OpenLoop, SleepPacingIssuesTheSameArrivals) {
  FakeSystem system(2, 0us);
  auto config = open_loop(500, 0.4, Arrivals::kConstant, 2);
  config.pacing = Pacing::kSleep;
  const auto phase = run_open_loop(system, config);
  EXPECT_NEAR(static_cast<double>(phase.issued), 200.0, 1.0);
  EXPECT_EQ(phase.recorder.completed(), phase.issued);
  EXPECT_GE(phase.issue_lateness.min(), 0);
  EXPECT_EQ(parse_pacing("sleep"), Pacing::kSleep);
  EXPECT_EQ(name_of(Pacing::kSpin), "spin");
  EXPECT_THROW(parse_pacing("busy", "--pacing"), Error);
}

TEST(OpenLoop, PoissonArrivalsHaveTheRateAndExponentialGaps) {
  FakeSystem system(2, 0us);
  const auto phase = run_open_loop(system, open_loop(1000, 1.0, Arrivals::kPoisson, 2));
  // Poisson count: mean 1000, sd ~32; 5 sd either side.
  EXPECT_NEAR(static_cast<double>(phase.issued), 1000.0, 160.0);
  // Exponential gaps have a coefficient of variation of 1; constant ones of 0.
  EXPECT_GT(coefficient_of_variation(system.issue_times_ns), 0.7);
}

// Arrivals due within microseconds of each other are queued first and woken for together; every
// one must still reach a lane, on all lanes.
TEST(OpenLoop, BackToBackArrivalsAreAllServed) {
  FakeSystem system(3, 0us);
  auto config = open_loop(50'000, 0.3, Arrivals::kPoisson, 3);
  config.max_queue = 1'000'000;
  const auto phase = run_open_loop(system, config);
  EXPECT_NEAR(static_cast<double>(phase.issued), 15'000.0, 1'000.0);
  EXPECT_EQ(phase.recorder.completed(), phase.issued);
  EXPECT_EQ(phase.recorder.errors() + phase.recorder.rejected(), 0u);
}

TEST(OpenLoop, SameSeedSameSchedule) {
  FakeSystem a(1, 0us), b(1, 0us);
  EXPECT_EQ(run_open_loop(a, open_loop(400, 0.3, Arrivals::kPoisson, 1)).issued,
            run_open_loop(b, open_loop(400, 0.3, Arrivals::kPoisson, 1)).issued);
}

// The coordinated-omission case: one long stall. A closed loop waits for it and issues nothing
// meanwhile, so only one sample is slow; an open loop keeps scheduling arrivals, which queue
// behind the stall and show it in the tail.
TEST(OpenLoop, AStallShowsInOpenLoopP99ButHidesInClosedLoop) {
  FakeSystem closed_system(1, 1ms), open_system(1, 1ms);
  closed_system.stall_at = open_system.stall_at = 50;
  closed_system.stall = open_system.stall = 200ms;
  const auto closed = run_closed_loop(closed_system, queries(1, 300));
  const auto open = run_open_loop(open_system, open_loop(200, 1.5, Arrivals::kConstant, 1));
  EXPECT_GT(p99_ms(open), 10 * p99_ms(closed)) << "open " << p99_ms(open) << " ms, closed " << p99_ms(closed) << " ms";
}

TEST(OpenLoop, AFullQueueRejectsArrivals) {
  FakeSystem system(1, 20ms);
  auto config = open_loop(500, 0.3, Arrivals::kConstant, 1);
  config.max_queue = 5;
  const auto phase = run_open_loop(system, config);
  EXPECT_GT(phase.recorder.rejected(), 0u);
  EXPECT_EQ(phase.recorder.completed() + phase.recorder.rejected() + phase.recorder.errors(), phase.issued);
}

TEST(AsyncSystem, ClosedLoopKeepsConcurrencyQueriesInFlightWithoutAThreadEach) {
  FakeAsyncSystem system(64, 2ms);
  system.fail_every = 10;
  const auto phase = run_closed_loop(system, queries(32, 640));
  EXPECT_EQ(system.started.load(), 640);
  EXPECT_EQ(phase.recorder.completed(), 576u);  // every tenth fails
  EXPECT_EQ(phase.recorder.errors(), 64u);
  EXPECT_EQ(phase.issued, 640u);
  EXPECT_LE(system.max_in_flight, 32);
  EXPECT_GT(system.max_in_flight, 1);  // the clients overlap: one thread started them all
}

TEST(AsyncSystem, OpenLoopQueuesBeyondTheLanesAndTimesFromTheScheduledArrival) {
  // 2 in flight, 10 ms each: at most ~200 queries/s, so 400 arrivals/s queue up and wait.
  FakeAsyncSystem system(2, 10ms);
  auto config = open_loop(400, 0.5, Arrivals::kConstant, 2);
  config.max_queue = 40;
  const auto phase = run_open_loop(system, config);
  EXPECT_LE(system.max_in_flight, 2);
  EXPECT_GT(phase.recorder.rejected(), 0u);
  EXPECT_EQ(phase.recorder.completed() + phase.recorder.rejected() + phase.recorder.errors(), phase.issued);
  // Queued arrivals waited: their latency, from the scheduled arrival, far exceeds the service time.
  EXPECT_GT(p99_ms(phase), 5 * 10.0);
}

TEST(AsyncSystem, AStallShowsInOpenLoopP99) {
  FakeAsyncSystem steady(1, 1ms), stalled(1, 1ms);
  stalled.stall_at = 50;
  stalled.stall = 200ms;
  const auto calm = run_open_loop(steady, open_loop(200, 1.5, Arrivals::kConstant, 1));
  const auto hit = run_open_loop(stalled, open_loop(200, 1.5, Arrivals::kConstant, 1));
  EXPECT_GT(p99_ms(hit), 10 * p99_ms(calm)) << "stalled " << p99_ms(hit) << " ms, steady " << p99_ms(calm) << " ms";
}

TEST(OpenLoop, ImpossibleConfigsAreErrors) {
  FakeSystem system(1, 0us);
  EXPECT_THROW(run_open_loop(system, open_loop(-1, 1, Arrivals::kPoisson, 1)), Error);
  EXPECT_THROW(run_open_loop(system, open_loop(10, 0, Arrivals::kPoisson, 1)), Error);
  EXPECT_THROW(run_open_loop(system, open_loop(10, 1, Arrivals::kPoisson, 2)), Error);
}

TEST(Ramp, FindsAPlantedKnee) {
  // Three servers of 10 ms each: throughput rises with clients up to 3, then stays flat. The
  // expected gains are +100%, +50%, then 0, so a 10% rule separates them even on a busy machine.
  FakeSystem system(6, 10ms, 3);
  RampConfig ramp;
  ramp.start = 1;
  ramp.step = 1;
  ramp.steps = 6;
  ramp.step_duration_s = 0.5;
  const auto steps = run_ramp(system, ramp, nullptr);
  ASSERT_EQ(steps.size(), 6u);
  const auto knee = find_knee(steps, SloLimits{}, 0.10);
  ASSERT_TRUE(knee.step.has_value()) << knee.reason;
  EXPECT_EQ(steps[*knee.step].concurrency, 4) << knee.reason;
}

// A request-rate sweep: rates of 100, 600, 1100... queries/s against a planted capacity of 500/s
// (less where sleeps overshoot) stop at the first step that could not keep up, and only there.
TEST(Ramp, ARateSweepStopsAtTheFirstSaturatedStep) {
  FakeSystem system(8, 4ms, 2);  // 2 servers x 4 ms
  RampConfig ramp;
  ramp.by_rate = true;
  ramp.start = 100;
  ramp.step = 500;
  ramp.steps = 8;
  ramp.step_duration_s = 0.5;
  ramp.open_loop = open_loop(0, 0, Arrivals::kConstant, 8);
  ramp.until_saturation = true;
  const auto steps = run_ramp(system, ramp, nullptr);
  ASSERT_EQ(steps.size(), 2u) << "the 600/s step is past the capacity";
  EXPECT_FALSE(saturation_of(steps[0])) << *saturation_of(steps[0]);
  const auto why = saturation_of(steps[1]);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("600.00/s asked"), std::string::npos) << *why;
  ramp.until_saturation = false;
  ramp.steps = 3;
  EXPECT_EQ(run_ramp(system, ramp, nullptr).size(), 3u);  // without the flag every step runs
}

TEST(Ramp, KneeRulesOnSyntheticSteps) {
  std::vector<Phase> steps;
  steps.push_back(synthetic_phase(100, 2, 1'000'000));
  steps.push_back(synthetic_phase(190, 2, 2'000'000));
  steps.push_back(synthetic_phase(260, 2, 30'000'000));          // throughput still rising, but P99 30 ms
  EXPECT_EQ(find_knee(steps, SloLimits{10}).step, 2u);           // the SLA binds first
  EXPECT_FALSE(find_knee(steps, SloLimits{}).step.has_value());  // without an SLA: no knee yet
  EXPECT_EQ(ramp_levels(RampConfig{}),
            (std::vector<double>{1, 10, 20, 30, 40}));  // +10 per step, as the panoramic-analysis guide
}

TEST(FindMaxQps, StaysWithinThePlantedCapacity) {
  FakeSystem system(4, 4ms, 2);  // capacity: 2 servers / 4 ms = 500 queries/s
  auto trial = open_loop(100, 0.5, Arrivals::kPoisson, 4);
  const auto search = find_max_qps(system, trial, SloLimits{40}, 1000, 6, nullptr);
  EXPECT_GT(search.best_qps, 0.0);
  EXPECT_LE(search.best_qps, 550.0);
  EXPECT_EQ(search.trials.size(), 6u);
}

TEST(Soak, FlagsAPlantedLeakAndNotAFlatRun) {
  const auto phase = synthetic_phase(100, 60, 2'000'000);
  std::vector<TimedValue> leaking, flat;
  for (int i = 0; i < 60; ++i) {
    const double noise = (i % 2 ? 0.5 : -0.5);
    leaking.push_back({static_cast<double>(i), 200 + 1.0 * i + noise});  // +1 MB/s
    flat.push_back({static_cast<double>(i), 200 + noise});
  }
  const auto leak = analyse_soak(phase, leaking);
  EXPECT_TRUE(leak.leak_suspected()) << to_json({.soak = leak}).dump();
  ASSERT_TRUE(leak.memory.fit.has_value());
  EXPECT_NEAR(leak.memory.fit->slope_per_min, 60.0, 1.0);
  const auto stable = analyse_soak(phase, flat);
  EXPECT_FALSE(stable.leak_suspected()) << to_json({.soak = stable}).dump();
  EXPECT_FALSE(stable.latency_drift()) << to_json({.soak = stable}).dump();
  EXPECT_EQ(stable.verdict(), "stable");
}

TEST(Pulse, MeasuresPeakAndRecovery) {
  // 10 s at 1 ms, a 5 s burst at 40 ms, 3 s of backlog at 20 ms, then back to 1 ms.
  Phase phase(RecorderLimits{500'000'000, 40'000'000'000, 0, 1, {}});
  for (int ms = 0; ms < 30'000; ms += 10) {
    const double t = ms / 1000.0;
    const std::int64_t latency = t < 10 ? 1'000'000 : t < 15 ? 40'000'000 : t < 18 ? 20'000'000 : 1'000'000;
    phase.recorder.record(static_cast<std::int64_t>(ms) * 1'000'000, latency);
  }
  const auto pulse = analyse_pulse(phase, {{10, 50}, {5, 200}, {15, 50}});
  EXPECT_NEAR(pulse.baseline_p99_ms, 1.0, 0.05);
  EXPECT_NEAR(pulse.peak_p99_ms, 40.0, 1.0);
  ASSERT_TRUE(pulse.recovered());
  EXPECT_NEAR(*pulse.time_to_recover_s, 3.0, 0.51);
}

TEST(Scenario, ValidationNamesTheFlag) {
  const auto message = [](ScenarioSpec s) {
    try {
      validate(s);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  ScenarioSpec server;
  server.name = Scenario::kServer;
  EXPECT_NE(message(server).find("--qps"), std::string::npos);
  ScenarioSpec sla;
  sla.sla_p99_ms = -1;
  EXPECT_NE(message(sla).find("--p99-ms"), std::string::npos);
  ScenarioSpec find;
  find.name = Scenario::kServer;
  find.find_max_qps = true;
  EXPECT_NE(message(find).find("--p99-ms"), std::string::npos);
  ScenarioSpec concurrency;
  concurrency.name = Scenario::kConcurrency;
  EXPECT_NE(message(concurrency).find("--concurrency"), std::string::npos);
  try {
    parse_scenario("burst");
    ADD_FAILURE() << "an unknown scenario parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--scenario burst: unknown (expected single-stream, concurrency"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(message(ScenarioSpec{}), "");
}

TEST(Scenario, RunsEachScenarioOnAFakeSystem) {
  FakeSystem system(4, 1ms);
  for (const std::string name : {"single-stream", "concurrency", "offline", "server"}) {
    ScenarioSpec spec;
    spec.name = parse_scenario(name);
    spec.concurrency = name == "single-stream" ? 0 : 2;
    spec.max_queries = 40;
    spec.qps = 200;
    spec.duration_s = 0.3;
    spec.sla_p99_ms = 100;
    const auto outcome = run_scenario(system, spec, 2, nullptr);
    ASSERT_EQ(outcome.phases.size(), 1u) << name;
    EXPECT_GT(outcome.phases[0].recorder.completed(), 0u) << name;
    if (name == "server") {
      ASSERT_TRUE(outcome.analysis.sla.has_value());
      EXPECT_TRUE(outcome.analysis.sla->passed) << to_json(outcome.analysis).dump();
    }
  }
}

}  // namespace infermark::loadgen

namespace infermark::loadgen {

TEST(LiveStats, CountsAndApproximatesP99) {
  LiveStats live;
  EXPECT_EQ(live.p99_ms(), 0.0);
  for (int i = 1; i <= 1000; ++i) live.record(static_cast<std::int64_t>(i) * 1'000'000);  // 1..1000 ms
  EXPECT_EQ(live.completed(), 1000u);
  EXPECT_GE(live.p99_ms(), 990.0);         // the bucket's upper edge is never below the true P99
  EXPECT_LE(live.p99_ms(), 990.0 * 1.19);  // buckets are 2^(1/4) wide
  live.reset();
  EXPECT_EQ(live.completed(), 0u);
}

}  // namespace infermark::loadgen
