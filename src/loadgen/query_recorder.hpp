// Where one thread records its queries' outcomes: an overall latency histogram, one per sample
// group (shape), a time series, (while they fit in the space reserved up front) the exact samples,
// and for token-streaming systems each request's token times. Each worker thread owns one
// recorder, so recording takes no lock and, for tensor queries, never allocates; recorders merge
// after the run.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "loadgen/generation.hpp"
#include "loadgen/live_stats.hpp"
#include "loadgen/service_targets.hpp"
#include "loadgen/system_under_test.hpp"
#include "stats/histogram.hpp"

namespace infermark::loadgen {

struct RecorderLimits {
  std::int64_t interval_ns = 1'000'000'000;  // time-series resolution (coarsened to keep <= 300 intervals)
  std::int64_t max_duration_ns = 0;          // the run's bound (sizes the time series)
  std::size_t max_exact_samples = 0;         // exact samples kept; beyond this only the histogram
  std::uint32_t groups = 1;                  // sample groups with a histogram each (1: none kept apart)
  ServiceTargets targets;                    // what a query must meet to count as good
};

class QueryRecorder {
 public:
  explicit QueryRecorder(const RecorderLimits& limits);

  // `completed_at_ns` is relative to the run's start; `latency_ns` as the scenario defines it. The
  // query is good (goodput) when its latency is within the end-to-end target.
  void record(std::int64_t completed_at_ns, std::int64_t latency_ns, std::uint32_t group = 0) {
    record_latency(completed_at_ns, latency_ns, group);
    if (loadgen::within(targets_.e2e_ns, latency_ns)) ++met_targets_;
  }
  // A query the load generator ran: its clock from `start_ns` (its issue in closed loop, its
  // scheduled arrival in open loop) to `done_ns`, monotonic. A streamed query also keeps its token
  // times and is good only when its TTFT and TPOT are within their targets too.
  void record_query(std::int64_t run_start_ns, std::int64_t start_ns, std::int64_t done_ns, std::uint32_t group,
                    const Completion& completion) {
    if (completion.token_ns.empty()) return record(done_ns - run_start_ns, done_ns - start_ns, group);
    record_latency(done_ns - run_start_ns, done_ns - start_ns, group);
    record_tokens(start_ns, done_ns, group, completion);
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
  // Room for `count` exact samples in all (a copy keeps only room for those it holds), so that
  // merges that fit keep every sample.
  void reserve_samples(std::size_t count) { samples_ns_.reserve(count); }
  std::size_t exact_samples() const { return samples_ns_.size(); }

  // Everything recorded (histograms, series, samples with their capacity, requests, counts), so
  // that from_json rebuilds a recorder whose merges equal the original's. Throws infermark::Error
  // on a malformed document.
  nlohmann::json to_json() const;
  static QueryRecorder from_json(const nlohmann::json& j);

  const stats::LatencyHistogram& latency() const { return latency_; }
  const stats::IntervalSeries& series() const { return series_; }
  std::uint64_t completed() const { return latency_.count(); }
  std::uint64_t errors() const { return errors_; }
  std::uint64_t rejected() const { return rejected_; }
  // Per sample group; empty when the library has one group.
  const std::vector<stats::LatencyHistogram>& latency_by_group() const { return by_group_; }
  // Streamed requests, in completion order per recorder.
  const std::vector<RequestRecord>& requests() const { return requests_; }
  // Completed queries that met every target (goodput's numerator).
  std::uint64_t met_targets() const { return met_targets_; }
  // Exact samples in milliseconds; meaningful only when samples_complete().
  std::vector<double> samples_ms() const;
  bool samples_complete() const { return samples_complete_; }

 private:
  void record_latency(std::int64_t completed_at_ns, std::int64_t latency_ns, std::uint32_t group) {
    latency_.record(latency_ns);
    series_.record(completed_at_ns, latency_ns);
    LiveStats::global().record(latency_ns);
    if (!by_group_.empty()) by_group_[group].record(latency_ns);
    if (samples_ns_.size() < samples_ns_.capacity())
      samples_ns_.push_back(latency_ns);
    else
      samples_complete_ = false;
  }
  void record_tokens(std::int64_t start_ns, std::int64_t done_ns, std::uint32_t group, const Completion& completion);

  stats::LatencyHistogram latency_;
  stats::IntervalSeries series_;
  std::vector<stats::LatencyHistogram> by_group_;
  std::vector<std::int64_t> samples_ns_;
  std::vector<RequestRecord> requests_;
  ServiceTargets targets_;
  std::uint64_t met_targets_ = 0;
  bool samples_complete_ = true;
  std::uint64_t errors_ = 0;
  std::uint64_t rejected_ = 0;
};

}  // namespace infermark::loadgen
