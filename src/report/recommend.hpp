// `recommend`: which measured cell to deploy under the user's constraints (latency, throughput,
// memory, accuracy, energy), ranked and explained, with the rules of thumb checked against the data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/peak_flops.hpp"
#include "report/result_set.hpp"

namespace infermark::report {

struct Constraints {
  std::optional<double> p99_ms;                 // P99 latency at most this
  std::optional<double> min_qps;                // inferences/s at least this
  std::optional<double> mem_mb;                 // peak RSS at most this
  std::optional<double> max_accuracy_loss_pct;  // percent, against the cross-check reference
  bool dynamic_shapes = false;                  // the deployment feeds varying input shapes
  bool energy = false;                          // prefer the most inferences per joule
  std::optional<double> price_per_hour;         // machine price, for cost per million inferences
  std::optional<double> target_qps;             // load to serve, for the machine count
  std::optional<double> model_gflops;           // GFLOP of one inference (else the zoo manifest's), for GFLOP/s and % of peak
};

enum class Outcome { kMet, kFailed, kUnknown };

struct ConstraintCheck {
  std::string constraint;  // "P99", "QPS", "memory", "accuracy", "energy", "status"
  Outcome outcome = Outcome::kMet;
  std::string detail;    // "P99 123.4 ms > 100 ms"
  double excess = 0.0;   // how far past the limit (value / limit, or limit / value for minimums)
  bool required = true;  // false for preferences (energy) that rank but never exclude
};

// What was measured for a cell, each figure with where it came from.
struct CellFigures {
  double p99_ms = 0.0;
  double qps = 0.0;  // inferences/s used for --min-qps and the machine count
  std::string qps_source;
  double inferences_per_s = 0.0;  // throughput.inferences_per_s, for cost and GFLOP/s
  double peak_rss_mb = 0.0;
  std::optional<double> accuracy_loss;  // fraction
  std::string accuracy_source;          // "1 - top-1 agreement with onnxruntime", or why unknown
  std::optional<double> inferences_per_joule;
  std::string energy_source;           // why energy is unavailable, or its source
  std::optional<double> model_gflops;  // GFLOP of one inference
  std::string gflops_source;           // "--model-gflops" or "zoo manifest models/resnet50.json"
};

struct CellAssessment {
  std::string label;  // cell_label(), plus the run folder when labels collide
  std::string path;
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

struct RuleCheck {
  std::string rule;    // "latency-sensitive at batch 1 on x86 -> OpenVINO or ONNX Runtime"
  std::string status;  // "agrees", "contradicted", "not testable", "not applicable"
  std::string detail;  // contradicted: "the data contradicts the rule of thumb: ..."
};

struct ModelRecommendation {
  std::string model;
  std::string objective;                 // "lowest P99 latency", "highest throughput", "most inferences per joule"
  std::vector<CellAssessment> ranked;    // cells meeting every constraint, best first
  std::vector<CellAssessment> rejected;  // the others, each with its binding constraint
  std::vector<RuleCheck> rules;
  std::vector<std::string> explanation;
};

struct Recommendation {
  Constraints constraints;
  std::optional<probes::PeakFlops> peak;
  std::vector<ModelRecommendation> models;
  std::vector<std::string> notes;  // caveats that concern every model, e.g. a peak from another CPU
  bool every_model_has_a_pick() const;
};

// `peak` gives % of peak wherever a cell's model FLOPs are known (the CLI takes it from
// --peak-gflops or this machine).
Recommendation recommend(const std::vector<LoadedResult>& results, const Constraints& constraints,
                         const std::optional<probes::PeakFlops>& peak = std::nullopt);

std::string to_markdown(const Recommendation& recommendation);
nlohmann::json to_json(const Recommendation& recommendation);

}  // namespace infermark::report
