// After a comparison, each backend's saved outputs are compared with a reference backend's
// (same inputs), and the agreement is written into every result file.
#pragma once

#include <string>
#include <vector>

#include "harness/comparison.hpp"

namespace infermark::harness {

// The reference is `preferred` when it ran successfully, otherwise the first successful cell.
// Cells without saved outputs are left unchanged. Rewrites each updated result file.
void cross_check_outputs(std::vector<CellOutcome>& outcomes, const std::string& preferred);

}  // namespace infermark::harness
