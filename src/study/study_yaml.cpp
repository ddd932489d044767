#include "study/study_yaml.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace infermark::study {
namespace {

// "1.5x" means 1.5 times the physical cores (the performance-evaluation guide's rule of thumb is written this way).
std::string resolve_multiple_of_cores(const std::string& value, const std::string& origin,
                                      const std::function<int()>& physical_cores) {
  if (value.size() < 2 || value.back() != 'x') return value;
  double factor = 0;
  std::size_t used = 0;
  try {
    factor = std::stod(value.substr(0, value.size() - 1), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  // NaN, infinities and huge factors too (found by fuzz_study_yaml): they would round to nonsense.
  constexpr double kMostTimesTheCores = 64;
  if (used == 0 || used + 1 != value.size() || !(factor > 0 && factor <= kMostTimesTheCores))
    throw Error(origin + ": threads " + value + ": expected a count or a multiple of the physical cores such as 1.5x");
  const int cores = physical_cores();
  return std::to_string(std::max(1, static_cast<int>(std::lround(factor * cores))));
}

}  // namespace

std::string origin(const std::string& file, const YAML::Node& node) {
  const auto mark = node.Mark();
  if (mark.is_null()) return file;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

std::string scalar(const YAML::Node& node, const std::string& what, const std::string& file) {
  if (!node.IsScalar() && !node.IsNull()) throw Error(origin(file, node) + ": '" + what + "' takes a single value here");
  return node.as<std::string>();
}

Values scalars(const YAML::Node& node, const std::string& what, const std::string& file) {
  if (node.IsScalar()) return {{node.as<std::string>()}, {origin(file, node)}};
  if (!node.IsSequence()) throw Error(origin(file, node) + ": '" + what + "' must be a value or a list of values");
  Values values;
  for (const auto& v : node) {
    values.values.push_back(scalar(v, what, file));
    values.origins.push_back(origin(file, v));
  }
  return values;
}

void read_base(const YAML::Node& node, const std::string& file, std::map<std::string, std::string>& base,
               std::map<std::string, std::string>& base_origins) {
  if (!node.IsMap()) throw Error(origin(file, node) + ": 'base' must map run flags to values");
  for (const auto& kv : node) {
    const auto flag = scalar(kv.first, "base", file);
    base[flag] = scalar(kv.second, flag, file);
    base_origins[flag] = origin(file, kv.second);
  }
}

std::vector<StudyAxis> read_axes(const YAML::Node& node, const std::string& file, const std::function<int()>& physical_cores) {
  if (!node.IsMap()) throw Error(origin(file, node) + ": 'axes' must map run flags to lists of values");
  std::vector<StudyAxis> axes;
  for (const auto& kv : node) {
    const auto flag = scalar(kv.first, "axes", file);
    auto values = scalars(kv.second, flag, file);
    if (values.values.empty()) throw Error(origin(file, kv.second) + ": axis '" + flag + "' has no values");
    StudyAxis axis{flag, {}, {}};
    for (std::size_t i = 0; i < values.values.size(); ++i) {
      // "0.5x" and "1" are one cell on a two-core machine.
      const auto value =
          flag == "threads" ? resolve_multiple_of_cores(values.values[i], values.origins[i], physical_cores) : values.values[i];
      if (flag == "threads" && std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end()) continue;
      axis.values.push_back(value);
      axis.origins.push_back(values.origins[i]);
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

}  // namespace infermark::study
