#include "loadgen/query_recorder.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/error.hpp"

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

void QueryRecorder::record_tokens(std::int64_t start_ns, std::int64_t done_ns, std::uint32_t group,
                                  const Completion& completion) {
  RequestRecord request;
  request.prompt_tokens = completion.prompt_tokens;
  request.output_tokens = completion.output_tokens > 0 ? completion.output_tokens : static_cast<int>(completion.token_ns.size());
  request.start_ns = start_ns;
  request.token_ns = completion.token_ns;
  request.prefix = completion.prefix;
  request.group = group;
  request.done_ns = done_ns;
  if (meets(targets_, latencies_of(request))) ++met_targets_;
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

nlohmann::json QueryRecorder::to_json() const {
  nlohmann::json groups = nlohmann::json::array(), requests = nlohmann::json::array();
  for (const auto& h : by_group_) groups.push_back(h.to_json());
  for (const auto& r : requests_) {
    // Token times relative to the request's start: only differences are ever read.
    std::vector<std::int64_t> tokens;
    tokens.reserve(r.token_ns.size());
    for (auto t : r.token_ns) tokens.push_back(t - r.start_ns);
    requests.push_back(nlohmann::json::array(
        {r.prompt_tokens, r.output_tokens, r.start_ns, tokens, static_cast<int>(r.prefix), r.group, r.done_ns - r.start_ns}));
  }
  return {{"latency", latency_.to_json()},
          {"series", series_.to_exact_json()},
          {"by_group", groups},
          {"samples_ns", samples_ns_},
          {"sample_capacity", samples_ns_.capacity()},
          {"samples_complete", samples_complete_},
          {"requests", requests},
          {"targets", {targets_.e2e_ns, targets_.ttft_ns, targets_.tpot_ns}},
          {"met_targets", met_targets_},
          {"errors", errors_},
          {"rejected", rejected_}};
}

QueryRecorder QueryRecorder::from_json(const nlohmann::json& j) {
  try {
    QueryRecorder r(RecorderLimits{});
    r.latency_ = stats::LatencyHistogram::from_json(j.at("latency"));
    r.series_ = stats::IntervalSeries::from_exact_json(j.at("series"));
    for (const auto& h : j.at("by_group")) r.by_group_.push_back(stats::LatencyHistogram::from_json(h));
    const auto samples = j.at("samples_ns").get<std::vector<std::int64_t>>();
    r.samples_ns_.reserve(std::max(samples.size(), j.at("sample_capacity").get<std::size_t>()));
    r.samples_ns_.insert(r.samples_ns_.end(), samples.begin(), samples.end());
    r.samples_complete_ = j.at("samples_complete").get<bool>();
    for (const auto& row : j.at("requests")) {
      RequestRecord request{row.at(0).get<int>(), row.at(1).get<int>(), row.at(2).get<std::int64_t>(), {}};
      for (const auto& t : row.at(3)) request.token_ns.push_back(request.start_ns + t.get<std::int64_t>());
      if (row.size() > 4) request.prefix = prefix_warmth_from(row.at(4).get<int>());           // absent before shared prefixes
      if (row.size() > 5) request.group = row.at(5).get<std::uint32_t>();                      // absent before conversations
      if (row.size() > 6) request.done_ns = request.start_ns + row.at(6).get<std::int64_t>();  // absent before 2026-12-07
      r.requests_.push_back(std::move(request));
    }
    const auto& targets = j.at("targets");
    r.targets_ = {targets.at(0).get<std::int64_t>(), targets.at(1).get<std::int64_t>(), targets.at(2).get<std::int64_t>()};
    r.met_targets_ = j.at("met_targets").get<std::uint64_t>();
    r.errors_ = j.at("errors").get<std::uint64_t>();
    r.rejected_ = j.at("rejected").get<std::uint64_t>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("query recorder: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw Error(std::string("query recorder: ") + e.what());
  }
}

}  // namespace infermark::loadgen
