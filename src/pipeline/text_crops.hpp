// The OCR handoff between a text detector and a text recogniser (PaddleOCR's DB post-processing):
// the detector's probability map is binarised, each connected region becomes the smallest
// rotated rectangle around it, grown by the unclip ratio, and the image under that rectangle is
// cut out (a perspective crop: the rectangle's corners mapped onto an upright line), scaled to the
// recogniser's line height and padded to its width. Lines are ordered top to bottom, then left to
// right, so the recognised text reads as the page does.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "pipeline/pipeline_message.hpp"

namespace infermark::pipeline {

struct TextCropSettings {
  double threshold = 0.3;     // map value above which a pixel is text (DB's binarisation)
  double box_score = 0.6;     // mean map value a region needs to count as a line
  double unclip_ratio = 1.5;  // grows a box by area x ratio / perimeter on every side, as DB does
  int min_side = 3;           // regions thinner than this (pixels) are noise
  int max_lines = 8;          // lines handed on per image; the recogniser's batch
  int line_height = 48;       // the recogniser's input height
  int line_width = 320;       // its input width: longer lines are squeezed, shorter padded
};

nlohmann::json to_json(const TextCropSettings& settings);
TextCropSettings text_crop_settings_from_json(const nlohmann::json& json);

struct Point {
  double x = 0, y = 0;
};

// A rotated rectangle in image pixels: corners top-left, top-right, bottom-right, bottom-left as
// the text reads.
struct TextBox {
  std::array<Point, 4> corners;
  double score = 0;  // mean map value inside the region
};

// The boxes of one image's probability map (`height` x `width` floats), in reading order.
std::vector<TextBox> find_text_boxes(const float* map, std::int64_t height, std::int64_t width, const TextCropSettings& settings);

// What the detector hands the recogniser for one request.
struct TextCrops {
  Tensor lines;   // [max_lines, channels, line_height, line_width], float32; unused lines are 0
  int count = 0;  // lines found (at most max_lines)
  int found = 0;  // boxes the map held, before the max_lines cut
};

// Cuts the lines of `image` ([1, C, H, W] float32, already normalised as the recogniser wants)
// under the boxes of `map` ([1, 1, H, W] float32). Throws infermark::Error naming the tensor for
// a shape or dtype it cannot use.
TextCrops crop_text_lines(const TensorView& image, const TensorView& map, const TextCropSettings& settings);

}  // namespace infermark::pipeline
