// Each branch of the field guides' decision trees (decision_trees.hpp) judged for one model on one
// machine: whether the user's constraints or the results select it, and whether the measurements
// agree with what it recommends, contradict it, or cannot test it here (and what that would need).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/recommend.hpp"

namespace infermark::report {

struct DecisionTreeInputs {
  const Constraints& constraints;
  std::vector<const CellAssessment*> completed;  // the cells of this model and machine that completed
  const std::vector<LoadedResult>& results;      // the same cells' results (shapes, precisions, environment)
  Objective objective;                           // what the recommendation ranks by
  // Only cells of this origin are compared: a served or remote latency includes spans an
  // in-process one does not (results of other origins in `results` or `completed` are left out).
  result::ResultOrigin origin = result::ResultOrigin::kInProcess;
};

// Agreement tolerance: the recommended framework's best figure within this fraction of the best
// measured counts as agreement (compare's practical threshold).
inline constexpr double kBranchAgreementTolerance = 0.05;

std::vector<DecisionTreeCheck> check_decision_tree_branches(const DecisionTreeInputs& inputs);

std::string_view name_of(BranchVerdict verdict);  // "agrees", "agrees trivially", ...

// The selected branches first, each with its verdict and detail, then the others in one table.
std::string decision_tree_branches_markdown(const std::vector<DecisionTreeCheck>& checks);

nlohmann::json to_json(const DecisionTreeCheck& check);

}  // namespace infermark::report
