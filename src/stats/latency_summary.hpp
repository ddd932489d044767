// Summary statistics of a latency sample: moments, exact percentiles and 95% confidence
// intervals, computed from every recorded sample (nothing is extrapolated).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace infermark::stats {

struct Interval {
  double low = 0.0;
  double high = 0.0;
};

struct PercentileEstimate {
  double percentile = 0.0;  // e.g. 99.0
  double value = 0.0;       // nearest-rank value of the sorted sample
  // Distribution-free 95% interval from binomial order statistics; empty when the sample
  // is too small to bound this percentile on both sides (e.g. P99 from 100 samples).
  std::optional<Interval> ci95;
};

struct LatencySummary {
  std::size_t count = 0;
  double mean = 0.0;
  double stddev = 0.0;  // sample standard deviation (n - 1)
  double min = 0.0;
  double max = 0.0;
  Interval mean_ci95;                           // Student-t interval for the mean
  std::vector<PercentileEstimate> percentiles;  // in the order requested

  // The estimate for `p`, which must have been requested.
  const PercentileEstimate& at(double p) const;
};

// Percentiles reported by default: P50, P90, P95, P99, P99.9.
const std::vector<double>& default_percentiles();

// Summarises `samples` (any unit; results are in the same unit). Throws std::invalid_argument
// for an empty sample or a percentile outside (0, 100].
LatencySummary summarize(std::span<const double> samples, const std::vector<double>& percentiles = default_percentiles());

// The value of 1-based rank r in ascending order, for distributions known only by rank (e.g. a
// histogram, where each rank maps to a bucket's representative value).
using RankedValue = std::function<double(std::size_t rank)>;

// Summary from ranked values and given moments: the same percentile and interval definitions as
// summarize(), for sources that do not keep every sample.
LatencySummary summarize_ranked(std::size_t count, const RankedValue& value_at_rank, double mean, double stddev,
                                const std::vector<double>& percentiles = default_percentiles());

// Nearest-rank percentile of an ascending-sorted sample: the smallest value with at least
// p% of the sample at or below it.
double nearest_rank(std::span<const double> sorted, double p);

// Two-sided 95% Student-t critical value for `degrees_of_freedom` (>= 1).
double student_t95(std::size_t degrees_of_freedom);

}  // namespace infermark::stats
