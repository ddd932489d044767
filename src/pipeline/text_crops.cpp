#include "pipeline/text_crops.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.hpp"

namespace infermark::pipeline {
namespace {

double cross(const Point& o, const Point& a, const Point& b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

// Andrew's monotone chain; `points` is sorted and deduplicated in place.
std::vector<Point> convex_hull(std::vector<Point>& points) {
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  points.erase(std::unique(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x == b.x && a.y == b.y; }),
               points.end());
  if (points.size() < 3) return points;
  std::vector<Point> hull(2 * points.size());
  std::size_t k = 0;
  for (const auto& p : points) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], p) <= 0) --k;
    hull[k++] = p;
  }
  for (std::size_t i = points.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(hull[k - 2], hull[k - 1], points[i]) <= 0) --k;
    hull[k++] = points[i];
  }
  hull.resize(k - 1);
  return hull;
}

// A rectangle as centre, unit axis along its longer side, and side lengths.
struct Rectangle {
  Point centre;
  Point along;  // unit, pointing right (x >= 0)
  double length = 0, thickness = 0;
};

// The smallest-area rectangle around the hull: one of its sides lies on a hull edge.
Rectangle minimum_area_rectangle(const std::vector<Point>& hull) {
  Rectangle best;
  double best_area = std::numeric_limits<double>::max();
  const std::size_t n = hull.size();
  for (std::size_t i = 0; i < n; ++i) {
    const Point& a = hull[i];
    const Point& b = hull[(i + 1) % n];
    const double len = std::hypot(b.x - a.x, b.y - a.y);
    if (len == 0) continue;
    const Point u{(b.x - a.x) / len, (b.y - a.y) / len};
    const Point v{-u.y, u.x};
    double u_min = std::numeric_limits<double>::max(), u_max = -u_min, v_min = u_min, v_max = -u_min;
    for (const auto& p : hull) {
      const double pu = p.x * u.x + p.y * u.y, pv = p.x * v.x + p.y * v.y;
      u_min = std::min(u_min, pu), u_max = std::max(u_max, pu);
      v_min = std::min(v_min, pv), v_max = std::max(v_max, pv);
    }
    const double area = (u_max - u_min) * (v_max - v_min);
    if (area >= best_area) continue;
    best_area = area;
    const double cu = (u_min + u_max) / 2, cv = (v_min + v_max) / 2;
    best.centre = {cu * u.x + cv * v.x, cu * u.y + cv * v.y};
    const bool u_longer = u_max - u_min >= v_max - v_min;
    best.along = u_longer ? u : v;
    best.length = u_longer ? u_max - u_min : v_max - v_min;
    best.thickness = u_longer ? v_max - v_min : u_max - u_min;
  }
  if (best.along.x < 0 || (best.along.x == 0 && best.along.y < 0)) best.along = {-best.along.x, -best.along.y};
  return best;
}

TextBox corners_of(const Rectangle& r, double score) {
  const Point u = r.along;
  const Point v{-u.y, u.x};  // u points right, so v points down the page
  const double hu = r.length / 2, hv = r.thickness / 2;
  auto at = [&](double su, double sv) {
    return Point{r.centre.x + su * hu * u.x + sv * hv * v.x, r.centre.y + su * hu * u.y + sv * hv * v.y};
  };
  return {{at(-1, -1), at(1, -1), at(1, 1), at(-1, 1)}, score};
}

// PaddleOCR's order: by top edge, then left to right among boxes whose tops are within 10 px.
void reading_order(std::vector<TextBox>& boxes) {
  std::sort(boxes.begin(), boxes.end(), [](const TextBox& a, const TextBox& b) {
    return a.corners[0].y < b.corners[0].y || (a.corners[0].y == b.corners[0].y && a.corners[0].x < b.corners[0].x);
  });
  for (std::size_t i = 1; i < boxes.size(); ++i)
    for (std::size_t j = i; j > 0; --j) {
      const auto& upper = boxes[j - 1].corners[0];
      const auto& lower = boxes[j].corners[0];
      if (std::abs(lower.y - upper.y) >= 10 || lower.x >= upper.x) break;
      std::swap(boxes[j - 1], boxes[j]);
    }
}

float sample(const float* plane, std::int64_t height, std::int64_t width, double x, double y) {
  x = std::clamp(x, 0.0, static_cast<double>(width - 1));
  y = std::clamp(y, 0.0, static_cast<double>(height - 1));
  const auto x0 = static_cast<std::int64_t>(x), y0 = static_cast<std::int64_t>(y);
  const auto x1 = std::min(x0 + 1, width - 1), y1 = std::min(y0 + 1, height - 1);
  const double fx = x - static_cast<double>(x0), fy = y - static_cast<double>(y0);
  const double top = plane[y0 * width + x0] * (1 - fx) + plane[y0 * width + x1] * fx;
  const double bottom = plane[y1 * width + x0] * (1 - fx) + plane[y1 * width + x1] * fx;
  return static_cast<float>(top * (1 - fy) + bottom * fy);
}

void check_image_tensor(const TensorView& t, const char* role, std::int64_t channels) {
  if (t.dtype != DType::kFloat32 || t.shape.size() != 4 || t.shape[0] != 1 || (channels > 0 && t.shape[1] != channels))
    throw Error(std::string("text-crops handoff: the detector's ") + role + " '" + t.name + "' is " +
                std::string(dtype_name(t.dtype)) + " " + format_shape(t.shape) + "; it takes float32 1x" +
                (channels > 0 ? std::to_string(channels) : "C") + "xHxW");
}

}  // namespace

nlohmann::json to_json(const TextCropSettings& s) {
  return {{"threshold", s.threshold}, {"box_score", s.box_score},     {"unclip_ratio", s.unclip_ratio}, {"min_side", s.min_side},
          {"max_lines", s.max_lines}, {"line_height", s.line_height}, {"line_width", s.line_width}};
}

TextCropSettings text_crop_settings_from_json(const nlohmann::json& j) {
  TextCropSettings s;
  s.threshold = j.at("threshold");
  s.box_score = j.at("box_score");
  s.unclip_ratio = j.at("unclip_ratio");
  s.min_side = j.at("min_side");
  s.max_lines = j.at("max_lines");
  s.line_height = j.at("line_height");
  s.line_width = j.at("line_width");
  return s;
}

std::vector<TextBox> find_text_boxes(const float* map, std::int64_t height, std::int64_t width,
                                     const TextCropSettings& settings) {
  const auto pixels = static_cast<std::size_t>(height * width);
  std::vector<std::uint8_t> seen(pixels, 0);
  std::vector<std::int64_t> stack, region;
  std::vector<TextBox> boxes;
  for (std::size_t start = 0; start < pixels; ++start) {
    if (seen[start] || map[start] <= settings.threshold) continue;
    // One 8-connected region of text pixels.
    region.clear();
    stack.assign(1, static_cast<std::int64_t>(start));
    seen[start] = 1;
    while (!stack.empty()) {
      const auto at = stack.back();
      stack.pop_back();
      region.push_back(at);
      const auto y = at / width, x = at % width;
      for (std::int64_t dy = -1; dy <= 1; ++dy)
        for (std::int64_t dx = -1; dx <= 1; ++dx) {
          const auto ny = y + dy, nx = x + dx;
          if (ny < 0 || nx < 0 || ny >= height || nx >= width) continue;
          const auto next = static_cast<std::size_t>(ny * width + nx);
          if (seen[next] || map[next] <= settings.threshold) continue;
          seen[next] = 1;
          stack.push_back(static_cast<std::int64_t>(next));
        }
    }
    double score = 0;
    std::vector<Point> points;
    points.reserve(region.size() * 4);
    for (const auto at : region) {
      score += map[at];
      // The pixel's corners, so a region's rectangle covers its pixels rather than their centres.
      const auto x = static_cast<double>(at % width), y = static_cast<double>(at / width);
      points.insert(points.end(), {{x, y}, {x + 1, y}, {x, y + 1}, {x + 1, y + 1}});
    }
    score /= static_cast<double>(region.size());
    if (score < settings.box_score) continue;
    auto rect = minimum_area_rectangle(convex_hull(points));
    if (rect.thickness < settings.min_side) continue;
    // DB's unclip: the detector shrinks text regions in training, so grow them back.
    const double grow = rect.length * rect.thickness * settings.unclip_ratio / (2 * (rect.length + rect.thickness));
    rect.length += 2 * grow;
    rect.thickness += 2 * grow;
    boxes.push_back(corners_of(rect, score));
  }
  reading_order(boxes);
  return boxes;
}

TextCrops crop_text_lines(const TensorView& image, const TensorView& map, const TextCropSettings& settings) {
  check_image_tensor(image, "input", 0);
  check_image_tensor(map, "probability map", 1);
  const auto channels = image.shape[1], height = image.shape[2], width = image.shape[3];
  const auto map_height = map.shape[2], map_width = map.shape[3];
  const auto* map_data = reinterpret_cast<const float*>(map.data.data());
  auto boxes = find_text_boxes(map_data, map_height, map_width, settings);

  TextCrops crops;
  crops.found = static_cast<int>(boxes.size());
  crops.count = std::min(crops.found, settings.max_lines);
  const std::int64_t line_h = settings.line_height, line_w = settings.line_width;
  crops.lines.name = "text_lines";
  crops.lines.shape = {settings.max_lines, channels, line_h, line_w};
  crops.lines.data.assign(element_count(crops.lines.shape) * sizeof(float), std::byte{0});
  auto* out = crops.lines.as<float>();
  const auto* pixels = reinterpret_cast<const float*>(image.data.data());
  const double sx = static_cast<double>(width) / static_cast<double>(map_width);
  const double sy = static_cast<double>(height) / static_cast<double>(map_height);
  for (int line = 0; line < crops.count; ++line) {
    auto c = boxes[static_cast<std::size_t>(line)].corners;
    for (auto& p : c) p = {p.x * sx, p.y * sy};
    const double box_w = std::hypot(c[1].x - c[0].x, c[1].y - c[0].y);
    const double box_h = std::hypot(c[3].x - c[0].x, c[3].y - c[0].y);
    // Height fixed, aspect kept, as PaddleOCR's recogniser input is made.
    const auto target_w =
        std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(static_cast<double>(line_h) * box_w / box_h)), 1, line_w);
    for (std::int64_t ch = 0; ch < channels; ++ch) {
      const float* plane = pixels + ch * height * width;
      float* target = out + ((line * channels + ch) * line_h) * line_w;
      for (std::int64_t i = 0; i < line_h; ++i)
        for (std::int64_t j = 0; j < target_w; ++j) {
          const double a = (static_cast<double>(j) + 0.5) / static_cast<double>(target_w);
          const double b = (static_cast<double>(i) + 0.5) / static_cast<double>(line_h);
          const double x = c[0].x + a * (c[1].x - c[0].x) + b * (c[3].x - c[0].x) - 0.5;
          const double y = c[0].y + a * (c[1].y - c[0].y) + b * (c[3].y - c[0].y) - 0.5;
          target[i * line_w + j] = sample(plane, height, width, x, y);
        }
    }
  }
  return crops;
}

}  // namespace infermark::pipeline
