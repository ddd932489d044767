// The LLM serving table (*AI model inference framework performance testing, a panoramic analysis*: throughput req/s, P99 ms, memory GB, TTFT ms at each
// concurrency), with time per output token and token rates, for results of the generation scenario.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "result/run_result.hpp"

namespace infermark::report {

bool is_generation_result(const result::RunResult& result);

// The model's parameter count, where the backend recorded it (llama.cpp's effective setting
// "parameters"); nullopt in results that lack it.
std::optional<double> model_parameters(const result::RunResult& result);

// Peak RSS in GB per billion parameters (the panoramic-analysis guide's baseline: 1.2), where both are known.
std::optional<double> gb_per_billion_parameters(const result::RunResult& result);

// One row per result, in the order given; results without generation metrics show their status.
std::string generation_table(const std::vector<result::RunResult>& results);

}  // namespace infermark::report
