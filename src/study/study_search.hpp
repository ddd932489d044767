// `sweep --search` over a whole study: the cells of one (model, backend) form the grid of the
// study's axes (expand() lays them out in odometer order), and each such group is walked by the
// guided search in turn. Measuring is the caller's: a visited cell runs exactly as the sweep would
// run it (same worker, same result file), so results are resumed and shared with a full sweep.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "result/run_result.hpp"
#include "study/study.hpp"

namespace infermark::study {

// Measures cell `index` of expand()'s list; nullopt when interrupted, which ends the search.
using MeasureStudyCell = std::function<std::optional<result::RunResult>(std::size_t index)>;

// Walks every group of `cell_count` cells (a multiple of the axes' grid) for the highest
// throughput meeting `p99_target_ms`; returns the indices of the cells measured, in order.
std::vector<std::size_t> search_study(const Study& study, std::size_t cell_count, double p99_target_ms,
                                      const MeasureStudyCell& measure);

}  // namespace infermark::study
