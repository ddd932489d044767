#include "report/label_accuracy_column.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace infermark::report {

bool any_label_accuracy(const std::vector<const result::RunResult*>& cells) {
  return std::any_of(cells.begin(), cells.end(), [](const result::RunResult* r) { return r->label_accuracy.has_value(); });
}

std::string label_accuracy_cell(const result::RunResult& result) {
  if (!result.label_accuracy) return "n/a";
  const auto& a = *result.label_accuracy;
  return fmt::format("top-1 {:.1f}%, top-5 {:.1f}% ({})", a.top1 * 100, a.top5 * 100, a.samples);
}

}  // namespace infermark::report
