#include "study/study_search.hpp"

namespace infermark::study {

std::vector<std::size_t> search_study(const Study& study, std::size_t cell_count, double p99_target_ms,
                                      const MeasureStudyCell& measure) {
  const auto axes = search_axes(study);
  std::size_t grid = 1;
  for (const auto& axis : axes) grid *= axis.size;
  std::vector<std::size_t> measured;
  bool interrupted = false;
  for (std::size_t group = 0; group * grid < cell_count && !interrupted; ++group) {
    const auto evaluate = [&](const GridPoint& point) -> PointScore {
      if (interrupted) return {};  // the walk ends as if every further cell failed
      const auto index = group * grid + grid_index(axes, point);
      const auto result = measure(index);
      if (!result) {
        interrupted = true;
        return {};
      }
      measured.push_back(index);
      return score_of(*result);
    };
    guided_search(axes, p99_target_ms, evaluate);
  }
  return measured;
}

}  // namespace infermark::study
