// Which framework on which machine: each cell's figure on its recommendation's objective, one
// column per machine (results from several machines only).
#pragma once

#include <string>
#include <vector>

#include "report/recommend.hpp"

namespace infermark::report {

// Rows: each model's cells in the order first seen; columns: machines; values: the objective's figure.
MachineMatrix machine_matrix_of(const std::vector<ModelRecommendation>& models, const std::vector<std::string>& machines,
                                const Constraints& constraints);

}  // namespace infermark::report
