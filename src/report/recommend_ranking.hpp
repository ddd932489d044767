// What a model's cells are ranked by, and the ranking: smaller key first, ties to the smaller
// peak RSS. (objective_name and objective_value are declared in recommend.hpp.)
#pragma once

#include <vector>

#include "report/recommend.hpp"

namespace infermark::report {

// Smaller is better for every objective; a cell that did not complete ranks last.
double objective_key(const CellAssessment& cell, Objective o);

void rank(std::vector<CellAssessment>& cells, Objective o);

// Energy where asked for and known for every feasible cell; throughput for a rate without a
// latency bound; else latency.
Objective choose_objective(const Constraints& c, const std::vector<CellAssessment>& feasible);

}  // namespace infermark::report
