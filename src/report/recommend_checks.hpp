// What the given limits and preferences say of one cell: each check met, failed (and how far past
// its limit) or not judgeable; a cell that did not complete fails on its status.
#pragma once

#include <vector>

#include "report/recommend.hpp"

namespace infermark::report {

std::vector<ConstraintCheck> checks_for(const CellAssessment& cell, const result::RunResult& r, const Constraints& c);

}  // namespace infermark::report
