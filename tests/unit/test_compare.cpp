#include "report/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "stats/significance.hpp"
#include "synthetic_results.hpp"

namespace infermark {
namespace {

using report::Verdict;
using testing::latency_samples;
using testing::scaled;
using testing::synthetic_result;

const report::MetricChange& metric(const report::CellComparison& cell, const std::string& name) {
  for (const auto& m : cell.metrics)
    if (m.metric == name) return m;
  throw std::out_of_range(name);
}

// ---- Mann-Whitney U ----

TEST(CompareMannWhitney, IdenticalSamplesAreNotSignificant) {
  const auto samples = latency_samples(300, 10.0, 1);
  const auto u = stats::mann_whitney_u(samples, samples);
  EXPECT_NEAR(u.z, 0.0, 1e-9);
  EXPECT_DOUBLE_EQ(u.p_value, 1.0);
}

TEST(CompareMannWhitney, TwoDrawsOfOneDistributionAreNotSignificant) {
  const auto u = stats::mann_whitney_u(latency_samples(300, 10.0, 1), latency_samples(300, 10.0, 2));
  EXPECT_GT(u.p_value, 0.05);
}

TEST(CompareMannWhitney, MatchesTheTextbookValue) {
  // U = 9 of a possible 9; z = (9 - 4.5 - 0.5) / sqrt(3 * 3 * 7 / 12); scipy's asymptotic p is 0.0809.
  const std::vector<double> low{1, 2, 3}, high{4, 5, 6};
  const auto u = stats::mann_whitney_u(low, high);
  EXPECT_DOUBLE_EQ(u.u, 9.0);
  EXPECT_NEAR(u.z, 4.0 / std::sqrt(5.25), 1e-12);
  EXPECT_NEAR(u.p_value, 0.0809, 5e-4);
  EXPECT_LT(stats::mann_whitney_u(high, low).z, 0.0);  // candidate smaller: negative z
}

TEST(CompareMannWhitney, TiesAreCorrectedAndAllTiedMeansNoEvidence) {
  const std::vector<double> tied(50, 3.0);
  EXPECT_DOUBLE_EQ(stats::mann_whitney_u(tied, tied).p_value, 1.0);
  // Average ranks 2.5, 8.5, 14.5 give U = 56 of 64; the tie correction shrinks the variance from
  // 90.67 to 76.8, so z = (56 - 32 - 0.5) / sqrt(76.8) = 2.682 (2.468 uncorrected).
  const std::vector<double> a{1, 1, 1, 1, 2, 2, 2, 2}, b{2, 2, 2, 2, 3, 3, 3, 3};
  const auto u = stats::mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(u.u, 56.0);
  EXPECT_NEAR(u.z, 23.5 / std::sqrt(76.8), 1e-12);
  EXPECT_NEAR(u.p_value, std::erfc(23.5 / std::sqrt(76.8) / std::sqrt(2.0)), 1e-12);
}

TEST(CompareMannWhitney, PlantedShiftIsSignificant) {
  const auto u = stats::mann_whitney_u(latency_samples(200, 10.0, 1), scaled(latency_samples(200, 10.0, 2), 1.2));
  EXPECT_LT(u.p_value, 1e-6);
  EXPECT_GT(u.z, 0.0);
}

// ---- Bootstrap ----

TEST(CompareBootstrap, IntervalsContainTheTrueRatio) {
  const auto base = latency_samples(1000, 10.0, 3), cand = scaled(latency_samples(1000, 10.0, 4), 1.2);
  const auto ratios = stats::bootstrap_percentile_ratios(base, cand, {50.0, 99.0});
  ASSERT_EQ(ratios.size(), 2u);
  for (const auto& r : ratios) {
    EXPECT_LT(r.ci.low, 1.2) << "P" << r.percentile;
    EXPECT_GT(r.ci.high, 1.2) << "P" << r.percentile;
    EXPECT_GT(r.ci.low, 1.0) << "P" << r.percentile;  // and exclude "no change"
    EXPECT_LE(r.ci.low, r.ratio);
    EXPECT_GE(r.ci.high, r.ratio);
  }
  EXPECT_EQ(ratios[0].percentile, 50.0);
  EXPECT_GT(ratios[1].ci.high - ratios[1].ci.low, ratios[0].ci.high - ratios[0].ci.low);  // the tail is less certain
}

TEST(CompareBootstrap, IsReproducibleFromItsSeed) {
  const auto base = latency_samples(200, 5.0, 5), cand = latency_samples(200, 5.0, 6);
  const auto a = stats::bootstrap_percentile_ratios(base, cand, {50.0}, {500, 0.95, 7});
  const auto b = stats::bootstrap_percentile_ratios(base, cand, {50.0}, {500, 0.95, 7});
  EXPECT_EQ(a[0].ci.low, b[0].ci.low);
  EXPECT_EQ(a[0].ci.high, b[0].ci.high);
  EXPECT_THROW(stats::bootstrap_percentile_ratios({}, cand, {50.0}), std::invalid_argument);
}

// ---- Whole comparisons ----

TEST(CompareResults, SameDistributionShowsNoSignificantChange) {
  const auto c = report::compare_results({synthetic_result(latency_samples(300, 10.0, 1))},
                                         {synthetic_result(latency_samples(300, 10.0, 2))});
  ASSERT_EQ(c.cells.size(), 1u);
  EXPECT_EQ(c.regressions(), 0);
  for (const auto& m : c.cells[0].metrics) EXPECT_NE(m.verdict, Verdict::kRegression) << m.metric;
  EXPECT_EQ(metric(c.cells[0], "P50 latency").method, "Mann-Whitney U");
  EXPECT_TRUE(metric(c.cells[0], "P50 latency").ratio_ci.has_value());
}

TEST(CompareResults, PlantedTwentyPercentShiftIsARegression) {
  const auto c = report::compare_results({synthetic_result(latency_samples(500, 10.0, 1))},
                                         {synthetic_result(scaled(latency_samples(500, 10.0, 2), 1.2))}, {0.05, 10.0, 2000, 42});
  ASSERT_EQ(c.cells.size(), 1u);
  const auto& cell = c.cells[0];
  EXPECT_TRUE(cell.has_regression());
  EXPECT_EQ(c.regressions(), 1);
  for (const char* name : {"P50 latency", "P99 latency", "mean latency", "throughput"}) {
    EXPECT_EQ(metric(cell, name).verdict, Verdict::kRegression) << name;
    EXPECT_TRUE(metric(cell, name).significant) << name;
  }
  EXPECT_NEAR(metric(cell, "P50 latency").change_pct, 20.0, 4.0);
  EXPECT_LT(metric(cell, "throughput").change_pct, -10.0);
  EXPECT_EQ(metric(cell, "peak RSS").verdict, Verdict::kNoSignificantChange);
  EXPECT_NE(report::to_markdown(c).find("| regression"), std::string::npos);
  EXPECT_EQ(report::to_json(c)["regressions"], 1);
}

TEST(CompareResults, ASpeedUpIsAnImprovementAndASmallShiftStaysBelowTheThreshold) {
  const auto base = latency_samples(2000, 10.0, 1);
  const auto faster =
      report::compare_results({synthetic_result(base)}, {synthetic_result(scaled(latency_samples(2000, 10.0, 2), 0.8))});
  EXPECT_EQ(metric(faster.cells[0], "P50 latency").verdict, Verdict::kImprovement);
  EXPECT_EQ(faster.regressions(), 0);
  // 3% slower with 2000 samples a side: significant, yet under the 5% that matters.
  const auto slightly =
      report::compare_results({synthetic_result(base)}, {synthetic_result(scaled(latency_samples(2000, 10.0, 2), 1.03))});
  const auto& p50 = metric(slightly.cells[0], "P50 latency");
  EXPECT_TRUE(p50.significant);
  EXPECT_EQ(p50.verdict, Verdict::kNoSignificantChange);
  EXPECT_NE(p50.note.find("within the 5% threshold"), std::string::npos);
}

TEST(CompareResults, WithoutSamplesTheStoredIntervalsDecide) {
  auto base = synthetic_result(latency_samples(500, 10.0, 1));
  auto slower = synthetic_result(scaled(latency_samples(500, 10.0, 2), 1.3));
  auto same = synthetic_result(latency_samples(500, 10.0, 3));
  for (auto* r : {&base, &slower, &same}) r->result.samples_ms.clear();  // histogram-method results keep no samples
  const auto c = report::compare_results({base}, {slower});
  const auto& p50 = metric(c.cells[0], "P50 latency");
  EXPECT_EQ(p50.method, "stored 95% CIs (no samples)");
  EXPECT_FALSE(p50.p_value.has_value());
  EXPECT_EQ(p50.verdict, Verdict::kRegression);
  EXPECT_EQ(metric(c.cells[0], "mean latency").verdict, Verdict::kRegression);
  EXPECT_EQ(metric(report::compare_results({base}, {same}).cells[0], "P50 latency").verdict, Verdict::kNoSignificantChange);

  // P99 of 100 samples has no stored interval: said, not guessed.
  auto small_base = synthetic_result(latency_samples(100, 10.0, 1)), small_cand = synthetic_result(latency_samples(100, 10.0, 2));
  small_base.result.samples_ms.clear();
  small_cand.result.samples_ms.clear();
  const auto small = report::compare_results({small_base}, {small_cand});
  const auto& p99 = metric(small.cells[0], "P99 latency");
  EXPECT_EQ(p99.verdict, Verdict::kNotJudged);
  EXPECT_NE(p99.note.find("no stored 95% interval"), std::string::npos);
}

TEST(CompareMatching, CellsMatchByBackendThreadsAndTheRestAreListed) {
  const auto s = latency_samples(100, 10.0, 1);
  const std::vector<report::LoadedResult> baseline{synthetic_result(s, {.backend = "onnxruntime"}),
                                                   synthetic_result(s, {.backend = "openvino"}),
                                                   synthetic_result(s, {.backend = "opencv", .threads = "1"})};
  const std::vector<report::LoadedResult> candidate{synthetic_result(s, {.backend = "openvino"}),
                                                    synthetic_result(s, {.backend = "onnxruntime"}),
                                                    synthetic_result(s, {.backend = "opencv", .threads = "2"})};
  const auto c = report::compare_results(baseline, candidate);
  ASSERT_EQ(c.cells.size(), 2u);
  EXPECT_EQ(c.cells[0].key.backend, "onnxruntime");
  EXPECT_EQ(c.cells[1].key.backend, "openvino");
  ASSERT_EQ(c.unmatched.size(), 2u);
  EXPECT_EQ(c.unmatched[0].side, "baseline");
  EXPECT_EQ(c.unmatched[0].key.threads, "1");
  EXPECT_EQ(c.unmatched[1].side, "candidate");
  EXPECT_NE(report::to_markdown(c).find("only in the baseline: resnet50: opencv t1"), std::string::npos);

  auto batched = baseline[0];
  batched.result.scenario.batch = 8;
  EXPECT_NE(report::cell_key(batched.result), report::cell_key(baseline[0].result));
}

TEST(CompareMatching, SeveralRunsOfACellUseTheLatestAndSaySo) {
  const auto s = latency_samples(100, 10.0, 1);
  const std::vector<report::LoadedResult> baseline{synthetic_result(s, {.started_at = "2026-12-01T10:00:00Z"}, "/old.json"),
                                                   synthetic_result(s, {.started_at = "2026-12-02T10:00:00Z"}, "/new.json")};
  const auto c = report::compare_results(baseline, {synthetic_result(s)});
  ASSERT_EQ(c.cells.size(), 1u);
  EXPECT_EQ(c.cells[0].baseline_path, "/new.json");
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("ignoring /old.json"), std::string::npos);
}

TEST(CompareMatching, CompetingLoadOnTheMachineIsPointedOut) {
  const auto s = latency_samples(100, 10.0, 1);
  auto quiet = synthetic_result(s), busy = synthetic_result(s);
  quiet.result.environment["logical_cores"] = 2;
  busy.result.environment["logical_cores"] = 2;
  quiet.result.resources = result::ResourceRecord{};
  quiet.result.resources->summary.mean_process_cpu_percent = 199.0;
  quiet.result.resources->summary.mean_system_cpu_percent = 100.0;
  busy.result.resources = result::ResourceRecord{};
  busy.result.resources->summary.mean_process_cpu_percent = 98.0;  // another process had a core
  busy.result.resources->summary.mean_system_cpu_percent = 100.0;
  const auto c = report::compare_results({quiet}, {busy});
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("0.01 cores busy during the baseline's run and 1.02 during the candidate's"), std::string::npos)
      << c.notes[0];
  EXPECT_TRUE(report::compare_results({quiet}, {quiet}).notes.empty());
}

TEST(CompareMatching, NothingInCommonIsAnErrorThatNamesTheModels) {
  const auto s = latency_samples(100, 10.0, 1);
  try {
    report::compare_results({synthetic_result(s, {.model = "resnet50"})}, {synthetic_result(s, {.model = "tiny_cnn"})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resnet50"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("tiny_cnn"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("different models"), std::string::npos);
  }
  EXPECT_THROW(report::compare_results({synthetic_result(s, {.threads = "1"})}, {synthetic_result(s, {.threads = "2"})}), Error);
}

TEST(CompareMatching, ACandidateThatNoLongerCompletesIsARegression) {
  auto crashed = synthetic_result(latency_samples(100, 10.0, 1));
  crashed.result.status = infermark::result::CellStatus::kCrashed;
  crashed.result.error = "crashed: SIGSEGV while running";
  crashed.result.latency_ms.reset();
  const auto c = report::compare_results({synthetic_result(latency_samples(100, 10.0, 1))}, {crashed});
  ASSERT_EQ(c.cells.size(), 1u);
  EXPECT_TRUE(c.cells[0].has_regression());
  EXPECT_NE(c.cells[0].problem.find("SIGSEGV"), std::string::npos);
}

}  // namespace
}  // namespace infermark
