// A log-linear latency histogram in the HdrHistogram style: constant relative precision
// (<= 1% with the default two significant digits) over nanoseconds to an hour, fixed memory
// after construction, O(1) recording without allocation, and exact merging (the merge of two
// histograms equals the histogram of the union of their values).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace infermark::stats {

class LatencyHistogram {
 public:
  // Values are integers (nanoseconds by convention) in [0, highest_trackable]; larger values are
  // clamped to highest_trackable and counted in `saturated()`. significant_digits in [1, 4].
  explicit LatencyHistogram(int significant_digits = 2, std::int64_t highest_trackable = 3'600'000'000'000);

  void record(std::int64_t value);  // never allocates; negative values count as 0
  void record_n(std::int64_t value, std::uint64_t n);
  // Throws std::invalid_argument when the two were built with different precision or range.
  void merge(const LatencyHistogram& other);
  void reset();

  std::uint64_t count() const { return total_; }
  std::uint64_t saturated() const { return saturated_; }
  std::int64_t min() const;  // exact (tracked outside the buckets); 0 when empty
  std::int64_t max() const;  // exact; 0 when empty
  double mean() const;       // from bucket midpoints
  double stddev() const;     // population, from bucket midpoints
  // Nearest-rank percentile, p in (0, 100]: a value equivalent (within the precision) to the
  // smallest recorded value with at least p% of the count at or below it. 0 when empty.
  std::int64_t value_at_percentile(double p) const;
  // The value at 1-based rank `rank` in sorted order (for order-statistic confidence intervals).
  std::int64_t value_at_rank(std::uint64_t rank) const;
  // Largest relative error of any reported value, e.g. 0.0078 for two significant digits.
  double relative_precision() const;

  // Compact form: settings plus the non-zero buckets as [bucket_index, count] pairs.
  nlohmann::json to_json() const;
  static LatencyHistogram from_json(const nlohmann::json& j);  // throws std::invalid_argument

 private:
  std::size_t index_of(std::int64_t value) const;
  std::int64_t lowest_equivalent(std::size_t index) const;
  std::int64_t highest_equivalent(std::size_t index) const;

  int significant_digits_;
  std::int64_t highest_trackable_;
  int sub_bucket_half_count_magnitude_ = 0;
  std::int64_t sub_bucket_count_ = 0;
  std::int64_t sub_bucket_half_count_ = 0;
  std::int64_t sub_bucket_mask_ = 0;
  std::vector<std::uint64_t> counts_;
  std::uint64_t total_ = 0;
  std::uint64_t saturated_ = 0;
  std::int64_t min_ = INT64_MAX;
  std::int64_t max_ = 0;
};

// Per-interval counts and latency histograms over a run, for time series (per-second P99,
// throughput, errors) and for soak/pulse analysis. All intervals are allocated up front from
// the run's maximum duration, so recording never allocates.
class IntervalSeries {
 public:
  // `interval_ns` > 0; `max_duration_ns` bounds the run; completions after it go to the last interval.
  IntervalSeries(std::int64_t interval_ns, std::int64_t max_duration_ns, int significant_digits = 2);

  // `at_ns` is the completion time relative to the run's start (negative counts as 0).
  void record(std::int64_t at_ns, std::int64_t latency_ns);
  void record_error(std::int64_t at_ns);

  struct Interval {
    std::int64_t start_ns = 0;
    std::uint64_t completed = 0;
    std::uint64_t errors = 0;
    LatencyHistogram latency;
  };
  std::int64_t interval_ns() const { return interval_ns_; }
  // Intervals up to and including the last one that saw any completion or error.
  std::size_t used_intervals() const;
  const Interval& interval(std::size_t i) const { return intervals_.at(i); }
  // Every interval merged into one histogram.
  LatencyHistogram merged() const;
  // Adds `other`'s intervals to this one's (same interval and length, else std::invalid_argument).
  void merge(const IntervalSeries& other);

  // Rows of {"t_s", "completed", "errors", "throughput_per_s", "p50_ms", "p99_ms", "max_ms"}.
  nlohmann::json to_json() const;
  // The exact form (interval, length, every used interval's counts and histogram), which
  // from_exact_json rebuilds so that merging the copy equals merging the original.
  nlohmann::json to_exact_json() const;
  static IntervalSeries from_exact_json(const nlohmann::json& j);  // throws std::invalid_argument

 private:
  std::int64_t interval_ns_;
  std::vector<Interval> intervals_;
  std::size_t last_used_ = 0;
  bool any_ = false;
};

// MLPerf-style early stopping for a percentile claim: given n queries of which k exceeded the
// latency target, the largest percentile (e.g. 99.0) that can be claimed with the target at 99%
// confidence (one-sided binomial bound). Returns 0 when nothing can be claimed.
double claimable_percentile(std::uint64_t n, std::uint64_t k_over_target, double confidence = 0.99);

// The smallest query count for which a P`percentile` claim can hold at `confidence` with zero
// queries over the target (e.g. 459 for P99 at 99%), so runs can stop early once it holds.
std::uint64_t min_queries_for_percentile(double percentile, double confidence = 0.99);

// MLPerf's early-stopping estimate of a percentile: the most of n samples that may lie above the
// estimate while "P`percentile` <= estimate" still holds at `confidence`; the estimate is then the
// (n - t)-th smallest sample, at or above the plain percentile. nullopt when n is below
// min_queries_for_percentile(): the run is too short for any such claim.
std::optional<std::uint64_t> samples_allowed_above(std::uint64_t n, double percentile, double confidence = 0.99);
std::optional<double> early_stopping_estimate(std::vector<double> samples, double percentile, double confidence = 0.99);

}  // namespace infermark::stats
