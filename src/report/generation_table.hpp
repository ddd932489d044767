// The LLM serving table (seed 003's: throughput req/s, P99 ms, memory GB, TTFT ms at each
// concurrency), with time per output token and token rates, for results of the generation scenario.
#pragma once

#include <string>
#include <vector>

#include "report/run_result.hpp"

namespace infermark::report {

bool is_generation_result(const RunResult& result);

// One row per result, in the order given; results without generation metrics show their status.
std::string generation_table(const std::vector<RunResult>& results);

}  // namespace infermark::report
