// After a comparison, each backend's saved outputs are compared with a reference backend's
// (same inputs), and the agreement is written into every result file.
#pragma once

#include <string>
#include <vector>

#include "harness/comparison.hpp"

namespace infermark::harness {

// Cells are compared within a model family (a model and its _fp16/_int8/... variants, so the
// agreement of a reduced-precision file is its accuracy against the full-precision one). The
// reference of a family is its first `preferred`-backend cell that ran, else its first cell that
// ran. Cells without saved outputs are left unchanged. Rewrites each updated result file.
void cross_check_outputs(std::vector<CellOutcome>& outcomes, const std::string& preferred);

// "tiny_cnn" for tiny_cnn, tiny_cnn_fp16 and tiny_cnn_int8; "efficientnet_lite0" also for
// efficientnet_lite0_opencv and efficientnet_lite0_opencv_int8 (exported for OpenCV DNN).
std::string model_family(const std::string& model_name);

}  // namespace infermark::harness
