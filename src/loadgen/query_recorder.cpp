#include "loadgen/query_recorder.hpp"

#include <algorithm>

namespace infermark::loadgen {

namespace {

// At most this many intervals per series, each with a one-significant-digit histogram (about
// 5 KB): the time series of a long run stays a few MB per recorder, allocated up front.
constexpr std::int64_t kMaxIntervals = 300;
constexpr int kIntervalDigits = 1;

std::int64_t interval_for(const RecorderLimits& limits) {
  return std::max(limits.interval_ns, (limits.max_duration_ns + kMaxIntervals - 1) / kMaxIntervals);
}

}  // namespace

QueryRecorder::QueryRecorder(const RecorderLimits& limits)
    : series_(interval_for(limits), limits.max_duration_ns, kIntervalDigits) {
  samples_ns_.reserve(limits.max_exact_samples);
}

void QueryRecorder::merge(const QueryRecorder& other) {
  latency_.merge(other.latency_);
  series_.merge(other.series_);
  for (auto sample : other.samples_ns_) {
    if (samples_ns_.size() == samples_ns_.capacity()) {
      samples_complete_ = false;
      break;
    }
    samples_ns_.push_back(sample);
  }
  samples_complete_ = samples_complete_ && other.samples_complete_;
  errors_ += other.errors_;
  rejected_ += other.rejected_;
}

std::vector<double> QueryRecorder::samples_ms() const {
  std::vector<double> ms;
  ms.reserve(samples_ns_.size());
  for (auto ns : samples_ns_) ms.push_back(static_cast<double>(ns) * 1e-6);
  return ms;
}

}  // namespace infermark::loadgen
