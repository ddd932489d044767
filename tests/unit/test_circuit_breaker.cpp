// The pipeline's circuit breaker and the figures a pipeline run reports.
#include <gtest/gtest.h>

#include "core/circuit_breaker.hpp"
#include "pipeline/pipeline_report.hpp"
#include "result/result_sections.hpp"

namespace infermark::pipeline {
namespace {
constexpr std::int64_t kMs = 1'000'000;
}

TEST(CircuitBreaker, OpensAfterConsecutiveTimeoutsOnly) {
  CircuitBreaker breaker({3, 100});
  breaker.record(true, 1 * kMs);
  breaker.record(true, 2 * kMs);
  breaker.record(false, 3 * kMs);  // a success resets the count
  breaker.record(true, 4 * kMs);
  breaker.record(true, 5 * kMs);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
  EXPECT_TRUE(breaker.admit(5 * kMs));
  breaker.record(true, 6 * kMs);
  EXPECT_EQ(breaker.state(), BreakerState::kOpen);
  EXPECT_EQ(breaker.times_opened(), 1);
  EXPECT_FALSE(breaker.admit(7 * kMs));
  EXPECT_FALSE(breaker.admit(50 * kMs));
  EXPECT_EQ(breaker.rejected(), 2);
}

TEST(CircuitBreaker, AfterTheCooldownOneTrialDecides) {
  CircuitBreaker breaker({1, 100});
  breaker.record(true, 0);
  ASSERT_EQ(breaker.state(), BreakerState::kOpen);
  EXPECT_TRUE(breaker.admit(100 * kMs));  // cooldown over: the trial
  EXPECT_EQ(breaker.state(), BreakerState::kHalfOpen);
  EXPECT_FALSE(breaker.admit(101 * kMs));  // one trial at a time
  breaker.record(true, 150 * kMs);         // the trial timed out: open again
  EXPECT_EQ(breaker.state(), BreakerState::kOpen);
  EXPECT_EQ(breaker.times_opened(), 2);
  EXPECT_FALSE(breaker.admit(200 * kMs));
  EXPECT_TRUE(breaker.admit(250 * kMs));
  breaker.record(false, 260 * kMs);  // the trial succeeded: closed
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
  EXPECT_TRUE(breaker.admit(261 * kMs));
  const auto record = result::breaker_record_of(breaker, 0);
  EXPECT_EQ(record.times_opened, 2u);
  EXPECT_EQ(record.rejected, 2u);
  ASSERT_EQ(record.events.size(), 5u);  // open, half-open, open, half-open, closed
  EXPECT_EQ(record.events[4].state, BreakerState::kClosed);
  EXPECT_DOUBLE_EQ(record.events[4].at_ms, 260.0);
  // Written as the result file has it.
  const auto json = result::to_json(record);
  EXPECT_EQ(json["events"][4]["state"], "closed");
  EXPECT_EQ(json["final_state"], "closed");
}

TEST(CircuitBreaker, ATrialThatNeverRanDecidesNothing) {
  CircuitBreaker breaker({1, 100});
  breaker.record(true, 0);
  ASSERT_TRUE(breaker.admit(100 * kMs));                // the trial is admitted...
  breaker.release();                                    // ...but refused further on (a full queue)
  EXPECT_EQ(breaker.state(), BreakerState::kHalfOpen);  // not closed by a request that never ran
  EXPECT_TRUE(breaker.admit(101 * kMs));                // the next request is the trial
  breaker.record(false, 110 * kMs);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
}

TEST(CircuitBreaker, WithoutATripCountItNeverOpens) {
  CircuitBreaker breaker({0, 100});
  for (int i = 0; i < 50; ++i) breaker.record(true, i * kMs);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
  EXPECT_TRUE(breaker.admit(60 * kMs));
  EXPECT_EQ(breaker.rejected(), 0);
}

namespace {

// A request that spent `stage_ms[k]` in stage k, waiting `wait_ms` before each later stage.
RequestRecord record(std::uint64_t id, std::int64_t start_ms, const std::vector<std::int64_t>& stage_ms, std::int64_t wait_ms,
                     int dropped_at = -1) {
  RequestRecord r;
  r.request = id;
  r.admitted_ns = start_ms * kMs;
  std::int64_t t = r.admitted_ns;
  const auto ran = dropped_at < 0 ? stage_ms.size() : static_cast<std::size_t>(dropped_at);
  for (std::size_t k = 0; k < stage_ms.size(); ++k) {
    if (k > 0) t += wait_ms * kMs;
    r.stamps[k].received_ns = t;
    if (k >= ran) break;
    r.stamps[k].started_ns = t;
    t += stage_ms[k] * kMs;
    r.stamps[k].finished_ns = t;
    r.stamps[k].sent_ns = t;
  }
  r.dropped_at_stage = dropped_at;
  r.timed_out = dropped_at >= 0;
  r.completed_ns = t;
  return r;
}

}  // namespace

TEST(PipelineFigures, CountsRequestsAndTimesEachStage) {
  ModeOutcome outcome;
  outcome.mode = PipelineMode::kThreads;
  outcome.records = {record(0, 0, {10, 30}, 2), record(1, 10, {10, 30}, 4), record(2, 20, {10, 30}, 0, 1)};
  outcome.breaker = result::BreakerRecord{};
  outcome.breaker->rejected = 3;
  const auto f = figures_of(outcome, 2);
  EXPECT_EQ(f.admitted, 3);
  EXPECT_EQ(f.completed, 2);
  EXPECT_EQ(f.dropped, 1);
  EXPECT_EQ(f.rejected, 3);
  EXPECT_EQ(f.stages[0].processed, 3);
  EXPECT_EQ(f.stages[1].processed, 2);
  EXPECT_EQ(f.stages[1].dropped_here, 1);
  EXPECT_DOUBLE_EQ(f.stages[1].service_ms->mean, 30.0);
  EXPECT_DOUBLE_EQ(f.stages[1].queue_wait_ms->mean, 3.0);
  EXPECT_FALSE(f.stages[0].queue_wait_ms.has_value());  // the clock starts when stage 1 takes a request
  EXPECT_DOUBLE_EQ(f.latency_ms->max, 44.0);
  EXPECT_DOUBLE_EQ(f.wall_s, 0.054);  // first admission (0 ms) to last completion (request 1 at 54 ms)
}

TEST(PipelineFigures, PredictsFromTheSerialStageTimes) {
  ModeOutcome serial, threads;
  serial.mode = PipelineMode::kSerial;
  threads.mode = PipelineMode::kThreads;
  for (std::uint64_t i = 0; i < 4; ++i) {
    serial.records.push_back(record(i, static_cast<std::int64_t>(i) * 40, {10, 30}, 0));
    threads.records.push_back(record(i, static_cast<std::int64_t>(i) * 30, {12, 30}, 1));
  }
  Tensor out{"logits", DType::kFloat32, {2}, std::vector<std::byte>(8)};
  serial.last_outputs = {out};
  out.as<float>()[1] = 0.25f;
  threads.last_outputs = {out};
  std::vector<ModeOutcome> outcomes{serial, threads};
  std::vector<ModeFigures> figures{figures_of(serial, 2), figures_of(threads, 2)};
  compare_modes(figures, outcomes);
  EXPECT_EQ(figures[1].predicted_from, PipelineMode::kSerial);
  EXPECT_DOUBLE_EQ(figures[0].predicted_latency_ms, 40.0);   // det + rec
  EXPECT_DOUBLE_EQ(figures[0].predicted_qps, 25.0);          // 1 / (det + rec)
  EXPECT_NEAR(figures[1].predicted_qps, 1000.0 / 30, 1e-9);  // 1 / max(det, rec)
  EXPECT_FALSE(figures[0].max_abs_diff_vs_serial.has_value());
  ASSERT_TRUE(figures[1].max_abs_diff_vs_serial.has_value());
  EXPECT_DOUBLE_EQ(*figures[1].max_abs_diff_vs_serial, 0.25);
}

}  // namespace infermark::pipeline
