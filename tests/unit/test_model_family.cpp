// Model families of the run's cross-check: a model and its precision variants, and the zoo's
// OpenCV exports (efficientnet_lite0_opencv, efficientnet_lite0_opencv_int8), share one reference.
#include <gtest/gtest.h>

#include "harness/cross_check.hpp"

namespace infermark::harness {
namespace {

TEST(ModelFamily, StripsPrecisionAndOpenCvExportSuffixes) {
  EXPECT_EQ(model_family("tiny_cnn"), "tiny_cnn");
  EXPECT_EQ(model_family("tiny_cnn_fp16"), "tiny_cnn");
  EXPECT_EQ(model_family("smollm2-135m_q4_0"), "smollm2-135m");
  EXPECT_EQ(model_family("efficientnet_lite0_opencv"), "efficientnet_lite0");
  EXPECT_EQ(model_family("efficientnet_lite0_opencv_int8"), "efficientnet_lite0");
  EXPECT_EQ(model_family("_int8"), "_int8");  // a suffix alone is a name, not a variant
}

}  // namespace
}  // namespace infermark::harness
