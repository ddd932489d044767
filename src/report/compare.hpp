// `compare`: a baseline and a candidate set of results, matched cell by cell, with a judgement of
// each metric's change that separates real regressions from run-to-run noise.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/result_set.hpp"
#include "stats/latency_summary.hpp"

namespace infermark::report {

// What must agree for two results to measure the same thing.
struct CellKey {
  std::string model;
  std::string backend;
  std::string threads;  // effective intra-op threads ("" when the backend did not report them)
  std::string precision;
  long long batch = 1;
  std::string scenario;
  auto operator<=>(const CellKey&) const = default;
};

CellKey cell_key(const result::RunResult& result);
std::string describe(const CellKey& key);  // "resnet50: onnxruntime t2" (+ precision, batch, scenario when not default)

enum class Verdict { kRegression, kImprovement, kNoSignificantChange, kNotJudged };
std::string verdict_name(Verdict verdict);  // "regression", "improvement", "no significant change", "not judged"

struct MetricChange {
  std::string metric;  // "P50 latency", "P99 latency", "mean latency", "throughput", "peak RSS"
  std::string unit;    // "ms", "inferences/s", "MB"
  bool lower_is_better = true;
  double baseline = 0.0;
  double candidate = 0.0;
  double change_pct = 0.0;  // (candidate - baseline) / baseline x 100
  bool significant = false;
  std::string method;  // how significance was judged, e.g. "Mann-Whitney U", "stored 95% CIs overlap"
  std::optional<double> p_value;
  std::optional<stats::Interval> ratio_ci;  // bootstrap interval of candidate / baseline
  Verdict verdict = Verdict::kNotJudged;
  std::string note;  // why it was not judged, or a caveat
};

struct CellComparison {
  CellKey key;
  std::string baseline_path, candidate_path;
  std::vector<MetricChange> metrics;  // empty when a side did not complete (see `problem`)
  std::string problem;                // e.g. "candidate crashed: ..." — counts as a regression
  bool has_regression() const;
};

struct UnmatchedCell {
  CellKey key;
  std::string side;  // "baseline" or "candidate"
  std::string path;
};

struct CompareSettings {
  double alpha = 0.05;         // significance level of the tests (bootstrap intervals are 1 - alpha)
  double threshold_pct = 5.0;  // smallest change that matters in practice
  int bootstrap_resamples = 2000;
  unsigned long long seed = 42;
};

struct Comparison {
  CompareSettings settings;
  std::vector<CellComparison> cells;
  std::vector<UnmatchedCell> unmatched;
  std::vector<std::string> notes;  // e.g. duplicate cells on one side, different machines
  int regressions() const;         // cells with at least one regression
};

// One pair judged metric by metric (the two need not share a key: an A/B of two variants).
CellComparison compare_cell(const CellKey& key, const LoadedResult& base, const LoadedResult& cand, const CompareSettings& s);

// Matches cells by CellKey (when one side has several results for a key, the latest run is
// used and a note says so) and judges every metric. Throws infermark::Error when nothing
// matches, naming the models on each side when they differ.
Comparison compare_results(const std::vector<LoadedResult>& baseline, const std::vector<LoadedResult>& candidate,
                           const CompareSettings& settings = {});

std::string to_markdown(const Comparison& comparison);
nlohmann::json to_json(const Comparison& comparison);

}  // namespace infermark::report
