// The Markdown tables, as the field guides tabulate them, that a team pastes into a decision
// document, per model:
// framework summary; threads x throughput; input shapes; instances x memory; precision x
// (latency, accuracy). A table is printed only when the results vary along its axis.
#pragma once

#include <string>
#include <vector>

#include "report/result_set.hpp"

namespace infermark::report {

std::string markdown_report(const std::vector<LoadedResult>& results);

// One row per cell, the main figures, RFC 4180 quoting.
std::string csv_report(const std::vector<LoadedResult>& results);

}  // namespace infermark::report
