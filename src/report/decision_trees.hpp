// The field guides' framework decision trees as one constant table: which situation each branch
// is for, what it recommends, and how infermark can check it against measured results. Each tree
// is named by what it decides and cited by its guide's title and section. `recommend` selects
// branches from the user's constraints and judges them (decision_tree_verdicts.hpp); nothing else
// lists the branches.
#pragma once

#include <span>
#include <string_view>

#include "report/field_guides.hpp"

namespace infermark::report {

enum class DecisionTree {
  kFrameworkForScenario,  // performance evaluation, decision tree §5
  kFrameworkByPriority,   // selection and practice guide, decision path §6 (a priority order)
  kEngineForWorkload,     // performance testing, LLM decision tree §6
};

// The situation a branch is for; what selects it is in decision_tree_verdicts.cpp.
enum class DeploymentSituation {
  kLatencyCritical,
  kHighThroughputBatch,
  kDomesticHardware,
  kEdgeCpu,
  kArmGpu,
  kArmEdgeCpu,
  kDynamicShapes,
  kMaximumPerformance,
  kFastIteration,
  kDynamicControlFlow,
  kFixedInputSize,
  kLongGeneration,
  kMultiBackend,
};

// How measured results can test a branch's recommendation.
enum class BranchEvidence {
  kNotMeasurable,      // the framework or hardware is not one infermark runs here
  kHighestThroughput,  // the recommended framework's best inferences/s against every other's
  kObjective,          // the recommended framework's best figure on the recommendation's objective
  kShapeCliff,         // slowdown per unit of work with shapes varying per query (fixed vs varying cells)
  kRunsTheModel,       // the framework ran the model here: it can only agree trivially
};

// What measured here gives context to a branch that cannot be tested (shown as "measured here: ...").
enum class MeasuredContext { kNone, kLowestLatency, kGeneration, kLibTorch };

struct DecisionTreeBranch {
  DecisionTree tree;
  DeploymentSituation situation;
  std::string_view branch;       // "latency-critical"
  std::string_view recommends;   // "TensorRT"
  std::string_view alternative;  // "FastDeploy, CUDA Graph on", or ""
  BranchEvidence evidence;
  std::string_view backend;  // the infermark backend(s) that stand for `recommends` ("tflite+ncnn": either), "" when none
  std::string_view needs;    // what measuring the branch would take (kNotMeasurable), or its caveat
  MeasuredContext context;
};

// Every branch, each tree's branches in its guide's order (the selection path is a priority order).
std::span<const DecisionTreeBranch> all_decision_tree_branches();

// What the tree decides: "Which framework for the deployment scenario".
std::string_view name_of(DecisionTree tree);
FieldGuide guide_of(DecisionTree tree);
std::string_view section_of(DecisionTree tree);  // "decision tree §5"

// Trees that are a priority order: only the first selected branch applies.
bool is_priority_order(DecisionTree tree);

}  // namespace infermark::report
