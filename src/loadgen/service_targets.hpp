// Service-level objectives a query must meet to count towards goodput: end-to-end latency for
// every system, time to first token and time per output token for streaming ones (LLMs).
#pragma once

#include <cstdint>

namespace infermark::loadgen {

struct ServiceTargets {
  std::int64_t e2e_ns = 0;  // 0: no target
  std::int64_t ttft_ns = 0;
  std::int64_t tpot_ns = 0;
};

}  // namespace infermark::loadgen
