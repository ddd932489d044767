#include "core/shape_range.hpp"

#include <charconv>

#include "core/error.hpp"
#include "core/random.hpp"

namespace infermark {
namespace {

std::int64_t parse_size(std::string_view text, const std::string& where) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1)
    throw Error(where + ": '" + std::string(text) + "' is not a positive size (dimensions are N, LOW-HIGH or LOW-HIGH/BUCKET)");
  return value;
}

DimRange parse_dim(std::string_view text, const std::string& where) {
  DimRange dim;
  const auto slash = text.find('/');
  const auto sizes = text.substr(0, slash);
  const auto dash = sizes.find('-');
  dim.low = parse_size(sizes.substr(0, dash), where);
  dim.high = dash == std::string_view::npos ? dim.low : parse_size(sizes.substr(dash + 1), where);
  if (dim.high < dim.low) throw Error(where + ": range " + std::string(sizes) + " runs backwards");
  if (slash != std::string_view::npos) {
    dim.bucket = parse_size(text.substr(slash + 1), where);
    if (!dim.varies()) throw Error(where + ": bucket on the fixed dimension " + std::string(sizes));
  }
  return dim;
}

}  // namespace

ShapeRange parse_shape_range(const std::string& text, const std::string& where) {
  ShapeRange range;
  std::string_view rest = text;
  for (;;) {
    const auto x = rest.find('x');
    range.push_back(parse_dim(rest.substr(0, x), where));
    if (x == std::string_view::npos) break;
    rest.remove_prefix(x + 1);
  }
  return range;
}

std::string format_shape_range(const ShapeRange& range) {
  std::string text;
  for (const auto& dim : range) {
    if (!text.empty()) text += 'x';
    text += std::to_string(dim.low);
    if (dim.varies()) text += "-" + std::to_string(dim.high);
    if (dim.bucket > 0) text += "/" + std::to_string(dim.bucket);
  }
  return text;
}

bool varies(const ShapeRange& range) {
  for (const auto& dim : range)
    if (dim.varies()) return true;
  return false;
}

bool bucketed(const VaryingShapes& shapes) {
  bool any = false;
  for (const auto& [name, range] : shapes.ranges)
    for (const auto& dim : range) {
      if (dim.varies() && dim.bucket == 0) return false;
      any = any || dim.varies();
    }
  return any;
}

std::int64_t round_up_to_bucket(std::int64_t value, const DimRange& dim) {
  if (dim.bucket <= 0) return value;
  const auto rounded = (value + dim.bucket - 1) / dim.bucket * dim.bucket;
  return std::min(rounded, dim.high);
}

std::vector<std::map<std::string, std::vector<std::int64_t>>> draw_shapes(const VaryingShapes& shapes, std::uint64_t seed) {
  // The range of each varying position, checked to agree across inputs.
  std::map<std::size_t, std::pair<DimRange, std::string>> positions;
  for (const auto& [name, range] : shapes.ranges)
    for (std::size_t i = 0; i < range.size(); ++i) {
      if (!range[i].varies()) continue;
      const auto [it, added] = positions.emplace(i, std::pair{range[i], name});
      if (!added && !(it->second.first == range[i]))
        throw Error("--shape-range: inputs '" + it->second.second + "' and '" + name + "' vary dimension " + std::to_string(i) +
                    " differently; inputs varying one dimension share each draw, so give them the same range");
    }
  SeededRandom random(seed ^ 0x5348415045ull);  // its own stream, apart from the input data's
  std::vector<std::map<std::string, std::vector<std::int64_t>>> draws;
  for (int s = 0; s < shapes.sets; ++s) {
    std::map<std::size_t, std::int64_t> drawn;
    for (const auto& [i, dim] : positions) {
      const auto span = static_cast<std::uint64_t>(dim.first.high - dim.first.low + 1);
      drawn[i] = round_up_to_bucket(dim.first.low + static_cast<std::int64_t>(random.next() % span), dim.first);
    }
    auto& set = draws.emplace_back();
    for (const auto& [name, range] : shapes.ranges) {
      auto& shape = set[name];
      for (std::size_t i = 0; i < range.size(); ++i) shape.push_back(range[i].varies() ? drawn[i] : range[i].low);
    }
  }
  return draws;
}

}  // namespace infermark
