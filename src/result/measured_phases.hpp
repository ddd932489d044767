// What a result records of the load as it ran: each measured phase ("phases": a ramp's steps, a
// search's trials, the one phase of most scenarios), the completions over time ("time_series")
// and the mergeable latency histogram ("latency_histogram_ns"). The load generator measures them;
// these are the records a result keeps, written with the keys docs/result-schema.md gives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/histogram.hpp"

namespace infermark::result {

struct PhaseLatency {  // ms
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

struct IssueLateness {  // µs: how late queries were issued against their schedule (open loop)
  double p50 = 0, p99 = 0, max = 0;
};

// One input group's queries (varying shapes: one per shape), their latency where any ran.
struct GroupLatency {
  std::string group;
  std::uint64_t queries = 0;
  std::optional<double> p50, p90, p99, mean;  // ms
};

struct TokenLatency {  // ms
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Language models: the phase's streamed requests.
struct GenerationPhase {
  std::uint64_t requests = 0;
  std::int64_t prompt_tokens = 0, output_tokens = 0;
  std::optional<TokenLatency> ttft_ms, tpot_ms, itl_ms, e2e_ms;
  double output_tokens_per_s = 0, requests_per_s = 0;
};

struct PhaseRecord {
  std::string label;  // "concurrency 10", "rate 50/s", "burst", ...
  int concurrency = 0;
  std::uint64_t issued = 0, completed = 0, errors = 0, rejected = 0;
  double duration_s = 0, achieved_qps = 0;
  bool minimums_met = true, interrupted = false;
  std::optional<double> target_qps;              // open loop only
  std::optional<PhaseLatency> latency_ms;        // none when nothing completed
  std::optional<std::uint64_t> waited_for_lane;  // open loop only
  std::optional<IssueLateness> issue_lateness_us;
  std::optional<std::vector<GroupLatency>> latency_by_group_ms;  // inputs in groups only
  std::optional<GenerationPhase> generation;                     // language models only
  std::uint64_t good_queries = 0;
  double goodput_qps = 0;
};

// One interval of the time series; latencies none when nothing completed in it.
struct IntervalRecord {
  double t_s = 0;
  std::uint64_t completed = 0, errors = 0;
  double throughput_per_s = 0;
  std::optional<double> p50_ms, p99_ms, max_ms;
};

nlohmann::json to_json(const PhaseRecord& phase);
nlohmann::json to_json(const std::vector<IntervalRecord>& series);
using TimeSeries = std::vector<IntervalRecord>;
// Throw infermark::Error naming `where` and the field.
PhaseRecord phase_record_from(const nlohmann::json& json, const std::string& where);
std::vector<IntervalRecord> time_series_from(const nlohmann::json& json, const std::string& where);
stats::LatencyHistogram latency_histogram_from(const nlohmann::json& json, const std::string& where);

}  // namespace infermark::result
