#include "report/recommend_machines.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "report/recommend_ranking.hpp"
#include "report/recommend_sections.hpp"

namespace infermark::report {

MachineMatrix machine_matrix_of(const std::vector<ModelRecommendation>& models, const std::vector<std::string>& machines,
                                const Constraints& constraints) {
  MachineMatrix matrix{machines, {}};
  std::map<std::pair<std::string, std::string>, std::size_t> row_of;
  for (const auto& m : models) {
    const auto column = static_cast<std::size_t>(std::find(machines.begin(), machines.end(), m.machine) - machines.begin());
    const auto objective = choose_objective(constraints, m.ranked);
    for (const auto* list : {&m.ranked, &m.rejected})
      for (const auto& cell : *list) {
        const auto model = m.model + origin_suffix(m);
        const auto [it, added] = row_of.try_emplace({model, cell.label}, matrix.rows.size());
        if (added) matrix.rows.push_back({model, cell.label, std::vector<std::string>(machines.size(), "-")});
        auto value = cell.completed ? objective_value(cell, objective) : std::string("did not complete");
        if (!m.ranked.empty() && &cell == &m.ranked.front()) value += " (pick)";
        matrix.rows[it->second].values[column] = value;
      }
  }
  return matrix;
}

}  // namespace infermark::report
