// The OCR handoff's geometry: text regions of a probability map become rotated rectangles in
// reading order, and the image under each is cut out as an upright line of the recogniser's size.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "pipeline/text_crops.hpp"

namespace infermark::pipeline {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct Map {
  std::int64_t height, width;
  std::vector<float> values;
  Map(std::int64_t h, std::int64_t w) : height(h), width(w), values(static_cast<std::size_t>(h * w), 0.0f) {}
  // Marks the pixels whose centres lie in the rectangle centred at (cx, cy), `length` x `thickness`,
  // its long side turned `degrees` from the x axis.
  void fill(double cx, double cy, double length, double thickness, double degrees, float value = 0.9f) {
    const double a = degrees * kPi / 180, ux = std::cos(a), uy = std::sin(a);
    for (std::int64_t y = 0; y < height; ++y)
      for (std::int64_t x = 0; x < width; ++x) {
        const double dx = static_cast<double>(x) + 0.5 - cx, dy = static_cast<double>(y) + 0.5 - cy;
        if (std::abs(dx * ux + dy * uy) <= length / 2 && std::abs(-dx * uy + dy * ux) <= thickness / 2)
          values[static_cast<std::size_t>(y * width + x)] = value;
      }
  }
};

double side(const Point& a, const Point& b) { return std::hypot(b.x - a.x, b.y - a.y); }

TEST(TextCrops, FindsEachLineAsAGrownRectangleInReadingOrder) {
  Map map(120, 200);
  map.fill(140, 80, 80, 10, 0);  // lower line
  map.fill(60, 30, 100, 12, 0);  // upper line
  TextCropSettings settings;
  const auto boxes = find_text_boxes(map.values.data(), map.height, map.width, settings);
  ASSERT_EQ(boxes.size(), 2U);
  EXPECT_LT(boxes[0].corners[0].y, boxes[1].corners[0].y);  // the upper line first
  // 100 x 12 grown by DB's unclip: d = 100 * 12 * 1.5 / (2 * 112) on every side.
  const double d = 100.0 * 12 * 1.5 / (2 * 112);
  EXPECT_NEAR(side(boxes[0].corners[0], boxes[0].corners[1]), 100 + 2 * d, 1.0);
  EXPECT_NEAR(side(boxes[0].corners[0], boxes[0].corners[3]), 12 + 2 * d, 1.0);
  EXPECT_NEAR(boxes[0].score, 0.9, 1e-6);
  // Corners run top-left, top-right, bottom-right, bottom-left.
  EXPECT_LT(boxes[0].corners[0].x, boxes[0].corners[1].x);
  EXPECT_LT(boxes[0].corners[1].y, boxes[0].corners[2].y);
}

TEST(TextCrops, LinesAtTheSameHeightReadLeftToRight) {
  Map map(60, 200);
  map.fill(150, 30, 60, 10, 0);
  map.fill(40, 32, 60, 10, 0);  // two pixels lower, but to the left: read first
  const auto boxes = find_text_boxes(map.values.data(), map.height, map.width, TextCropSettings{});
  ASSERT_EQ(boxes.size(), 2U);
  EXPECT_LT(boxes[0].corners[0].x, boxes[1].corners[0].x);
}

TEST(TextCrops, ARotatedLineKeepsItsAngleAndWeakOrThinRegionsAreDropped) {
  Map map(200, 200);
  map.fill(100, 100, 120, 14, 20);
  map.fill(30, 180, 40, 10, 0, 0.4f);  // above the threshold, below the box score
  map.fill(170, 20, 40, 1, 0);         // one pixel thin: noise
  const auto boxes = find_text_boxes(map.values.data(), map.height, map.width, TextCropSettings{});
  ASSERT_EQ(boxes.size(), 1U);
  const auto& c = boxes[0].corners;
  EXPECT_NEAR(std::atan2(c[1].y - c[0].y, c[1].x - c[0].x) * 180 / kPi, 20.0, 2.0);
}

TEST(TextCrops, CropsTheImageUnderEachBoxAtTheLineSizeAndPadsTheRest) {
  // A horizontal line 10 px high whose pixels hold their own x coordinate: the crop, scaled to
  // height 48, must read increasing x from left to right and zeros past the line's width.
  const std::int64_t h = 40, w = 120;
  Map map(h, w);
  map.fill(60, 20, 80, 10, 0);
  std::vector<float> image(static_cast<std::size_t>(3 * h * w));
  for (std::int64_t c = 0; c < 3; ++c)
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x) image[static_cast<std::size_t>((c * h + y) * w + x)] = static_cast<float>(x);
  const auto bytes = [](const std::vector<float>& v) {
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(v.data()), v.size() * 4);
  };
  TextCropSettings settings;
  settings.max_lines = 3;
  const auto crops = crop_text_lines({"x", DType::kFloat32, {1, 3, h, w}, bytes(image)},
                                     {"map", DType::kFloat32, {1, 1, h, w}, bytes(map.values)}, settings);
  EXPECT_EQ(crops.count, 1);
  EXPECT_EQ(crops.found, 1);
  ASSERT_EQ(crops.lines.shape, (std::vector<std::int64_t>{3, 3, 48, 320}));
  const auto* out = crops.lines.as<float>();
  const auto at = [&](int line, int c, int y, int x) { return out[((line * 3 + c) * 48 + y) * 320 + x]; };
  // The grown box is about 80 + 2d wide and 10 + 2d high (d = 5.3): width at height 48 ~ 177.
  EXPECT_LT(at(0, 0, 24, 0), 20.0f);
  EXPECT_GT(at(0, 0, 24, 170), 95.0f);
  for (int x = 1; x < 170; ++x) EXPECT_GE(at(0, 1, 24, x), at(0, 1, 24, x - 1)) << "x " << x;
  EXPECT_EQ(at(0, 2, 24, 300), 0.0f);  // padding
  EXPECT_EQ(at(1, 0, 24, 10), 0.0f);   // an unused line
}

TEST(TextCrops, KeepsAtMostMaxLinesAndSaysHowManyItFound) {
  Map map(200, 100);
  for (int i = 0; i < 5; ++i) map.fill(50, 20 + 35.0 * i, 60, 10, 0);
  std::vector<float> image(static_cast<std::size_t>(3 * 200 * 100), 0.5f);
  const auto bytes = [](const std::vector<float>& v) {
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(v.data()), v.size() * 4);
  };
  TextCropSettings settings;
  settings.max_lines = 2;
  const auto crops = crop_text_lines({"x", DType::kFloat32, {1, 3, 200, 100}, bytes(image)},
                                     {"map", DType::kFloat32, {1, 1, 200, 100}, bytes(map.values)}, settings);
  EXPECT_EQ(crops.found, 5);
  EXPECT_EQ(crops.count, 2);
}

TEST(TextCrops, RefusesTensorsItCannotReadNamingThem) {
  std::vector<float> data(16, 0.0f);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data.data()), data.size() * 4);
  try {
    (void)crop_text_lines({"x", DType::kFloat32, {1, 1, 4, 4}, bytes}, {"probs", DType::kFloat32, {2, 1, 2, 4}, bytes}, {});
    FAIL() << "a batch of two maps was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'probs'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace infermark::pipeline
