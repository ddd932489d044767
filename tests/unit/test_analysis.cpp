#include <gtest/gtest.h>

#include "loadgen/analysis.hpp"

namespace infermark::loadgen {
namespace {

using nlohmann::json;

// Through JSON and back; the copy must write the same JSON as the original.
Analysis round_trip(const Analysis& analysis) {
  const auto j = to_json(analysis);
  auto back = analysis_from(j);
  EXPECT_EQ(to_json(back), j);
  return back;
}

TrendVerdict rising_trend() { return {TrendFinding::kRising, 60, TrendFit{60.0, {55.0, 65.0}, 59.0, 12.5, "MB", 0.98}}; }

}  // namespace

TEST(Analysis, NothingConcludedIsAnEmptyObject) {
  EXPECT_EQ(to_json(Analysis{}), json::object());
  const auto back = analysis_from(json::object());
  EXPECT_FALSE(back.sla || back.search || back.ramp || back.pulse || back.soak);
  EXPECT_FALSE(analysis_from(json(nullptr)).sla.has_value());
}

TEST(Analysis, SlaVerdictRoundTrips) {
  SlaVerdict sla;
  sla.p99_ms_target = 50.0;
  sla.p99_ms = 42.5;
  sla.passed = true;
  sla.queries_needed_for_p99_claim = 459;
  sla.errors = 1;
  sla.rejected = 2;
  sla.goodput_qps = 180.5;
  sla.good_queries = 361;
  sla.queries_over_target = 3;
  sla.claimable_percentile_at_target = 98.7;
  sla.tpot = SloCheck{20.0, 12.25};
  const auto back = round_trip({.sla = sla});
  ASSERT_TRUE(back.sla.has_value());
  EXPECT_EQ(back.sla->p99_ms_target, 50.0);
  EXPECT_EQ(back.sla->p99_ms, 42.5);
  EXPECT_TRUE(back.sla->passed);
  EXPECT_EQ(back.sla->errors, 1u);
  EXPECT_EQ(back.sla->rejected, 2u);
  EXPECT_EQ(back.sla->goodput_qps, 180.5);
  EXPECT_EQ(back.sla->good_queries, 361u);
  EXPECT_EQ(back.sla->queries_over_target, 3u);
  EXPECT_EQ(back.sla->claimable_percentile_at_target, 98.7);
  EXPECT_FALSE(back.sla->ttft.has_value());
  ASSERT_TRUE(back.sla->tpot.has_value());
  EXPECT_EQ(back.sla->tpot->p99_ms_target, 20.0);
  EXPECT_EQ(back.sla->tpot->p99_ms, 12.25);
  EXPECT_FALSE(back.search || back.ramp || back.pulse || back.soak);
}

TEST(Analysis, MaxQpsSearchRoundTrips) {
  MaxQpsSearchResult search;
  search.max_qps_within_sla = 300;
  search.trials = {{600, 410.5, 95.0, false, 200.0, std::nullopt, std::nullopt}, {300, 299.5, 20.0, true, 299.5, 80.0, 9.5}};
  search.goodput_qps_at_max = 299.5;
  const auto j = to_json({.search = search});
  EXPECT_EQ(j["max_qps_within_sla"], 300.0);
  EXPECT_FALSE(j["search"][0].contains("ttft_p99_ms"));
  const auto back = round_trip({.search = search});
  ASSERT_TRUE(back.search.has_value());
  EXPECT_EQ(back.search->max_qps_within_sla, 300.0);
  ASSERT_EQ(back.search->trials.size(), 2u);
  EXPECT_FALSE(back.search->trials[0].passed);
  EXPECT_FALSE(back.search->trials[0].ttft_p99_ms.has_value());
  EXPECT_TRUE(back.search->trials[1].passed);
  EXPECT_EQ(back.search->trials[1].achieved_qps, 299.5);
  EXPECT_EQ(back.search->trials[1].tpot_p99_ms, 9.5);
  EXPECT_EQ(back.search->goodput_qps_at_max, 299.5);
  EXPECT_FALSE(back.ramp.has_value());  // "search" is not a ramp's "steps"
}

TEST(Analysis, RampRoundTripsWithAndWithoutAKnee) {
  RampAnalysis ramp;
  ramp.ramp_by = RampBy::kRate;
  ramp.summary_step = 1;
  ramp.steps = {{"rate 10/s", 10.0, 5.0, 40.0, 4.0}, {"rate 20/s", 19.9, 6.0, 45.0, 4.5}, {"rate 30/s", 20.1, 90.0, 400.0, 9.0}};
  ramp.knee_step = 2;
  ramp.knee_reason = "throughput changed +1.0% over the previous step (a rise below 5%)";
  const auto j = to_json({.ramp = ramp});
  EXPECT_EQ(j["knee_label"], "rate 30/s");
  EXPECT_EQ(j["ramp_by"], "rate");
  const auto back = round_trip({.ramp = ramp});
  ASSERT_TRUE(back.ramp.has_value());
  EXPECT_EQ(back.ramp->ramp_by, RampBy::kRate);
  EXPECT_EQ(back.ramp->summary_step, 1u);
  ASSERT_EQ(back.ramp->steps.size(), 3u);
  EXPECT_EQ(back.ramp->steps[1].label, "rate 20/s");
  EXPECT_EQ(back.ramp->steps[1].throughput_qps, 19.9);
  EXPECT_EQ(back.ramp->steps[2].ttft_p99_ms, 400.0);
  EXPECT_EQ(back.ramp->knee_step, 2u);
  EXPECT_EQ(back.ramp->knee_label(), "rate 30/s");
  EXPECT_EQ(back.ramp->knee_reason, ramp.knee_reason);
  EXPECT_FALSE(back.ramp->saturation_step.has_value());
  EXPECT_FALSE(back.ramp->steps[0].goodput_qps.has_value());

  ramp.steps[2].goodput_qps = 12.5;
  ramp.saturation_step = 2;
  ramp.saturation_reason = "20.10 queries/s completed of 30.00/s asked (below 95%)";
  const auto saturated = round_trip({.ramp = ramp});
  EXPECT_EQ(to_json({.ramp = ramp})["saturation_label"], "rate 30/s");
  EXPECT_EQ(saturated.ramp->saturation_step, 2u);
  EXPECT_EQ(saturated.ramp->saturation_reason, ramp.saturation_reason);
  EXPECT_EQ(saturated.ramp->steps[2].goodput_qps, 12.5);
  ramp.saturation_step.reset();

  ramp.knee_step.reset();
  const auto no_knee = round_trip({.ramp = ramp});
  ASSERT_TRUE(no_knee.ramp.has_value());
  EXPECT_FALSE(no_knee.ramp->knee_step.has_value());
  EXPECT_TRUE(to_json(no_knee)["knee_label"].is_null());
}

TEST(Analysis, PulseRoundTripsRecoveredOrNot) {
  PulseAnalysis pulse{1.0, 40.0, 7, 1.5, 10.0, 15.0, 3.0};
  auto back = round_trip({.pulse = pulse});
  ASSERT_TRUE(back.pulse.has_value());
  EXPECT_EQ(back.pulse->baseline_p99_ms, 1.0);
  EXPECT_EQ(back.pulse->peak_p99_ms, 40.0);
  EXPECT_EQ(back.pulse->burst_errors_and_rejections, 7u);
  EXPECT_EQ(back.pulse->recovery_limit_p99_ms, 1.5);
  EXPECT_EQ(back.pulse->burst_start_s, 10.0);
  EXPECT_EQ(back.pulse->burst_end_s, 15.0);
  EXPECT_TRUE(back.pulse->recovered());
  EXPECT_EQ(back.pulse->time_to_recover_s, 3.0);

  pulse.time_to_recover_s.reset();
  const auto j = to_json({.pulse = pulse});
  EXPECT_FALSE(j["pulse"]["recovered"].get<bool>());
  EXPECT_TRUE(j["pulse"]["time_to_recover_s"].is_null());
  back = round_trip({.pulse = pulse});
  ASSERT_TRUE(back.pulse.has_value());
  EXPECT_FALSE(back.pulse->recovered());
}

TEST(Analysis, SoakRoundTripsWithItsTrends) {
  SoakAnalysis soak{rising_trend(), {TrendFinding::kNotEnoughData, 2, std::nullopt}, std::nullopt};
  auto j = to_json({.soak = soak});
  EXPECT_EQ(j["soak"]["verdict"], "memory grows");
  EXPECT_TRUE(j["soak"]["leak_suspected"].get<bool>());
  EXPECT_EQ(j["soak"]["latency"], (json{{"verdict", "not enough data"}, {"points", 2}}));
  EXPECT_FALSE(j["soak"].contains("tpot"));
  auto back = round_trip({.soak = soak});
  ASSERT_TRUE(back.soak.has_value());
  EXPECT_TRUE(back.soak->leak_suspected());
  EXPECT_FALSE(back.soak->latency_drift());
  ASSERT_TRUE(back.soak->memory.fit.has_value());
  EXPECT_EQ(back.soak->memory.points, 60u);
  EXPECT_EQ(back.soak->memory.fit->slope_per_min, 60.0);
  EXPECT_EQ(back.soak->memory.fit->slope_per_min_ci95.low, 55.0);
  EXPECT_EQ(back.soak->memory.fit->slope_per_min_ci95.high, 65.0);
  EXPECT_EQ(back.soak->memory.fit->unit, "MB");
  EXPECT_EQ(back.soak->latency.verdict, TrendFinding::kNotEnoughData);
  EXPECT_FALSE(back.soak->latency.fit.has_value());

  // A rising TPOT alone is latency drift.
  soak.memory.verdict = TrendFinding::kFlat;
  soak.tpot = rising_trend();
  soak.tpot->fit->unit = "ms (per-interval mean TPOT)";
  j = to_json({.soak = soak});
  EXPECT_EQ(j["soak"]["verdict"], "latency drifts up");
  back = round_trip({.soak = soak});
  ASSERT_TRUE(back.soak && back.soak->tpot);
  EXPECT_TRUE(back.soak->latency_drift());
  EXPECT_EQ(back.soak->tpot->fit->unit, "ms (per-interval mean TPOT)");
}

// The layout results have been written in: a ramp without a knee, and an SLA on TTFT only (the
// end-to-end target null, no early-stopping claim).
TEST(Analysis, ReadsTheWrittenLayout) {
  const auto ramp = json::parse(R"({
    "summary_step": 2,
    "ramp_by": "concurrency",
    "steps": [{"label": "concurrency 1", "throughput_qps": 95.5, "p99_ms": 11.0},
              {"label": "concurrency 2", "throughput_qps": 180.25, "p99_ms": 12.5},
              {"label": "concurrency 4", "throughput_qps": 350.0, "p99_ms": 14.75}],
    "knee_step": null,
    "knee_label": null,
    "knee_reason": "no knee within the steps run: throughput still rising and the P99s within the SLOs"
  })");
  const auto a = analysis_from(ramp);
  ASSERT_TRUE(a.ramp.has_value());
  EXPECT_FALSE(a.sla || a.search || a.pulse || a.soak);
  EXPECT_EQ(a.ramp->ramp_by, RampBy::kConcurrency);
  EXPECT_EQ(a.ramp->summary_step, 2u);
  ASSERT_EQ(a.ramp->steps.size(), 3u);
  EXPECT_EQ(a.ramp->steps[2].label, "concurrency 4");
  EXPECT_EQ(a.ramp->steps[1].throughput_qps, 180.25);
  EXPECT_EQ(a.ramp->steps[0].p99_ms, 11.0);
  EXPECT_FALSE(a.ramp->steps[0].ttft_p99_ms.has_value());
  EXPECT_FALSE(a.ramp->knee_step.has_value());
  EXPECT_FALSE(a.ramp->knee_label().has_value());
  EXPECT_EQ(a.ramp->knee_reason.substr(0, 8), "no knee ");
  EXPECT_EQ(to_json(a), ramp);

  const auto sla = json::parse(R"({"sla": {
    "p99_ms_target": null, "p99_ms": 180.5, "passed": false, "queries_needed_for_p99_claim": 459,
    "errors": 0, "rejected": 4, "goodput_qps": 2.5, "good_queries": 25,
    "ttft": {"p99_ms_target": 200.0, "p99_ms": 250.125}}})");
  const auto b = analysis_from(sla);
  ASSERT_TRUE(b.sla.has_value());
  EXPECT_FALSE(b.sla->p99_ms_target.has_value());
  EXPECT_EQ(b.sla->p99_ms, 180.5);
  EXPECT_FALSE(b.sla->passed);
  EXPECT_EQ(b.sla->queries_needed_for_p99_claim, 459u);
  EXPECT_EQ(b.sla->rejected, 4u);
  EXPECT_EQ(b.sla->goodput_qps, 2.5);
  EXPECT_EQ(b.sla->good_queries, 25u);
  EXPECT_FALSE(b.sla->queries_over_target.has_value());
  EXPECT_FALSE(b.sla->claimable_percentile_at_target.has_value());
  ASSERT_TRUE(b.sla->ttft.has_value());
  EXPECT_EQ(b.sla->ttft->p99_ms_target, 200.0);
  EXPECT_EQ(b.sla->ttft->p99_ms, 250.125);
  EXPECT_FALSE(b.sla->tpot.has_value());
  EXPECT_EQ(to_json(b), sla);
}

// Files from before goodput was counted lack it; a part that cannot be read is left out rather
// than failing the whole analysis.
TEST(Analysis, ReadsOlderAndMalformedAnalysesLeniently) {
  const auto older = json::parse(R"({
    "sla": {"p99_ms_target": 50.0, "p99_ms": 12.0, "passed": true, "queries_needed_for_p99_claim": 459,
            "errors": 0, "rejected": 0, "queries_over_target": 0, "claimable_percentile_at_target": 99.1},
    "max_qps_within_sla": 250.0,
    "search": [{"target_qps": 250.0, "achieved_qps": 249.0, "p99_ms": 9.0, "passed": true}]})");
  const auto a = analysis_from(older);
  ASSERT_TRUE(a.sla && a.search);
  EXPECT_FALSE(a.sla->goodput_qps.has_value());
  EXPECT_EQ(a.sla->claimable_percentile_at_target, 99.1);
  EXPECT_EQ(a.search->max_qps_within_sla, 250.0);
  ASSERT_EQ(a.search->trials.size(), 1u);
  EXPECT_TRUE(a.search->trials[0].passed);
  EXPECT_FALSE(a.search->goodput_qps_at_max.has_value());

  const auto malformed = json::parse(R"({
    "sla": {"p99_ms": "fast", "passed": true},
    "pulse": "recovered",
    "soak": {"memory": {"verdict": "sideways", "points": 3}, "latency": {"verdict": "flat", "points": 3}},
    "steps": 3, "knee_step": 9, "knee_reason": "throughput flat"})");
  Analysis b;
  ASSERT_NO_THROW(b = analysis_from(malformed));
  ASSERT_TRUE(b.sla.has_value());
  EXPECT_EQ(b.sla->p99_ms, 0.0);
  EXPECT_TRUE(b.sla->passed);
  EXPECT_FALSE(b.pulse.has_value());
  EXPECT_FALSE(b.soak.has_value());
  ASSERT_TRUE(b.ramp.has_value());
  EXPECT_TRUE(b.ramp->steps.empty());
  EXPECT_FALSE(b.ramp->knee_step.has_value());  // no step 9 to name
  EXPECT_EQ(b.ramp->knee_reason, "throughput flat");
}

}  // namespace infermark::loadgen
