// The "Why" list of one model's recommendation: the pick and its runner-up, the tightest
// constraint, which cells the given constraints leave in, the figures asked for, and caveats
// (batch mix, measured-rate throughput, energy unknown, how accuracy was judged).
#pragma once

#include <string>
#include <vector>

#include "report/recommend.hpp"

namespace infermark::report {

using CellRefs = std::vector<const CellAssessment*>;

std::vector<std::string> explain(const ModelRecommendation& m, Objective o, const Constraints& c, const CellRefs& completed);

}  // namespace infermark::report
