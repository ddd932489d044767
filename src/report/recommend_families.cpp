#include "report/recommend_families.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "report/model_families.hpp"
#include "report/recommend_ranking.hpp"

namespace infermark::report {

std::vector<FamilyRecommendation> family_recommendations(const std::vector<ModelRecommendation>& models,
                                                         const Constraints& constraints) {
  std::vector<FamilyRecommendation> families;
  std::map<std::tuple<std::string, std::string, result::ResultOrigin>, std::set<std::string>> members;
  for (const auto& m : models)
    for (const auto* list : {&m.ranked, &m.rejected})
      for (const auto& cell : *list) {
        const auto family = parse_variant_name(cell.model_name).family;
        auto it = std::find_if(families.begin(), families.end(), [&](const FamilyRecommendation& f) {
          return f.family == family && f.machine == m.machine && f.origin == m.origin;
        });
        if (it == families.end()) it = families.insert(families.end(), {family, m.machine, m.origin, m.origin_named, "", {}, {}});
        (cell.meets_all() ? it->ranked : it->rejected).push_back(cell);
        members[{family, m.machine, m.origin}].insert(cell.model_name);
      }
  std::erase_if(families, [&](const FamilyRecommendation& f) { return members[{f.family, f.machine, f.origin}].size() < 2; });
  for (auto& f : families) {
    const auto objective = choose_objective(constraints, f.ranked);
    f.objective = objective_name(objective);
    rank(f.ranked, objective);
    rank(f.rejected, objective);
  }
  return families;
}

}  // namespace infermark::report
