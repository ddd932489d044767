#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/input_generator.hpp"

namespace infermark {
namespace {

TensorSpec image_spec() { return {"input", DType::kFloat32, {-1, 3, 8, 8}, {"batch", "", "", ""}}; }

std::string error_of(const std::vector<TensorSpec>& specs, const InputRequest& request) {
  try {
    generate_inputs(specs, request);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(InputGenerator, FillsDynamicBatchFromRequest) {
  InputRequest request;
  request.batch = 4;
  auto inputs = generate_inputs({image_spec()}, request);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].shape, (std::vector<std::int64_t>{4, 3, 8, 8}));
  EXPECT_EQ(inputs[0].data.size(), 4u * 3 * 8 * 8 * sizeof(float));
}

TEST(InputGenerator, SameSeedSameData_DifferentSeedDifferentData) {
  InputRequest a, b, c;
  c.seed = 43;
  const auto x = generate_inputs({image_spec()}, a), y = generate_inputs({image_spec()}, b),
             z = generate_inputs({image_spec()}, c);
  EXPECT_EQ(x[0].data, y[0].data);
  EXPECT_NE(x[0].data, z[0].data);
}

TEST(InputGenerator, FloatsAreStandardNormal) {
  InputRequest request;
  request.shape_overrides["input"] = {16, 3, 8, 8};
  const auto t = generate_inputs({image_spec()}, request)[0];
  double sum = 0, sum_sq = 0;
  const auto n = t.element_count();
  for (std::size_t i = 0; i < n; ++i) {
    sum += t.as<float>()[i];
    sum_sq += t.as<float>()[i] * t.as<float>()[i];
  }
  const double mean = sum / n, var = sum_sq / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(var, 1.0, 0.1);
}

TEST(InputGenerator, IntegersStayInRange) {
  TensorSpec ids{"input_ids", DType::kInt64, {1, 512}, {}};
  InputRequest request;
  request.int_high = 30;
  const auto t = generate_inputs({ids}, request)[0];
  std::int64_t lo = 1 << 30, hi = -1;
  for (std::size_t i = 0; i < t.element_count(); ++i) {
    lo = std::min(lo, t.as<std::int64_t>()[i]);
    hi = std::max(hi, t.as<std::int64_t>()[i]);
  }
  EXPECT_GE(lo, 0);
  EXPECT_LT(hi, 30);
  EXPECT_GT(hi, 20);  // the range is actually used
}

TEST(InputGenerator, DynamicNonBatchDimNeedsShapeFlag) {
  TensorSpec spec{"input", DType::kFloat32, {-1, 3, -1, -1}, {"batch", "", "height", "width"}};
  const auto message = error_of({spec}, {});
  EXPECT_NE(message.find("input 'input'"), std::string::npos) << message;
  EXPECT_NE(message.find("'height'"), std::string::npos) << message;
  EXPECT_NE(message.find("--shape input="), std::string::npos) << message;

  InputRequest request;
  request.shape_overrides["input"] = {2, 3, 32, 48};
  EXPECT_EQ(generate_inputs({spec}, request)[0].shape, (std::vector<std::int64_t>{2, 3, 32, 48}));
}

TEST(InputGenerator, OverrideMustMatchModel) {
  InputRequest wrong_rank, wrong_fixed, unknown_name;
  wrong_rank.shape_overrides["input"] = {1, 3, 8};
  wrong_fixed.shape_overrides["input"] = {1, 4, 8, 8};
  unknown_name.shape_overrides["pixels"] = {1, 3, 8, 8};
  EXPECT_NE(error_of({image_spec()}, wrong_rank).find("rank 4"), std::string::npos);
  EXPECT_NE(error_of({image_spec()}, wrong_fixed).find("fixed at 3"), std::string::npos);
  EXPECT_NE(error_of({image_spec()}, unknown_name).find("no input named 'pixels'"), std::string::npos);
}

TEST(InputGenerator, FixedBatchRejectsOtherBatch) {
  TensorSpec spec{"input", DType::kFloat32, {1, 3}, {}};
  InputRequest request;
  request.batch = 8;
  EXPECT_NE(error_of({spec}, request).find("fixed batch dimension of 1"), std::string::npos);
}

}  // namespace infermark

#include <fstream>

#include "core/model_manifest.hpp"

namespace infermark {

TEST(InputGenerator, PerInputRangesFromTheManifest) {
  const auto dir = std::filesystem::temp_directory_path() / "infermark_manifest_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "bert.json") << R"({"inputs": [{"name": "input_ids", "dtype": "int64", "shape": [1, 8],
                                          "value_range": [100, 110]}, {"name": "mask", "dtype": "int64", "shape": [1, 8]}]})";
  InputRequest request;
  request.int_ranges = read_value_ranges(dir / "bert.onnx");
  ASSERT_EQ(request.int_ranges.size(), 1u);
  const auto inputs = generate_inputs({{"input_ids", DType::kInt64, {1, 512}, {}}, {"mask", DType::kInt64, {1, 8}, {}}}, request);
  for (std::size_t i = 0; i < inputs[0].element_count(); ++i) {
    EXPECT_GE(inputs[0].as<std::int64_t>()[i], 100);
    EXPECT_LT(inputs[0].as<std::int64_t>()[i], 110);
  }
  EXPECT_TRUE(read_value_ranges(dir / "absent.onnx").empty());
  std::ofstream(dir / "broken.json") << "{ not json";
  EXPECT_THROW(read_value_ranges(dir / "broken.onnx"), Error);
  std::filesystem::remove_all(dir);
}

}  // namespace infermark
