// The seeds' framework decision trees (seed 000 §5, seed 002 §6, seed 003 §6) as one constant
// table: which situation each branch is for, what it recommends, and how infermark can check it
// against measured results. `recommend` selects branches from the user's constraints and judges them
// (seed_branch_verdicts.hpp); nothing else lists the seeds' branches.
#pragma once

#include <span>
#include <string_view>

namespace infermark::report {

// The situation a branch is for; what selects it is in seed_branch_verdicts.cpp.
enum class DeploymentSituation {
  kLatencyCritical,
  kHighThroughputBatch,
  kDomesticHardware,
  kEdgeCpu,
  kArmGpu,
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
  kNotMeasurable,          // the framework or hardware is not one infermark runs here
  kHighestThroughput,      // the recommended framework's best inferences/s against every other's
  kObjective,              // the recommended framework's best figure on the recommendation's objective
  kShapeCliff,             // slowdown per unit of work with shapes varying per query (fixed vs varying cells)
  kRunsTheModel,           // the framework ran the model here: it can only agree trivially
};

// What measured here gives context to a branch that cannot be tested (shown as "measured here: ...").
enum class MeasuredContext { kNone, kLowestLatency, kGeneration, kLibTorch };

struct SeedBranch {
  std::string_view seed;     // "000"
  std::string_view section;  // "§5"
  DeploymentSituation situation;
  std::string_view branch;       // "latency-critical"
  std::string_view recommends;   // "TensorRT"
  std::string_view alternative;  // "FastDeploy, CUDA Graph on", or ""
  BranchEvidence evidence;
  std::string_view backend;  // the infermark backend that stands for `recommends`, "" when none
  std::string_view needs;    // what measuring the branch would take (kNotMeasurable), or its caveat
  MeasuredContext context;
};

// Every branch, each seed's branches in the seed's order (seed 002 §6 is a priority order).
std::span<const SeedBranch> seed_decision_trees();

// Seeds whose section is a priority order: only the first selected branch applies.
bool is_priority_order(std::string_view seed);

}  // namespace infermark::report
