#include "report/recommend_ranking.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/markdown_table.hpp"

namespace infermark::report {

double objective_key(const CellAssessment& cell, Objective o) {
  if (!cell.completed) return std::numeric_limits<double>::infinity();
  switch (o) {
    case Objective::kLatency:
      return cell.figures.p99_ms;
    case Objective::kThroughput:
      return -cell.figures.qps;
    case Objective::kEnergy:
      return cell.figures.inferences_per_joule ? -*cell.figures.inferences_per_joule : 0.0;
  }
  return 0.0;
}

void rank(std::vector<CellAssessment>& cells, Objective o) {
  std::stable_sort(cells.begin(), cells.end(), [o](const CellAssessment& a, const CellAssessment& b) {
    const double ka = objective_key(a, o), kb = objective_key(b, o);
    if (ka != kb) return ka < kb;
    return a.figures.peak_rss_mb < b.figures.peak_rss_mb;  // ties: the smaller footprint
  });
}

std::string objective_name(Objective o) {
  switch (o) {
    case Objective::kLatency:
      return "lowest P99 latency";
    case Objective::kThroughput:
      return "highest throughput";
    case Objective::kEnergy:
      return "most inferences per joule";
  }
  return "";
}

std::string objective_value(const CellAssessment& cell, Objective o) {
  switch (o) {
    case Objective::kLatency:
      return fmt::format("P99 {} ms", format_number(cell.figures.p99_ms));
    case Objective::kThroughput:
      return fmt::format("{} inferences/s", format_number(cell.figures.qps));
    case Objective::kEnergy:
      return fmt::format("{:.3g} inferences/J", cell.figures.inferences_per_joule.value_or(0.0));
  }
  return "";
}

Objective choose_objective(const Constraints& c, const std::vector<CellAssessment>& feasible) {
  const bool energy_known = !feasible.empty() && std::all_of(feasible.begin(), feasible.end(), [](const CellAssessment& a) {
    return a.figures.inferences_per_joule.has_value();
  });
  if (c.energy && energy_known) return Objective::kEnergy;
  // Asking for a rate without a latency bound means throughput is what matters.
  if (c.min_qps && !c.p99_ms) return Objective::kThroughput;
  return Objective::kLatency;
}

}  // namespace infermark::report
