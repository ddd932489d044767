// The serving metrics of an LLM run, from its request records: time to first token, time per
// output token, inter-token latency, end-to-end latency, and token and request rates.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loadgen/generation.hpp"
#include "loadgen/system_under_test.hpp"
#include "stats/latency_summary.hpp"

namespace infermark::loadgen {

// TTFT of a shared-prefix workload's requests apart by whether their prefix was issued before.
struct PrefixSplit {
  std::size_t warm = 0, cold = 0;  // requests of each kind
  std::optional<stats::LatencySummary> ttft_warm_ms, ttft_cold_ms;
  double warm_share() const { return warm + cold > 0 ? static_cast<double>(warm) / static_cast<double>(warm + cold) : 0.0; }
};

// The requests of one latency group (a conversation's turn): how many, their mean prompt length,
// their TTFT and end-to-end latency.
struct GroupGeneration {
  std::string label;  // the library's name for the group, set by whoever holds the library
  std::size_t requests = 0;
  double prompt_tokens_mean = 0;
  std::optional<stats::LatencySummary> ttft_ms, e2e_ms;
};

struct GenerationMetrics {
  std::size_t requests = 0;
  long long prompt_tokens = 0;  // totals over the recorded requests
  long long output_tokens = 0;
  double wall_s = 0;
  int steps = 0;
  std::optional<stats::LatencySummary> ttft_ms;  // start (queued on a slot) to first output token
  std::optional<stats::LatencySummary> tpot_ms;  // per request: (last - first token) / (M - 1); M > 1 only
  std::optional<stats::LatencySummary> itl_ms;   // every gap between consecutive tokens of a request
  std::optional<stats::LatencySummary> e2e_ms;   // start to last token
  double prefill_tokens_per_s = 0;               // prompt tokens / time to first token, summed over requests
  double decode_tokens_per_s = 0;                // per sequence: tokens after the first / time spent producing them
  double output_tokens_per_s = 0;                // the whole system: every output token / wall time
  double requests_per_s = 0;
  std::optional<PrefixSplit> prefix;      // shared-prefix workloads only
  std::vector<GroupGeneration> by_group;  // only where requests fall in more than one group, indexed by group
};

// The metrics of one phase's streamed requests, with `wall_s` its duration.
GenerationMetrics summarize_requests(const std::vector<RequestRecord>& requests, double wall_s);
// Names each of `metrics.by_group` as `library` names its group.
void label_groups(GenerationMetrics& metrics, const SampleLibrary& library);

}  // namespace infermark::loadgen
