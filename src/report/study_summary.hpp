// What a study concludes: the best cell per backend, the latency/throughput Pareto frontier, and,
// for a threads axis, the best thread count against the seeds' "1.5 x physical cores" rule.
#pragma once

#include <string>
#include <vector>

#include "report/result_set.hpp"

namespace infermark::report {

// Indices of the cells no other cell beats on both P99 (lower) and throughput (higher).
std::vector<std::size_t> pareto_frontier(const std::vector<LoadedResult>& results);

std::string study_summary(const std::vector<LoadedResult>& results, const std::vector<std::string>& axis_flags);

// Whether any of the cells a guided search ran meets the P99 target.
bool search_found(const std::vector<LoadedResult>& ran, double p99_target_ms);

// A guided search's answer: the highest-throughput cell meeting the target (overall and per
// model and backend), the cells run against the full matrix, and the cells that missed the target.
std::string search_summary(const std::vector<LoadedResult>& ran, std::size_t matrix_size, double p99_target_ms);

}  // namespace infermark::report
