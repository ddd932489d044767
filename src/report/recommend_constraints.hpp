// What `recommend` was asked for, as one set: each given flag once, with its role (a limit rules
// cells out, a preference ranks, a situation selects decision-tree branches, a figure is worked
// out for every cell). The "Constraints:" line, each cell's checks and the "Why" list all read
// this set, so no sentence can speak of constraints other than the ones given.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infermark::report {

struct Constraints {
  std::optional<double> p99_ms;   // P99 latency at most this
  std::optional<double> min_qps;  // inferences/s at least this
  std::optional<double> mem_mb;   // peak RSS at most this
  // Percent of agreement with the cross-check reference, or points of top-1 vs labels below the
  // family's FP32 reference where the inputs had labels (report/label_accuracy_loss).
  std::optional<double> max_accuracy_loss_pct;
  bool dynamic_shapes = false;           // the deployment feeds varying input shapes
  bool energy = false;                   // prefer the most inferences per joule
  std::optional<double> price_per_hour;  // machine price, for cost per million inferences
  std::optional<double> target_qps;      // load to serve, for the machine count
  std::optional<double> model_gflops;    // GFLOP of one inference (else the zoo manifest's), for GFLOP/s and % of peak
  std::optional<double> ttft_ms;         // LLM cells: P99 time to first token at most this
  std::optional<double> tpot_ms;         // LLM cells: P99 time per output token at most this
  std::optional<double> watts;           // average power (measured energy / duration) at most this
  // Situations of the field guides' decision trees that no measurement or other flag reveals.
  bool domestic_hardware = false;
  bool fast_iteration = false;
  bool dynamic_control_flow = false;
  bool multi_backend = false;
};

// One member per flag that can be given.
enum class ConstraintKind {
  kP99,
  kMinQps,
  kMemory,
  kAccuracyLoss,
  kPower,
  kTtft,
  kTpot,
  kEnergy,
  kDynamicShapes,
  kDomesticHardware,
  kFastIteration,
  kDynamicControlFlow,
  kMultiBackend,
  kPricePerHour,
  kTargetQps,
  kModelGflops,
};

enum class ConstraintRole {
  kLimit,       // a cell past it, or not judgeable on it, is ruled out
  kPreference,  // ranks the cells, rules none out
  kSituation,   // selects decision-tree branches, rules no cell out
  kFigure,      // a figure worked out for every cell (cost, machines, GFLOP/s)
};

struct GivenConstraint {
  ConstraintKind kind;
  ConstraintRole role;
  std::string_view flag;   // "--ttft-ms"
  std::string_view check;  // the name of the cell checks a limit or preference makes ("TTFT"), else ""
  std::string text;        // "TTFT P99 <= 300 ms (LLM cells)"
  double value = 0.0;      // the flag's value; 0 for a switch
  bool llm_only = false;   // judges LLM cells (results with generation) only
};

// The given flags, limits first, in the order of the "Constraints:" line.
std::vector<GivenConstraint> given_constraints(const Constraints& constraints);

// "P99 <= 100 ms, dynamic input shapes", or "none".
std::string constraints_text(const std::vector<GivenConstraint>& given);

// Every limit flag, for "add one of" hints: "--p99-ms, --min-qps, ...".
std::string limit_flags();

}  // namespace infermark::report
