// Whether a table's P99 figures rest on enough samples to claim them (MLPerf's early stopping at
// 99% confidence: 459 samples with none over, more with some): a note under the table naming the
// cells too short for the claim and the most their sample count supports, and for the others the
// early-stopping bound where the result kept its samples.
#pragma once

#include <string>
#include <vector>

#include "result/run_result.hpp"

namespace infermark::report {

constexpr double kClaimPercentile = 99.0;
constexpr double kClaimConfidence = 0.99;

// "" when every result is long enough and none kept its samples; else one note line (indented
// two spaces, ending in a newline). LLM cells are judged on their request count (TTFT and
// request latency have one sample per request).
std::string percentile_claim_note(const std::vector<result::RunResult>& results);

}  // namespace infermark::report
