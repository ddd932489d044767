// `recommend`: which measured cell to deploy under the user's constraints (latency, throughput,
// memory, accuracy, energy, power, LLM latencies), ranked and explained per model and machine, with
// the field guides' decision trees checked against the data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/peak_flops.hpp"
#include "report/decision_trees.hpp"
#include "report/recommend_constraints.hpp"
#include "report/result_set.hpp"

namespace infermark::report {

// What the cells of one model are ranked by.
enum class Objective { kLatency, kThroughput, kEnergy };

enum class Outcome { kMet, kFailed, kUnknown };

struct ConstraintCheck {
  std::string constraint;  // "P99", "QPS", "memory", "accuracy", "energy", "power", "TTFT", "TPOT", "status"
  Outcome outcome = Outcome::kMet;
  std::string detail;    // "P99 123.4 ms > 100 ms"
  double excess = 0.0;   // how far past the limit (value / limit, or limit / value for minimums)
  bool required = true;  // false for preferences (energy) that rank but never exclude
};

// What judged a cell's accuracy loss.
enum class AccuracyMeasure {
  kNone,        // nothing: no cross-check and no labels reference
  kLabels,      // points of top-1 vs labels below the family's FP32 reference cell
  kAgreement,   // 1 - agreement (top-1 or cosine) with the cross-check reference's outputs
  kPerplexity,  // language models: perplexity above the family's higher-precision cell on the same text
};

// What was measured for a cell, each figure with where it came from.
struct CellFigures {
  double p99_ms = 0.0;
  double qps = 0.0;  // inferences/s used for --min-qps and the machine count
  std::string qps_source;
  double inferences_per_s = 0.0;  // throughput.inferences_per_s, for cost and GFLOP/s
  double peak_rss_mb = 0.0;
  std::optional<double> accuracy_loss;  // fraction (points of top-1 / 100 when judged against labels)
  std::string accuracy_source;          // "1 - top-1 agreement with onnxruntime", or why unknown
  AccuracyMeasure accuracy_measure = AccuracyMeasure::kNone;
  std::optional<double> label_top1;    // top-1 vs labels, share in [0, 1], where the inputs had labels
  long long label_samples = 0;         // how many labelled samples
  double label_points_per_sample = 0;  // one sample's worth of top-1, in points (where judged against labels)
  std::optional<double> inferences_per_joule;
  std::string energy_source;            // why energy is unavailable, or its source
  std::optional<double> model_gflops;   // GFLOP of one inference
  std::string gflops_source;            // "--model-gflops" or "zoo manifest models/resnet50.json"
  std::optional<double> average_watts;  // measured energy / measured duration
  std::string power_source;             // the energy source, or why energy was not measured
  // LLM cells (the result's "generation"):
  bool generation = false;
  std::optional<double> ttft_p99_ms, tpot_p99_ms;
  std::optional<double> parameters;                 // model weights, where the backend recorded them
  std::optional<double> gb_per_billion_parameters;  // peak RSS / parameters (performance-testing guide: 1.2 GB per B)
};

struct CellAssessment {
  std::string label;  // cell_label(), plus the run folder when labels collide
  std::string path;
  std::string model_name;  // "efficientnet_lite0_int8"
  std::string model_file;  // the model's file name: "efficientnet_lite0_int8.xml"
  std::string backend;
  std::string model_format;  // "onnx", "gguf", ...
  long long batch = 1;
  std::string performance_hint;  // OpenVINO's effective hint, "" otherwise
  bool completed = false;        // status ok with latencies
  CellFigures figures;
  std::vector<ConstraintCheck> checks;
  std::optional<double> cost_per_million;  // with --price-per-hour
  std::optional<long long> machines;       // with --target-qps
  std::optional<double> gflops, percent_of_peak;

  bool meets_all() const;
  // The constraint that rules the cell out: the failed one furthest past its limit, else the
  // first that could not be judged. Empty when it meets every constraint.
  std::string binding() const;
};

// What a decision-tree branch says, closed set (decision_tree_verdicts.cpp has the names).
enum class BranchVerdict { kAgrees, kAgreesTrivially, kContradicted, kNotMeasuredHere, kNotSelected };

struct DecisionTreeCheck {
  DecisionTreeBranch branch;
  bool selected = false;
  std::string selected_by;  // "--p99-ms", "LLM generation results", ...; "" when not selected
  BranchVerdict verdict = BranchVerdict::kNotSelected;
  std::string detail;  // the measured comparison, what measuring would need, or how to select it
};

struct ModelRecommendation {
  std::string model;
  std::string machine;  // machine_key(); "" when every result comes from one machine
  // Only cells of one origin are ranked together: in-process, served and remote latencies time
  // different spans. `origin_named`: the results mixed origins, so the title names this one.
  result::ResultOrigin origin = result::ResultOrigin::kInProcess;
  bool origin_named = false;
  std::string objective;                 // "lowest P99 latency", "highest throughput", "most inferences per joule"
  std::vector<CellAssessment> ranked;    // cells meeting every constraint, best first
  std::vector<CellAssessment> rejected;  // the others, each with its binding constraint
  std::vector<DecisionTreeCheck> decision_tree_branches;  // every branch of every decision tree, in the table's order
  std::vector<std::string> explanation;
};

// A model and its reduced-precision files (report/model_families: efficientnet_lite0, _fp16,
// _int8) side by side: which precision and framework to deploy, each cell's accuracy loss being
// against the family's FP32 reference. Only families with cells of at least two model names.
struct FamilyRecommendation {
  std::string family;
  std::string machine;  // as ModelRecommendation's
  result::ResultOrigin origin = result::ResultOrigin::kInProcess;
  bool origin_named = false;
  std::string objective;
  std::vector<CellAssessment> ranked;  // cells of every member meeting every constraint, best first
  std::vector<CellAssessment> rejected;
};

// Which framework on which machine: each cell's figure on its recommendation's objective.
struct MachineMatrix {
  struct Row {
    std::string model, cell;
    std::vector<std::string> values;  // one per machine, "-" where the cell was not measured there
  };
  std::vector<std::string> machines;
  std::vector<Row> rows;
};

struct Recommendation {
  Constraints constraints;
  std::optional<probes::PeakFlops> peak;
  std::vector<ModelRecommendation> models;
  std::vector<FamilyRecommendation> families;   // precision variants side by side
  std::vector<std::string> notes;               // caveats that concern every model, e.g. a peak from another CPU
  std::optional<MachineMatrix> machine_matrix;  // results from several machines only
  bool every_model_has_a_pick() const;
};

std::string objective_name(Objective objective);                               // "lowest P99 latency"
std::string objective_value(const CellAssessment& cell, Objective objective);  // "P99 12.3 ms"

// `peak` gives % of peak wherever a cell's model FLOPs are known (the CLI takes it from
// --peak-gflops or this machine).
Recommendation recommend(const std::vector<LoadedResult>& results, const Constraints& constraints,
                         const std::optional<probes::PeakFlops>& peak = std::nullopt);

std::string to_markdown(const Recommendation& recommendation);
nlohmann::json to_json(const Recommendation& recommendation);

}  // namespace infermark::report
