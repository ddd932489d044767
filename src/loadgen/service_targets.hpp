// Service-level objectives a query must meet to count towards goodput: end-to-end latency for
// every system, time to first token and time per output token for streaming ones (LLMs).
#pragma once

#include <cstdint>
#include <optional>

namespace infermark::loadgen {

struct ServiceTargets {
  std::int64_t e2e_ns = 0;  // 0: no target
  std::int64_t ttft_ns = 0;
  std::int64_t tpot_ns = 0;
};

// What a streamed request is judged on, ns. Results keep these per request so that a report can
// count goodput again under other targets and agree with the run's own count.
struct RequestLatencies {
  std::int64_t ttft_ns = 0;
  std::int64_t e2e_ns = 0;
  std::optional<std::int64_t> tpot_ns;  // none when only one token followed the prompt
};

// A target of 0 is none; a request with no TPOT cannot miss a TPOT target.
inline bool within(std::int64_t target_ns, std::int64_t value_ns) { return target_ns == 0 || value_ns <= target_ns; }
inline bool meets(const ServiceTargets& targets, const RequestLatencies& request) {
  return within(targets.e2e_ns, request.e2e_ns) && within(targets.ttft_ns, request.ttft_ns) &&
         (!request.tpot_ns || within(targets.tpot_ns, *request.tpot_ns));
}

}  // namespace infermark::loadgen
