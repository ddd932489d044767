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
    : series_(interval_for(limits), limits.max_duration_ns, kIntervalDigits), targets_(limits.targets) {
  if (limits.groups > 1) by_group_.resize(limits.groups);
  samples_ns_.reserve(limits.max_exact_samples);
}

void QueryRecorder::record_tokens(std::int64_t start_ns, std::int64_t done_ns, const Completion& completion) {
  RequestRecord request;
  request.prompt_tokens = completion.prompt_tokens;
  request.output_tokens = completion.output_tokens > 0 ? completion.output_tokens : static_cast<int>(completion.token_ns.size());
  request.start_ns = start_ns;
  request.token_ns = completion.token_ns;
  const auto first = request.token_ns.front(), last = request.token_ns.back();
  const auto tokens_after_first = request.token_ns.size() > 1 ? static_cast<std::int64_t>(request.output_tokens) - 1 : 0;
  const bool tpot_ok = tokens_after_first == 0 || within(targets_.tpot_ns, (last - first) / tokens_after_first);
  if (within(targets_.e2e_ns, done_ns - start_ns) && within(targets_.ttft_ns, first - start_ns) && tpot_ok) ++met_targets_;
  requests_.push_back(std::move(request));
}

void QueryRecorder::merge(const QueryRecorder& other) {
  latency_.merge(other.latency_);
  series_.merge(other.series_);
  if (by_group_.size() < other.by_group_.size()) by_group_.resize(other.by_group_.size());
  for (std::size_t g = 0; g < other.by_group_.size(); ++g) by_group_[g].merge(other.by_group_[g]);
  requests_.insert(requests_.end(), other.requests_.begin(), other.requests_.end());
  met_targets_ += other.met_targets_;
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
