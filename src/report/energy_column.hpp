// The inferences/J column of the comparison tables (*AI model inference framework performance evaluation* §3.2): a figure only where a cell
// measured energy, "-" elsewhere with one footnote saying why, never a zero.
#pragma once

#include <string>
#include <vector>

#include "result/run_result.hpp"

namespace infermark::report {

// True when at least one cell measured energy, so the column is worth a place in the table.
bool any_energy_measured(const std::vector<const result::RunResult*>& cells);

// "412.3", or "-" where the cell did not measure energy.
std::string inferences_per_joule_cell(const result::RunResult& result);

// One line, "" when every completed cell measured energy: "inferences/J not measured here for 2 of
// 3 cells: <the sampler's reason>; it needs ...". Failed cells are not counted: they measured nothing.
std::string energy_footnote(const std::vector<const result::RunResult*>& cells);

}  // namespace infermark::report
