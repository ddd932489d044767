// The A/B table of a serve session: every variant of a model against its control (the variant
// with the largest traffic weight), on the live requests each served, with the same significance
// tests as `compare` (Mann-Whitney U on P50, bootstrap interval of the P99 ratio).
#pragma once

#include <string>
#include <vector>

#include "report/result_set.hpp"

namespace infermark::report {

// Also each variant's shadow comparisons by input shape. "" when no serve result has either.
std::string ab_table(const std::vector<LoadedResult>& cells);

}  // namespace infermark::report
