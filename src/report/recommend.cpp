#include "report/recommend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/decision_tree_verdicts.hpp"
#include "report/label_accuracy_loss.hpp"
#include "report/machine.hpp"
#include "report/recommend_assessment.hpp"
#include "report/recommend_explanation.hpp"
#include "report/recommend_families.hpp"
#include "report/recommend_machines.hpp"
#include "report/recommend_ranking.hpp"
#include "report/recommend_sections.hpp"

namespace infermark::report {

bool Recommendation::every_model_has_a_pick() const {
  return std::all_of(models.begin(), models.end(), [](const ModelRecommendation& m) { return !m.ranked.empty(); });
}

namespace {

ModelRecommendation recommend_for(const std::string& model, const std::string& machine, const std::vector<LoadedResult>& cells,
                                  const Constraints& constraints, const std::optional<probes::PeakFlops>& peak,
                                  const QualityLosses& losses) {
  ModelRecommendation m;
  m.model = model;
  m.machine = machine;
  m.origin = cells.front().result.origin;  // the caller passes cells of one origin
  const auto labels = labels_for(cells);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    auto cell = assess(cells[i], labels[i], constraints, peak, losses);
    (cell.meets_all() ? m.ranked : m.rejected).push_back(std::move(cell));
  }
  const auto objective = choose_objective(constraints, m.ranked);
  m.objective = objective_name(objective);
  rank(m.ranked, objective);
  rank(m.rejected, objective);

  CellRefs completed;
  for (const auto* list : {&m.ranked, &m.rejected})
    for (const auto& cell : *list)
      if (cell.completed) completed.push_back(&cell);
  m.decision_tree_branches = check_decision_tree_branches({constraints, completed, cells, objective, m.origin});
  m.explanation = explain(m, objective, constraints, completed);
  return m;
}

// Results of several origins: each section names its origin and says the others are ranked apart.
void name_mixed_origins(Recommendation& rec) {
  std::set<result::ResultOrigin> origins;
  for (const auto& m : rec.models) origins.insert(m.origin);
  if (origins.size() < 2) return;
  std::vector<std::string_view> names;
  for (const auto origin : origins) names.push_back(name_of(origin));
  rec.notes.push_back(fmt::format(
      "these results mix origins ({}): each is ranked only against results of its own origin, in its own section, since "
      "their latencies time different spans",
      fmt::join(names, ", ")));
  for (auto& m : rec.models) {
    m.origin_named = true;
    m.explanation.push_back(fmt::format("Only {} results are ranked here ({}); other origins are ranked in their own sections.",
                                        name_of(m.origin), result::origin_description(m.origin)));
  }
}

}  // namespace

Recommendation recommend(const std::vector<LoadedResult>& results, const Constraints& constraints,
                         const std::optional<probes::PeakFlops>& peak) {
  Recommendation rec{constraints, peak, {}, {}, {}, std::nullopt};
  std::set<std::string> machine_keys;
  for (const auto& r : results) machine_keys.insert(machine_key(r.result));
  const std::vector<std::string> machines(machine_keys.begin(), machine_keys.end());
  const auto losses = quality_losses(results);
  std::map<result::ResultOrigin, std::vector<LoadedResult>> origins;  // never ranked against each other
  for (const auto& [model, of_model] : group_by_model(results)) {
    origins.clear();
    for (const auto& r : of_model) origins[r.result.origin].push_back(r);
    for (const auto& [origin, cells] : origins) {
      if (machines.size() == 1) {
        rec.models.push_back(recommend_for(model, "", cells, constraints, peak, losses));
        continue;
      }
      for (const auto& [machine, on_machine] : group_by_machine(cells))
        rec.models.push_back(recommend_for(model, machine, on_machine, constraints, peak, losses));
    }
  }
  name_mixed_origins(rec);
  rec.families = family_recommendations(rec.models, constraints);
  if (machines.size() > 1) rec.machine_matrix = machine_matrix_of(rec.models, machines, constraints);
  if (peak && !peak->cpu_model.empty() && any_gflops(rec)) {
    std::set<std::string> measured_on;
    for (const auto& r : results)
      if (r.result.environment.is_object()) measured_on.insert(r.result.environment.value("cpu_model", std::string()));
    measured_on.erase(peak->cpu_model);
    if (!measured_on.empty())
      rec.notes.push_back(
          fmt::format("the peak is this machine's ({}), but results were measured on {}: % of peak is only indicative",
                      peak->cpu_model, fmt::join(measured_on, ", ")));
  }
  return rec;
}

}  // namespace infermark::report
