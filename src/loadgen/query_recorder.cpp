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

void QueryRecorder::record_tokens(std::int64_t start_ns, const Completion& completion) {
  if (completion.token_ns.empty()) return;
  RequestRecord request;
  request.prompt_tokens = completion.prompt_tokens;
  request.output_tokens = static_cast<int>(completion.token_ns.size());
  request.start_ns = start_ns;
  request.token_ns = completion.token_ns;
  const auto first = request.token_ns.front(), last = request.token_ns.back();
  const auto tokens_after_first = static_cast<std::int64_t>(request.token_ns.size()) - 1;
  const bool ttft_ok = targets_.ttft_ns == 0 || first - start_ns <= targets_.ttft_ns;
  const bool tpot_ok =
      targets_.tpot_ns == 0 || tokens_after_first == 0 || (last - first) / tokens_after_first <= targets_.tpot_ns;
  const bool e2e_ok = targets_.e2e_ns == 0 || last - start_ns <= targets_.e2e_ns;
  if (ttft_ok && tpot_ok && e2e_ok) ++met_targets_streamed_;
  requests_.push_back(std::move(request));
}

void QueryRecorder::merge(const QueryRecorder& other) {
  latency_.merge(other.latency_);
  series_.merge(other.series_);
  if (by_group_.size() < other.by_group_.size()) by_group_.resize(other.by_group_.size());
  for (std::size_t g = 0; g < other.by_group_.size(); ++g) by_group_[g].merge(other.by_group_[g]);
  requests_.insert(requests_.end(), other.requests_.begin(), other.requests_.end());
  met_targets_if_untimed_ += other.met_targets_if_untimed_;
  met_targets_streamed_ += other.met_targets_streamed_;
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
