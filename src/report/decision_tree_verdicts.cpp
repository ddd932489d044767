#include "report/decision_tree_verdicts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/markdown_table.hpp"
#include "core/named_enum.hpp"
#include "report/comparison_table.hpp"
#include "report/machine.hpp"
#include "report/shape_cliff.hpp"

namespace infermark::report {
namespace {

using enum DeploymentSituation;

constexpr NamedValue<BranchVerdict> kVerdictNames[] = {
    {BranchVerdict::kAgrees, "agrees"},
    {BranchVerdict::kAgreesTrivially, "agrees trivially"},
    {BranchVerdict::kContradicted, "contradicted"},
    {BranchVerdict::kNotMeasuredHere, "not measured here"},
    {BranchVerdict::kNotSelected, "not selected"},
};

// ---- Selection ------------------------------------------------------------------------------

struct Selection {
  std::string by;    // what selects the branch here, "" when nothing does
  std::string hint;  // how a user would select it
};

Selection selection(DeploymentSituation situation, const DecisionTreeInputs& in) {
  const auto& c = in.constraints;
  const auto any = [&](auto predicate) { return std::any_of(in.results.begin(), in.results.end(), predicate); };
  const bool x86 = any([](const LoadedResult& r) { return is_x86(r.result); });
  const bool arm = any([](const LoadedResult& r) { return is_arm(r.result); });
  const bool gpu = any([](const LoadedResult& r) { return has_gpu(r.result); });
  const bool llm = any([](const LoadedResult& r) { return r.result.generation.has_value(); });
  switch (situation) {
    case kLatencyCritical:
      return {c.p99_ms ? "--p99-ms" : "", "pass --p99-ms"};
    case kHighThroughputBatch:
      return {c.min_qps ? "--min-qps" : "", "pass --min-qps"};
    case kDomesticHardware:
      return {c.domestic_hardware ? "--domestic-hardware" : "", "pass --domestic-hardware"};
    case kEdgeCpu:
      return {x86 && !gpu ? "results from an x86 CPU without a GPU" : "", "results from an x86 CPU without a GPU"};
    case kArmGpu:
      return {arm && gpu ? "results from an ARM CPU with a GPU" : "", "results from an ARM CPU with a GPU"};
    case kArmEdgeCpu:
      return {arm && !gpu ? "results from an ARM CPU without a GPU" : "", "results from an ARM CPU without a GPU"};
    case kDynamicShapes:
      return {c.dynamic_shapes ? "--dynamic-shapes" : "", "pass --dynamic-shapes"};
    case kMaximumPerformance:
      return {c.p99_ms ? "--p99-ms" : c.min_qps ? "--min-qps" : "", "pass --p99-ms or --min-qps"};
    case kFastIteration:
      return {c.fast_iteration ? "--fast-iteration" : "", "pass --fast-iteration"};
    case kDynamicControlFlow:
      return {c.dynamic_control_flow ? "--dynamic-control-flow" : "", "pass --dynamic-control-flow"};
    case kFixedInputSize:  // prompts of generation results vary in length
      return {!llm && !in.results.empty() && !c.dynamic_shapes &&
                      !any([](const LoadedResult& r) { return has_varying_shapes(r.result); })
                  ? "runs that each fed one input shape (no --dynamic-shapes)"
                  : "",
              "runs that each fed one input shape, without --dynamic-shapes"};
    case kLongGeneration:  // --ttft-ms and --tpot-ms concern LLM cells only
      return {!llm        ? ""
              : c.ttft_ms ? "--ttft-ms"
              : c.tpot_ms ? "--tpot-ms"
                          : "LLM generation results",
              "LLM generation results of this model"};
    case kMultiBackend:
      return {c.multi_backend ? "--multi-backend" : "", "pass --multi-backend"};
  }
  return {};
}

// ---- Measured comparisons -------------------------------------------------------------------

// The framework a backend runs, as the branches name it: OpenVINO's language-model backend
// (`ovllm`) is OpenVINO, so the edge-CPU branch's "OpenVINO + 4-bit" is judged on LLM cells too.
std::string framework_key(const std::string& backend) { return backend == "ovllm" ? "openvino" : backend; }

// One measured figure of a cell; smaller `key` is better and positive, so a ratio compares two.
struct Contender {
  std::string backend, label, figure;
  double key = 0;
};

std::map<std::string, Contender> best_per_backend(const std::vector<Contender>& contenders) {
  std::map<std::string, Contender> best;
  for (const auto& c : contenders) {
    auto [it, added] = best.try_emplace(c.backend, c);
    if (!added && c.key < it->second.key) it->second = c;
  }
  return best;
}

// The backends a branch names: "tflite+ncnn" is either of the two.
std::vector<std::string> recommended_backends(std::string_view backend) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start <= backend.size();) {
    const auto plus = std::min(backend.find('+', start), backend.size());
    names.emplace_back(backend.substr(start, plus - start));
    start = plus + 1;
  }
  return names;
}

// Does the recommended backend's best (the better one's, for a pair) come within the tolerance of
// every other backend's best?
void judge(DecisionTreeCheck& check, const std::string& metric, const std::vector<Contender>& contenders,
           const std::string& how_to_measure) {
  const auto best = best_per_backend(contenders);
  const std::string backend(check.branch.backend);
  const auto recommended = recommended_backends(backend);
  const auto is_recommended = [&](const std::string& name) {
    return std::find(recommended.begin(), recommended.end(), name) != recommended.end();
  };
  const Contender* own = nullptr;
  std::vector<Contender> others;
  for (const auto& [name, c] : best) {
    if (!is_recommended(name))
      others.push_back(c);
    else if (!own || c.key < own->key)
      own = &c;
  }
  if (!own) {
    check.verdict = BranchVerdict::kNotMeasuredHere;
    check.detail = "needs " + how_to_measure;
    return;
  }
  const auto& mine = *own;
  if (others.empty()) {
    check.verdict = BranchVerdict::kAgreesTrivially;
    check.detail =
        fmt::format("{}: only {} was measured ({} {}), so nothing can beat it", metric, backend, mine.label, mine.figure);
    return;
  }
  std::sort(others.begin(), others.end(), [](const Contender& a, const Contender& b) { return a.key < b.key; });
  const auto& leader = others.front();
  const bool agrees = mine.key <= leader.key * (1.0 + kBranchAgreementTolerance);
  check.verdict = agrees ? BranchVerdict::kAgrees : BranchVerdict::kContradicted;
  std::vector<std::string> rivals;
  for (const auto& o : others) rivals.push_back(o.label + " " + o.figure);
  check.detail = fmt::format("measured {}: {} {} vs {}", metric, mine.label, mine.figure, fmt::join(rivals, ", "));
  if (!agrees) check.detail += fmt::format(" ({} is {:.0f}% better)", leader.label, (mine.key / leader.key - 1.0) * 100.0);
}

double objective_figure_key(const CellAssessment& cell, Objective o) {
  switch (o) {
    case Objective::kLatency:
      return cell.figures.p99_ms;
    case Objective::kThroughput:
      return cell.figures.qps > 0 ? 1.0 / cell.figures.qps : 0.0;
    case Objective::kEnergy:
      return cell.figures.inferences_per_joule ? 1.0 / *cell.figures.inferences_per_joule : 0.0;
  }
  return 0.0;
}

std::vector<Contender> objective_contenders(const DecisionTreeInputs& in) {
  std::vector<Contender> out;
  for (const auto* cell : in.completed)
    if (const double key = objective_figure_key(*cell, in.objective); key > 0)
      out.push_back({framework_key(cell->backend), cell->label, objective_value(*cell, in.objective), key});
  return out;
}

std::vector<Contender> throughput_contenders(const DecisionTreeInputs& in) {
  std::vector<Contender> out;
  for (const auto* cell : in.completed)
    if (cell->figures.qps > 0)
      out.push_back({framework_key(cell->backend), cell->label, format_number(cell->figures.qps) + " inferences/s",
                     1.0 / cell->figures.qps});
  return out;
}

std::vector<Contender> shape_cliff_contenders(const DecisionTreeInputs& in) {
  std::vector<Contender> out;
  for (const auto& loaded : in.results) {
    const auto& r = loaded.result;
    if (!has_varying_shapes(r) || r.status != result::CellStatus::kOk || !r.latency_ms) continue;
    const auto* fixed = fixed_shape_counterpart(r, in.results);
    if (!fixed) continue;
    const auto cliff = shape_cliff(r, *fixed);
    if (cliff.per_unit_of_work && *cliff.per_unit_of_work > 0)
      out.push_back({framework_key(r.backend.name), cell_label(r), fmt::format("{:.2f}x", *cliff.per_unit_of_work),
                     *cliff.per_unit_of_work});
  }
  return out;
}

std::string precision_of(const result::RunResult& r) {
  const auto effective = effective_setting(r, "precision");
  return effective.empty() ? r.requested.precision : effective;
}

bool is_four_bit(std::string precision) {
  std::transform(precision.begin(), precision.end(), precision.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (const char* four : {"int4", "u4", "i4", "nf4", "q4"})
    if (precision.find(four) != std::string::npos) return true;
  return false;
}

// What the recommendation adds beyond the framework (batch 32, 4-bit weights) and whether it was measured.
std::string configuration_caveat(const DecisionTreeCheck& check, const DecisionTreeInputs& in) {
  std::vector<const result::RunResult*> own;
  for (const auto& r : in.results)
    if (framework_key(r.result.backend.name) == check.branch.backend) own.push_back(&r.result);
  if (own.empty()) return "";
  if (check.branch.situation == kHighThroughputBatch) {
    long long largest = 0;
    for (const auto* r : own) largest = std::max(largest, r->scenario.batch);
    if (largest != 32)
      return fmt::format("; max_batch_size 32 not measured (largest {} batch here: {}; try --batch 32)", check.branch.backend,
                         largest);
  }
  if (check.branch.situation == kEdgeCpu) {
    std::set<std::string> precisions;
    for (const auto* r : own) precisions.insert(precision_of(*r).empty() ? "default" : precision_of(*r));
    if (std::none_of(precisions.begin(), precisions.end(), is_four_bit))
      return fmt::format("; 4-bit weights not measured ({} precisions here: {})", check.branch.backend,
                         fmt::join(precisions, ", "));
  }
  return "";
}

// ---- Context for branches infermark cannot test ---------------------------------------------

std::string lowest_latency_context(const DecisionTreeInputs& in) {
  const CellAssessment* best = nullptr;
  for (const auto* c : in.completed)
    if (!best || c->figures.p99_ms < best->figures.p99_ms) best = c;
  if (!best) return "";
  return fmt::format("; measured here, lowest P99 of {} cell(s): {} {} ms", in.completed.size(), best->label,
                     format_number(best->figures.p99_ms));
}

std::string generation_context(const DecisionTreeInputs& in) {
  const CellAssessment* best = nullptr;
  for (const auto* c : in.completed)
    if (c->figures.ttft_p99_ms && (!best || *c->figures.ttft_p99_ms < *best->figures.ttft_p99_ms)) best = c;
  if (!best) return "";
  const auto& f = best->figures;
  return fmt::format("; measured here, lowest TTFT: {} TTFT P99 {} ms, TPOT P99 {} ms, P99 {} ms, {} (baselines of {}: {})",
                     best->label, format_number(*f.ttft_p99_ms), f.tpot_p99_ms ? format_number(*f.tpot_p99_ms) : "-",
                     format_number(f.p99_ms),
                     f.gb_per_billion_parameters ? fmt::format("{:.2f} GB per B parameters", *f.gb_per_billion_parameters)
                                                 : std::string("memory per parameter not known (parameter count not recorded)"),
                     quoted_citation(FieldGuide::kPerformanceTesting), kLlmServingBaselines);
}

std::string libtorch_context(const DecisionTreeInputs& in) {
  const auto contenders = best_per_backend(objective_contenders(in));
  const auto torch = contenders.find("libtorch");
  if (torch == contenders.end()) return "";
  const auto best = std::min_element(contenders.begin(), contenders.end(),
                                     [](const auto& a, const auto& b) { return a.second.key < b.second.key; });
  return fmt::format("; measured here, LibTorch (PyTorch's runtime): {} {} against the best, {} {}", torch->second.label,
                     torch->second.figure, best->second.label, best->second.figure);
}

std::string measured_context(MeasuredContext context, const DecisionTreeInputs& in) {
  switch (context) {
    case MeasuredContext::kNone:
      return "";
    case MeasuredContext::kLowestLatency:
      return lowest_latency_context(in);
    case MeasuredContext::kGeneration:
      return generation_context(in);
    case MeasuredContext::kLibTorch:
      return libtorch_context(in);
  }
  return "";
}

// ---- One branch -----------------------------------------------------------------------------

// " among served results": in-process comparisons, what the field guides measured, need no qualifier.
std::string among(result::ResultOrigin origin) {
  return origin == result::ResultOrigin::kInProcess ? "" : fmt::format(" among {} results", name_of(origin));
}

void evaluate(DecisionTreeCheck& check, const DecisionTreeInputs& in) {
  const auto& b = check.branch;
  const std::string cell_of =
      fmt::format("a cell of this model run with -b {}", fmt::join(recommended_backends(b.backend), " or -b "));
  switch (b.evidence) {
    case BranchEvidence::kNotMeasurable:
      check.verdict = BranchVerdict::kNotMeasuredHere;
      check.detail = fmt::format("needs {}{}", b.needs, measured_context(b.context, in));
      return;
    case BranchEvidence::kHighestThroughput:
      judge(check, "throughput" + among(in.origin), throughput_contenders(in), cell_of + " --batch 32");
      break;
    case BranchEvidence::kObjective:
      judge(check, objective_name(in.objective) + among(in.origin), objective_contenders(in), cell_of);
      break;
    case BranchEvidence::kShapeCliff:
      judge(check, "slowdown per unit of work with shapes varying per query" + among(in.origin), shape_cliff_contenders(in),
            cell_of + " and --shape-range, beside its fixed shape (studies/dynamic-shapes.yaml)");
      break;
    case BranchEvidence::kRunsTheModel: {
      const auto ran = std::find_if(in.completed.begin(), in.completed.end(),
                                    [&](const CellAssessment* c) { return framework_key(c->backend) == b.backend; });
      if (ran == in.completed.end()) {
        check.verdict = BranchVerdict::kNotMeasuredHere;
        check.detail = "needs " + cell_of;
      } else {
        check.verdict = BranchVerdict::kAgreesTrivially;
        check.detail = fmt::format("{} ran this model here ({}, P99 {} ms); {}", b.backend, (*ran)->label,
                                   format_number((*ran)->figures.p99_ms), b.needs);
      }
      return;
    }
  }
  if (check.verdict != BranchVerdict::kNotMeasuredHere) check.detail += configuration_caveat(check, in);
  if (!b.needs.empty()) check.detail += fmt::format("; {}", b.needs);  // what the measurement here cannot show
}

std::vector<DecisionTreeCheck> checks_of_one_origin(const DecisionTreeInputs& in) {
  std::vector<DecisionTreeCheck> checks;
  std::map<DecisionTree, std::string_view> first_selected;  // priority-ordered tree -> its first selected branch
  for (const auto& branch : all_decision_tree_branches()) {
    DecisionTreeCheck check{branch, false, "", BranchVerdict::kNotSelected, ""};
    const auto chosen = selection(branch.situation, in);
    if (chosen.by.empty()) {
      check.detail = chosen.hint;
    } else if (is_priority_order(branch.tree) && first_selected.contains(branch.tree)) {
      check.detail =
          fmt::format("matches ({}), but '{}' takes '{}' first", chosen.by, name_of(branch.tree), first_selected[branch.tree]);
    } else {
      if (is_priority_order(branch.tree)) first_selected[branch.tree] = branch.branch;
      check.selected = true;
      check.selected_by = chosen.by;
      evaluate(check, in);
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace

std::string_view name_of(BranchVerdict verdict) { return name_in(kVerdictNames, verdict); }

std::vector<DecisionTreeCheck> check_decision_tree_branches(const DecisionTreeInputs& in) {
  const auto of_origin = [&](const LoadedResult& r) { return r.result.origin == in.origin; };
  if (std::all_of(in.results.begin(), in.results.end(), of_origin)) return checks_of_one_origin(in);
  std::vector<LoadedResult> results;
  std::set<std::string> paths;
  for (const auto& r : in.results)
    if (of_origin(r)) {
      results.push_back(r);
      paths.insert(r.path);
    }
  std::vector<const CellAssessment*> completed;
  for (const auto* cell : in.completed)
    if (paths.contains(cell->path)) completed.push_back(cell);
  return checks_of_one_origin({in.constraints, completed, results, in.objective, in.origin});
}

namespace {

// Each tree once, named by what it decides and cited by its guide's title and section.
std::string trees_markdown(const std::vector<DecisionTreeCheck>& checks) {
  std::string out;
  std::set<DecisionTree> listed;
  for (const auto& c : checks)
    if (listed.insert(c.branch.tree).second)
      out += fmt::format("- {}: {}{}\n", name_of(c.branch.tree),
                         markdown_citation(guide_of(c.branch.tree), section_of(c.branch.tree)),
                         is_priority_order(c.branch.tree) ? " (a priority order: only its first matching branch applies)" : "");
  return out;
}

}  // namespace

std::string decision_tree_branches_markdown(const std::vector<DecisionTreeCheck>& checks) {
  std::string out = "### Decision trees of the field guides\n\n" + trees_markdown(checks) + "\n";
  const auto title = [](const DecisionTreeBranch& b) {
    return fmt::format("{}: {} → {}{}", name_of(b.tree), b.branch, b.recommends,
                       b.alternative.empty() ? "" : fmt::format(" (alternative: {})", b.alternative));
  };
  bool any_selected = false;
  for (const auto& c : checks)
    if (c.selected) {
      if (!any_selected) out += "Selected:\n\n";
      out += fmt::format("- {}, selected by {}: **{}**: {}\n", title(c.branch), c.selected_by, name_of(c.verdict), c.detail);
      any_selected = true;
    }
  if (!any_selected) out += "No branch is selected by these constraints and results.\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : checks)
    if (!c.selected)
      rows.push_back(
          {std::string(name_of(c.branch.tree)), std::string(c.branch.branch), std::string(c.branch.recommends), c.detail});
  if (!rows.empty())
    out += "\nNot selected:\n\n" +
           markdown_table({{"decision tree", false}, {"branch", false}, {"recommends", false}, {"selected by / why not", false}},
                          rows);
  return out;
}

nlohmann::json to_json(const DecisionTreeCheck& c) {
  return {{"tree", std::string(name_of(c.branch.tree))},
          {"guide", std::string(title_of(guide_of(c.branch.tree)))},
          {"section", std::string(section_of(c.branch.tree))},
          {"branch", std::string(c.branch.branch)},
          {"recommends", std::string(c.branch.recommends)},
          {"alternative", std::string(c.branch.alternative)},
          {"selected", c.selected},
          {"selected_by", c.selected_by},
          {"verdict", std::string(name_of(c.verdict))},
          {"detail", c.detail}};
}

}  // namespace infermark::report
