// The report of `infermark evaluate`: one section per experiment (what it measured, how it ended,
// its study's summary), then the decision over every experiment's cells under the suite's limits.
// Markdown here; the HTML page is render_evaluation_html (html_report.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/recommend.hpp"
#include "report/recommend_constraints.hpp"
#include "report/result_set.hpp"

namespace infermark::report {

enum class ExperimentOutcome {
  kMeasured,     // every cell ran
  kCellsFailed,  // it ran; some cells failed (their results say why)
  kFailedToRun,  // it started but could not go on (an error no cell's result holds; the reason says it)
  kSkipped,      // not run: a model could not be built, --quick leaves it out, or it could not start
};

struct ExperimentSection {
  std::string title;
  std::string file;  // the study or pipeline file
  ExperimentOutcome outcome = ExperimentOutcome::kMeasured;
  std::string reason;                    // why it was skipped or what failed
  std::vector<std::string> unsupported;  // "opencv cannot run m.onnx: ...": pairs `check` left out
  std::string summary_markdown;          // the study's or pipeline's summary.md; empty when none was written
  std::vector<LoadedResult> results;
};

struct EvaluationHeader {
  std::string name;
  std::string description;
  bool quick = false;
  std::string limits_text;  // "P99 <= 100 ms, peak RSS <= 2048 MB", or "" without limits
};

// The closing decision, made once for both reports: `recommend` over every experiment's cells, or
// why it could not be made (no cell measured, or recommend's own error).
struct EvaluationDecision {
  std::optional<Recommendation> recommendation;
  std::string error;  // set when there is no recommendation
};
EvaluationDecision decide(const std::vector<ExperimentSection>& sections, const Constraints& limits);

// "P99 <= 100 ms, ..." for the given limits, "" when none is given.
std::string limits_text(const Constraints& limits);

std::string outcome_text(ExperimentOutcome outcome);  // "measured", "some cells failed", "could not run", "skipped"

// Markdown with every heading one level down, to sit inside a section.
std::string demoted_headings(const std::string& markdown);

// Every experiment's cells in one list (the decision's input).
std::vector<LoadedResult> all_results(const std::vector<ExperimentSection>& sections);

// The decision at a glance: per model and per precision family, the pick, its figures, the
// runner-up and how many cells the limits ruled out (with the first reason).
struct VerdictRow {
  std::string model, objective;
  std::string machine;  // "" when every result comes from one machine
  std::string pick;     // "" when no cell meets the limits
  std::string figures;  // "P99 52.1 ms, 19 inferences/s, 298 MB"
  std::string runner_up;
  std::string ruled_out;  // "none", or "2 (first: openvino t2: accuracy loss ...)"
};
std::vector<VerdictRow> verdict_rows(const Recommendation& decision);

std::string evaluation_markdown(const EvaluationHeader& header, const std::vector<ExperimentSection>& sections,
                                const EvaluationDecision& decision);

}  // namespace infermark::report
