#include "report/recommend_sections.hpp"

namespace infermark::report {

bool any_label_top1(const Recommendation& rec) {
  for (const auto& m : rec.models)
    for (const auto* list : {&m.ranked, &m.rejected})
      for (const auto& cell : *list)
        if (cell.figures.label_top1) return true;
  return false;
}

bool any_gflops(const Recommendation& rec) {
  for (const auto& m : rec.models)
    for (const auto* list : {&m.ranked, &m.rejected})
      for (const auto& cell : *list)
        if (cell.gflops) return true;
  return false;
}

}  // namespace infermark::report
