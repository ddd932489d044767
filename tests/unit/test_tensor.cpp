#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace infermark {

TEST(Tensor, DTypeNamesRoundTripWithSizes) {
  for (auto d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt8, DType::kUInt8,
                 DType::kInt16, DType::kInt32, DType::kInt64, DType::kBool})
    EXPECT_EQ(parse_dtype(dtype_name(d)), d);
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_THROW(parse_dtype("float8"), Error);
}

TEST(Tensor, ParsesShapes) {
  EXPECT_EQ(parse_shape("1x3x224x224", "--shape"), (std::vector<std::int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(parse_shape("4,128", "--shape"), (std::vector<std::int64_t>{4, 128}));
  EXPECT_EQ(parse_shape("7", "--shape"), (std::vector<std::int64_t>{7}));
}

TEST(Tensor, RejectsBadShapesNamingTheFlag) {
  for (const char* bad : {"", "1x", "x3", "1x0x2", "1x-3", "1xabc", "1.5x2"}) {
    try {
      parse_shape(bad, "--shape input=...");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--shape input"), std::string::npos) << e.what();
    }
  }
}

TEST(Tensor, FormatsDynamicDimsByName) {
  EXPECT_EQ(format_shape({-1, 3, 224, 224}, {"batch", "", "", ""}), "batchx3x224x224");
  EXPECT_EQ(format_shape({-1, 10}), "?x10");
  EXPECT_EQ(element_count({2, 3, 4}), 24u);
  EXPECT_TRUE((TensorSpec{"x", DType::kFloat32, {-1, 3}, {}}).is_dynamic());
  EXPECT_FALSE((TensorSpec{"x", DType::kFloat32, {1, 3}, {}}).is_dynamic());
}

}  // namespace infermark
