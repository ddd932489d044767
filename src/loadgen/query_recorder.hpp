// Where one thread records its queries' outcomes: an overall latency histogram, a time series,
// and (while they fit in the space reserved up front) the exact samples. Each worker thread owns
// one recorder, so recording takes no lock and never allocates; recorders merge after the run.
#pragma once

#include <cstdint>
#include <vector>

#include "loadgen/live_stats.hpp"
#include "stats/histogram.hpp"

namespace infermark::loadgen {

struct RecorderLimits {
  std::int64_t interval_ns = 1'000'000'000;   // time-series resolution (coarsened to keep <= 300 intervals)
  std::int64_t max_duration_ns = 0;           // the run's bound (sizes the time series)
  std::size_t max_exact_samples = 0;          // exact samples kept; beyond this only the histogram
};

class QueryRecorder {
 public:
  explicit QueryRecorder(const RecorderLimits& limits);

  // `completed_at_ns` is relative to the run's start; `latency_ns` as the scenario defines it.
  void record(std::int64_t completed_at_ns, std::int64_t latency_ns) {
    latency_.record(latency_ns);
    series_.record(completed_at_ns, latency_ns);
    LiveStats::global().record(latency_ns);
    if (samples_ns_.size() < samples_ns_.capacity()) samples_ns_.push_back(latency_ns);
    else samples_complete_ = false;
  }
  void record_error(std::int64_t at_ns) {
    ++errors_;
    series_.record_error(at_ns);
  }
  void record_rejection(std::int64_t at_ns) {
    ++rejected_;
    series_.record_error(at_ns);
  }
  // Folds `other` into this one (exact samples too, while they fit).
  void merge(const QueryRecorder& other);

  const stats::LatencyHistogram& latency() const { return latency_; }
  const stats::IntervalSeries& series() const { return series_; }
  std::uint64_t completed() const { return latency_.count(); }
  std::uint64_t errors() const { return errors_; }
  std::uint64_t rejected() const { return rejected_; }
  // Exact samples in milliseconds; meaningful only when samples_complete().
  std::vector<double> samples_ms() const;
  bool samples_complete() const { return samples_complete_; }

 private:
  stats::LatencyHistogram latency_;
  stats::IntervalSeries series_;
  std::vector<std::int64_t> samples_ns_;
  bool samples_complete_ = true;
  std::uint64_t errors_ = 0;
  std::uint64_t rejected_ = 0;
};

}  // namespace infermark::loadgen
