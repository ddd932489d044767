// Varying shapes: parsing --shape-range, bucketing, the seeded per-query draws, and the input
// sets made from them.
#include "core/shape_range.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "core/input_generator.hpp"
#include "result/cell_json.hpp"

namespace infermark {
namespace {

std::string error_of(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ShapeRange, ParsesFixedRangedAndBucketedDimensions) {
  const auto range = parse_shape_range("1x3x160-288x160-288/32", "--shape-range input=...");
  ASSERT_EQ(range.size(), 4u);
  EXPECT_EQ(range[0], (DimRange{1, 1, 0}));
  EXPECT_EQ(range[2], (DimRange{160, 288, 0}));
  EXPECT_EQ(range[3], (DimRange{160, 288, 32}));
  EXPECT_TRUE(varies(range));
  EXPECT_FALSE(varies(parse_shape_range("1x3x224x224", "x")));
  EXPECT_EQ(format_shape_range(range), "1x3x160-288x160-288/32");
}

TEST(ShapeRange, MalformedRangesNameTheFlag) {
  for (const std::string bad : {"1x3x288-160", "1xx3", "1x3x160-", "0x3", "1x3xabc", "1x3x224/32", "1x16-128/0"}) {
    const auto message = error_of([&] { parse_shape_range(bad, "--shape-range input=" + bad); });
    EXPECT_NE(message.find("--shape-range input=" + bad), std::string::npos) << bad << ": " << message;
  }
}

TEST(ShapeRange, BucketsRoundUpAndStayInTheRange) {
  const DimRange dim{160, 288, 32};
  EXPECT_EQ(round_up_to_bucket(160, dim), 160);
  EXPECT_EQ(round_up_to_bucket(161, dim), 192);
  EXPECT_EQ(round_up_to_bucket(288, dim), 288);
  const DimRange odd{100, 250, 64};
  EXPECT_EQ(round_up_to_bucket(200, odd), 250);  // 256 would leave the range
  EXPECT_EQ(round_up_to_bucket(123, DimRange{100, 250, 0}), 123);
}

TEST(ShapeRange, DrawsAreSeededCoverTheRangeAndHonourBuckets) {
  VaryingShapes shapes{{{"input", parse_shape_range("1x3x160-288x160-288", "x")}}, 400};
  const auto a = draw_shapes(shapes, 42), b = draw_shapes(shapes, 42), c = draw_shapes(shapes, 43);
  ASSERT_EQ(a.size(), 400u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<std::int64_t> heights;
  bool non_square = false;
  for (const auto& set : a) {
    const auto& shape = set.at("input");
    ASSERT_EQ(shape.size(), 4u);
    EXPECT_EQ(shape[0], 1);
    EXPECT_EQ(shape[1], 3);
    EXPECT_GE(shape[2], 160);
    EXPECT_LE(shape[2], 288);
    heights.insert(shape[2]);
    non_square = non_square || shape[2] != shape[3];
  }
  EXPECT_GT(heights.size(), 80u);  // 129 possible sizes, 400 draws
  EXPECT_TRUE(non_square);         // height and width are drawn apart

  shapes.ranges["input"] = parse_shape_range("1x3x160-288/32x160-288/32", "x");
  std::set<std::int64_t> bucketed_heights;
  for (const auto& set : draw_shapes(shapes, 42)) bucketed_heights.insert(set.at("input")[2]);
  EXPECT_EQ(bucketed_heights, (std::set<std::int64_t>{160, 192, 224, 256, 288}));
  EXPECT_TRUE(bucketed(shapes));
}

TEST(ShapeRange, InputsVaryingOneDimensionShareEachDraw) {
  const auto seq = parse_shape_range("1x16-128", "x");
  const VaryingShapes shapes{{{"input_ids", seq}, {"attention_mask", seq}, {"token_type_ids", seq}}, 50};
  std::set<std::int64_t> lengths;
  for (const auto& set : draw_shapes(shapes, 7)) {
    EXPECT_EQ(set.at("input_ids"), set.at("attention_mask"));
    EXPECT_EQ(set.at("input_ids"), set.at("token_type_ids"));
    lengths.insert(set.at("input_ids")[1]);
  }
  EXPECT_GT(lengths.size(), 20u);
  const VaryingShapes clash{{{"input_ids", seq}, {"attention_mask", parse_shape_range("1x16-64", "x")}}, 4};
  EXPECT_NE(error_of([&] { draw_shapes(clash, 7); }).find("vary dimension 1 differently"), std::string::npos);
}

TensorSpec image_spec() { return {"input", DType::kFloat32, {-1, 3, -1, -1}, {"batch", "", "height", "width"}}; }

TEST(ShapeRange, InputSetsHaveTheDrawnShapesAndTheirOwnData) {
  InputRequest request;
  request.varying = {{{"input", parse_shape_range("1x3x16-40x16-40", "x")}}, 6};
  const auto sets = generate_input_sets({image_spec()}, request);
  ASSERT_EQ(sets.size(), 6u);
  const auto draws = draw_shapes(request.varying, request.seed);
  for (std::size_t s = 0; s < sets.size(); ++s) {
    ASSERT_EQ(sets[s].size(), 1u);
    EXPECT_EQ(sets[s][0].shape, draws[s].at("input"));
    EXPECT_EQ(sets[s][0].data.size(), sets[s][0].element_count() * 4);
  }
  EXPECT_NE(sets[0][0].data, sets[1][0].data);
  EXPECT_EQ(generate_input_sets({image_spec()}, request)[3][0].data, sets[3][0].data);  // reproducible

  InputRequest fixed;
  fixed.shape_overrides["input"] = {1, 3, 8, 8};
  EXPECT_EQ(generate_input_sets({image_spec()}, fixed).size(), 1u);
}

TEST(ShapeRange, RangesThatDoNotFitTheModelAreRefused) {
  InputRequest request;
  request.varying = {{{"input", parse_shape_range("1x3x16-40", "x")}}, 4};
  EXPECT_NE(error_of([&] { generate_input_sets({image_spec()}, request); }).find("has rank 4"), std::string::npos);
  request.varying.ranges["input"] = parse_shape_range("1x1-3x16-40x16-40", "x");
  EXPECT_NE(error_of([&] { generate_input_sets({image_spec()}, request); }).find("is fixed at 3 in the model"),
            std::string::npos);
  request.varying.ranges = {{"pixels", parse_shape_range("1x3x16-40x16-40", "x")}};
  EXPECT_NE(error_of([&] { generate_input_sets({image_spec()}, request); }).find("no input named 'pixels'"), std::string::npos);
  request.varying.ranges = {{"input", parse_shape_range("1x3x16-40x16-40", "x")}};
  request.shape_overrides["input"] = {1, 3, 8, 8};
  EXPECT_NE(error_of([&] { generate_input_sets({image_spec()}, request); }).find("--shape and --shape-range"), std::string::npos);
}

// A worker gets its cell as JSON: the ranges and the set count must survive the trip.
TEST(ShapeRange, CellRequestsCarryTheRangesToTheWorker) {
  result::CellRequest cell;
  cell.backend = "onnxruntime";
  cell.model = "m.onnx";
  cell.inputs.varying = {{{"input", parse_shape_range("1x3x160-288/32x160-288", "x")}}, 12};
  const auto back = result::cell_from_json(result::to_json(cell));
  EXPECT_EQ(back.inputs.varying.ranges, cell.inputs.varying.ranges);
  EXPECT_EQ(back.inputs.varying.sets, 12);
  const result::CellRequest defaults;  // named: GCC 12 warns falsely of uninitialised members in a temporary
  auto fixed = result::to_json(defaults);
  fixed["inputs"].erase("shape_ranges");  // a cell written before --shape-range existed
  EXPECT_FALSE(result::cell_from_json(fixed).inputs.varying.active());
}

}  // namespace
}  // namespace infermark
