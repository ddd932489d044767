#include "report/recommend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/model_manifest.hpp"
#include "stats/agreement_measure.hpp"
#include "result/cell_outcome.hpp"
#include "report/comparison_table.hpp"
#include "report/generation_table.hpp"
#include "report/label_accuracy_loss.hpp"
#include "report/machine.hpp"
#include "core/markdown_table.hpp"
#include "report/model_families.hpp"
#include "report/decision_tree_verdicts.hpp"

namespace infermark::report {
namespace {

using nlohmann::json;
using CellRefs = std::vector<const CellAssessment*>;

// ---- What was measured ----------------------------------------------------------------------

void fill_agreement_accuracy(const result::RunResult& r, CellFigures& f) {
  if (!r.cross_check) {
    f.accuracy_source = "no cross-check in the result (no reference backend ran)";
    return;
  }
  const auto& check = *r.cross_check;
  if (check.is_reference) {
    f.accuracy_loss = 0.0;
    f.accuracy_source = "0 for the cross-check reference itself";
    f.accuracy_measure = AccuracyMeasure::kAgreement;
    return;
  }
  std::optional<double> worst;
  std::string measure;
  for (const auto& o : check.outputs) {
    if (!o.comparable) {
      f.accuracy_source = fmt::format("output '{}' not comparable with {}: {}", o.output, check.reference_backend, o.note);
      return;
    }
    // By the output's kind where the manifest gave one (report/agreement_measure), as the table shows.
    const auto figure = stats::agreement_figure(o, kind_of(r.model.output_kinds, o.output));
    const double loss = 1.0 - figure.agreement;
    if (!worst || loss > *worst) {
      worst = loss;
      measure = "1 - " + stats::agreement_measure_name(figure.measure);
    }
  }
  if (!worst) {
    f.accuracy_source = "the cross-check compared no outputs";
    return;
  }
  f.accuracy_loss = std::max(0.0, *worst);
  f.accuracy_source = measure + " with " + check.reference_backend;
  f.accuracy_measure = AccuracyMeasure::kAgreement;
}

// Against labels where the cell and its family's FP32 reference were judged on the same labelled
// inputs; otherwise by agreement with the cross-check reference.
void fill_accuracy(const result::RunResult& r, const LabelAccuracyLoss* labels, CellFigures& f) {
  if (r.label_accuracy) {
    f.label_top1 = r.label_accuracy->top1;
    f.label_samples = r.label_accuracy->samples;
  }
  if (!labels) {
    fill_agreement_accuracy(r, f);
    return;
  }
  f.accuracy_loss = std::max(0.0, labels->loss_points()) / 100.0;
  f.accuracy_source = labels->describe();
  f.accuracy_measure = AccuracyMeasure::kLabels;
  f.label_points_per_sample = labels->points_per_sample();
}

const char* accuracy_measure_name(AccuracyMeasure measure) {
  switch (measure) {
    case AccuracyMeasure::kNone:
      return "none";
    case AccuracyMeasure::kLabels:
      return "top-1 vs labels";
    case AccuracyMeasure::kAgreement:
      return "agreement with the reference backend";
  }
  return "";
}

void fill_energy(const result::RunResult& r, CellFigures& f) {
  if (!r.resources) {
    f.energy_source = f.power_source = "no resource samples in the result";
    return;
  }
  const auto& summary = r.resources->summary;
  f.energy_source = f.power_source = summary.energy.source;
  if (summary.energy.available && r.resources->inferences_per_joule) f.inferences_per_joule = *r.resources->inferences_per_joule;
  f.average_watts = probes::mean_watts(summary.energy, summary.duration_s);  // over the span the joules cover
}

void fill_generation(const result::RunResult& r, CellFigures& f) {
  if (!r.generation) return;
  f.generation = true;
  if (r.generation->ttft_ms) f.ttft_p99_ms = r.generation->ttft_ms->at(99).value;
  if (r.generation->tpot_ms) f.tpot_p99_ms = r.generation->tpot_ms->at(99).value;
  f.parameters = model_parameters(r);
  f.gb_per_billion_parameters = gb_per_billion_parameters(r);
}

// FLOPs of one inference: --model-gflops, else the zoo manifest beside the model file (found
// from the recorded model path, so relative to where `run` was started).
void fill_model_gflops(const result::RunResult& r, const Constraints& c, CellFigures& f) {
  if (c.model_gflops) {
    f.model_gflops = *c.model_gflops;
    f.gflops_source = "--model-gflops";
    return;
  }
  const auto manifest = manifest_path(r.model.path);
  std::ifstream in(manifest);
  if (!in) return;
  const auto j = json::parse(in, nullptr, false);
  if (!j.is_object() || !j.value("gflops_per_inference", json()).is_number()) return;
  f.model_gflops = j["gflops_per_inference"].get<double>();
  f.gflops_source = "zoo manifest " + manifest.string();
}

CellFigures figures_of(const result::RunResult& r, const Constraints& c, const LabelAccuracyLoss* labels) {
  CellFigures f;
  f.p99_ms = r.latency_ms->at(99).value;
  f.inferences_per_s = r.throughput.inferences_per_s;
  // A searched SLA capacity says what a machine sustains; a closed-loop rate only what one run did.
  if (r.analysis.search) {
    f.qps = r.analysis.search->max_qps_within_sla * static_cast<double>(r.scenario.batch);
    f.qps_source = r.scenario.batch == 1 ? "max QPS within the SLA (searched)"
                                         : fmt::format("max QPS within the SLA (searched) x batch {}", r.scenario.batch);
  } else {
    f.qps = r.throughput.inferences_per_s;
    f.qps_source = "measured inferences/s";
  }
  f.peak_rss_mb = r.memory.peak_rss_mb;
  fill_accuracy(r, labels, f);
  fill_energy(r, f);
  fill_generation(r, f);
  fill_model_gflops(r, c, f);
  return f;
}

// ---- Constraints ----------------------------------------------------------------------------

ConstraintCheck at_most(std::string name, const std::string& what, double value, double limit, const std::string& unit) {
  const bool met = value <= limit;
  return {std::move(name), met ? Outcome::kMet : Outcome::kFailed,
          fmt::format("{} {} {} {} {:g} {}", what, format_number(value), unit, met ? "<=" : ">", limit, unit), value / limit,
          true};
}

std::optional<ConstraintCheck> llm_limit(const GivenConstraint& g, const std::optional<double>& p99) {
  const std::string name(g.check);
  if (p99) return at_most(name, name + " P99", *p99, g.value, "ms");
  return ConstraintCheck{name, Outcome::kUnknown, name + " cannot be judged: not recorded in the result", 0.0, true};
}

ConstraintCheck accuracy_check(const GivenConstraint& g, const CellFigures& f) {
  const std::string name(g.check);
  if (!f.accuracy_loss) return {name, Outcome::kUnknown, "accuracy loss cannot be judged: " + f.accuracy_source, 0.0, true};
  const double pct = *f.accuracy_loss * 100.0, limit = g.value;
  const bool met = pct <= limit;
  const auto unit = f.accuracy_measure == AccuracyMeasure::kLabels ? " points" : "%";
  return {name, met ? Outcome::kMet : Outcome::kFailed,
          fmt::format("accuracy loss {:.3g}{} {} {:g}{} ({})", pct, unit, met ? "<=" : ">", limit, unit, f.accuracy_source),
          limit > 0 ? pct / limit : (pct > 0 ? std::numeric_limits<double>::infinity() : 0.0), true};
}

// What one given limit or preference says of a completed cell; nothing where it does not concern
// the cell (TTFT and TPOT judge LLM cells only) or judges no cell (situations, figures).
std::optional<ConstraintCheck> check_of(const GivenConstraint& g, const CellFigures& f) {
  if (g.llm_only && !f.generation) return std::nullopt;
  const std::string name(g.check);
  switch (g.kind) {
    case ConstraintKind::kP99:
      return at_most(name, "P99", f.p99_ms, g.value, "ms");
    case ConstraintKind::kMinQps: {
      const bool met = f.qps >= g.value;
      return ConstraintCheck{
          name, met ? Outcome::kMet : Outcome::kFailed,
          fmt::format("QPS {} {} {:g} inferences/s ({})", format_number(f.qps), met ? ">=" : "<", g.value, f.qps_source),
          f.qps > 0 ? g.value / f.qps : std::numeric_limits<double>::infinity(), true};
    }
    case ConstraintKind::kMemory:
      if (f.peak_rss_mb > 0) return at_most(name, "peak RSS", f.peak_rss_mb, g.value, "MB");
      return ConstraintCheck{name, Outcome::kUnknown, "peak RSS cannot be judged: not recorded", 0.0, true};
    case ConstraintKind::kAccuracyLoss:
      return accuracy_check(g, f);
    case ConstraintKind::kPower:
      if (f.average_watts) return at_most(name, "average power", *f.average_watts, g.value, "W");
      return ConstraintCheck{name, Outcome::kUnknown, "power unknown: energy not measured (" + f.power_source + ")", 0.0, true};
    case ConstraintKind::kTtft:
      return llm_limit(g, f.ttft_p99_ms);
    case ConstraintKind::kTpot:
      return llm_limit(g, f.tpot_p99_ms);
    case ConstraintKind::kEnergy:  // a preference (rank by inferences per joule): unknown never excludes
      if (f.inferences_per_joule)
        return ConstraintCheck{name, Outcome::kMet, fmt::format("{:.3g} inferences/J", *f.inferences_per_joule), 0.0, false};
      return ConstraintCheck{name, Outcome::kUnknown, "energy cannot be judged: " + f.energy_source, 0.0, false};
    case ConstraintKind::kDynamicShapes:
    case ConstraintKind::kDomesticHardware:
    case ConstraintKind::kFastIteration:
    case ConstraintKind::kDynamicControlFlow:
    case ConstraintKind::kMultiBackend:
    case ConstraintKind::kPricePerHour:
    case ConstraintKind::kTargetQps:
    case ConstraintKind::kModelGflops:
      return std::nullopt;
  }
  return std::nullopt;
}

std::vector<ConstraintCheck> checks_for(const CellAssessment& cell, const result::RunResult& r, const Constraints& c) {
  if (!cell.completed) {
    return {{"status", Outcome::kFailed, result::failure_text(r), std::numeric_limits<double>::infinity(), true}};
  }
  std::vector<ConstraintCheck> checks;
  for (const auto& g : given_constraints(c))
    if (auto check = check_of(g, cell.figures)) checks.push_back(std::move(*check));
  return checks;
}

void fill_economics(CellAssessment& cell, const Constraints& c, const std::optional<probes::PeakFlops>& peak) {
  const auto& f = cell.figures;
  if (!cell.completed) return;
  if (c.price_per_hour && f.inferences_per_s > 0) cell.cost_per_million = *c.price_per_hour / (3600.0 * f.inferences_per_s) * 1e6;
  if (c.target_qps && f.qps > 0) cell.machines = static_cast<long long>(std::ceil(*c.target_qps / f.qps));
  if (f.model_gflops) {
    cell.gflops = *f.model_gflops * f.inferences_per_s;
    if (peak && peak->gflops > 0) cell.percent_of_peak = *cell.gflops / peak->gflops * 100.0;
  }
}

CellAssessment assess(const LoadedResult& loaded, const std::string& label, const Constraints& c,
                      const std::optional<probes::PeakFlops>& peak, const std::map<std::string, LabelAccuracyLoss>& label_losses) {
  const auto& r = loaded.result;
  CellAssessment cell;
  cell.label = label;
  cell.path = loaded.path;
  cell.model_name = r.model.name;
  cell.model_file = std::filesystem::path(r.model.path).filename().string();
  cell.backend = r.backend.name;
  cell.model_format = r.model.format;
  cell.batch = r.scenario.batch;
  cell.performance_hint = effective_setting(r, "performance_hint");
  cell.completed = r.status == result::CellStatus::kOk && r.latency_ms.has_value();
  const auto labels = label_losses.find(loaded.path);
  if (cell.completed) cell.figures = figures_of(r, c, labels == label_losses.end() ? nullptr : &labels->second);
  cell.checks = checks_for(cell, r, c);
  fill_economics(cell, c, peak);
  return cell;
}

// Labels name the cell; when two runs of one cell are given, the run folder tells them apart.
std::vector<std::string> labels_for(const std::vector<LoadedResult>& cells) {
  std::map<std::string, int> uses;
  for (const auto& c : cells) ++uses[cell_label(c.result)];
  std::vector<std::string> labels;
  for (const auto& c : cells) {
    auto label = cell_label(c.result);
    if (uses[label] > 1) label += " [" + std::filesystem::path(c.path).parent_path().filename().string() + "]";
    labels.push_back(label);
  }
  return labels;
}

// ---- Ranking --------------------------------------------------------------------------------

// Smaller is better for every objective.
double objective_key(const CellAssessment& cell, Objective o) {
  if (!cell.completed) return std::numeric_limits<double>::infinity();
  switch (o) {
    case Objective::kLatency:
      return cell.figures.p99_ms;
    case Objective::kThroughput:
      return -cell.figures.qps;
    case Objective::kEnergy:
      return cell.figures.inferences_per_joule ? -*cell.figures.inferences_per_joule : 0.0;
  }
  return 0.0;
}

void rank(std::vector<CellAssessment>& cells, Objective o) {
  std::stable_sort(cells.begin(), cells.end(), [o](const CellAssessment& a, const CellAssessment& b) {
    const double ka = objective_key(a, o), kb = objective_key(b, o);
    if (ka != kb) return ka < kb;
    return a.figures.peak_rss_mb < b.figures.peak_rss_mb;  // ties: the smaller footprint
  });
}

}  // namespace

std::string objective_name(Objective o) {
  switch (o) {
    case Objective::kLatency:
      return "lowest P99 latency";
    case Objective::kThroughput:
      return "highest throughput";
    case Objective::kEnergy:
      return "most inferences per joule";
  }
  return "";
}

std::string objective_value(const CellAssessment& cell, Objective o) {
  switch (o) {
    case Objective::kLatency:
      return fmt::format("P99 {} ms", format_number(cell.figures.p99_ms));
    case Objective::kThroughput:
      return fmt::format("{} inferences/s", format_number(cell.figures.qps));
    case Objective::kEnergy:
      return fmt::format("{:.3g} inferences/J", cell.figures.inferences_per_joule.value_or(0.0));
  }
  return "";
}

namespace {

Objective choose_objective(const Constraints& c, const std::vector<CellAssessment>& feasible) {
  const bool energy_known = !feasible.empty() && std::all_of(feasible.begin(), feasible.end(), [](const CellAssessment& a) {
    return a.figures.inferences_per_joule.has_value();
  });
  if (c.energy && energy_known) return Objective::kEnergy;
  // Asking for a rate without a latency bound means throughput is what matters.
  if (c.min_qps && !c.p99_ms) return Objective::kThroughput;
  return Objective::kLatency;
}

// ---- Explanation ----------------------------------------------------------------------------

// How far the cell's binding constraint is past its limit (a cell ruled out only by what could
// not be judged counts as infinitely far).
double binding_excess(const CellAssessment& cell) {
  double worst = 0.0;
  for (const auto& check : cell.checks)
    if (check.required && check.outcome == Outcome::kFailed) worst = std::max(worst, check.excess);
  return worst > 0.0 ? worst : std::numeric_limits<double>::infinity();
}

std::string capitalised(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

std::vector<std::string> texts_of(const std::vector<GivenConstraint>& given, ConstraintRole role) {
  std::vector<std::string> texts;
  for (const auto& g : given)
    if (g.role == role) texts.push_back(g.text);
  return texts;
}

// Which cells the given limits leave in, said with the same constraint set as the "Constraints:"
// line: LLM-only limits that judged none of this model's cells say so, and without a limit, that
// every completed cell qualifies; situations say they select branches, not cells.
std::vector<std::string> qualification(const ModelRecommendation& m, const std::vector<GivenConstraint>& given) {
  if (given.empty()) return {"No constraints given, so every completed cell qualifies; limits: " + limit_flags() + "."};
  std::vector<std::string> lines;
  const auto limits = texts_of(given, ConstraintRole::kLimit);
  std::vector<std::string> elsewhere;  // LLM-only limits on a model with no completed LLM cell
  bool any_completed = false, any_llm = false;
  for (const auto* list : {&m.ranked, &m.rejected})
    for (const auto& cell : *list) {
      any_completed = any_completed || cell.completed;
      any_llm = any_llm || (cell.completed && cell.figures.generation);
    }
  for (const auto& g : given)
    if (g.role == ConstraintRole::kLimit && g.llm_only && any_completed && !any_llm) elsewhere.push_back(g.text);
  if (limits.empty())
    lines.push_back("No limit given, so every completed cell qualifies; limits: " + limit_flags() + ".");
  else if (!elsewhere.empty())
    lines.push_back(fmt::format("{} {} LLM cells only and this model has none{}.", fmt::join(elsewhere, ", "),
                                elsewhere.size() == 1 ? "concerns" : "concern",
                                elsewhere.size() == limits.size() ? ", so every completed cell qualifies" : ""));
  if (const auto situations = texts_of(given, ConstraintRole::kSituation); !situations.empty())
    lines.push_back(fmt::format("{} {} decision-tree branches (below) and {} no cell out.",
                                capitalised(fmt::format("{}", fmt::join(situations, ", "))),
                                situations.size() == 1 ? "selects" : "select", situations.size() == 1 ? "rules" : "rule"));
  return lines;
}

// The figures asked for (cost, machines, GFLOP/s), for the pick.
std::vector<std::string> pick_figures(const CellAssessment& pick, const std::vector<GivenConstraint>& given) {
  std::vector<std::string> lines;
  for (const auto& g : given) {
    std::string figure;
    switch (g.kind) {
      case ConstraintKind::kPricePerHour:
        figure = pick.cost_per_million ? fmt::format("{:.4g}", *pick.cost_per_million) : "unknown (no inferences/s measured)";
        break;
      case ConstraintKind::kTargetQps:
        figure = pick.machines ? fmt::format("{} ({})", *pick.machines, pick.figures.qps_source) : "unknown (no QPS measured)";
        break;
      case ConstraintKind::kModelGflops:
        figure = pick.gflops ? format_number(*pick.gflops) + " GFLOP/s" : "unknown (no inferences/s measured)";
        if (pick.percent_of_peak) figure += fmt::format(", {:.1f}% of peak", *pick.percent_of_peak);
        break;
      default:
        continue;
    }
    lines.push_back(fmt::format("{}: {} for the pick.", capitalised(g.text), figure));
  }
  return lines;
}

std::string pick_explanation(const ModelRecommendation& m, Objective o, std::size_t total) {
  const auto& pick = m.ranked.front();
  const auto& f = pick.figures;
  return fmt::format(
      "Pick {}: {} among the {} of {} cell(s) that meet every constraint (P99 {} ms, {} inferences/s, peak RSS {} MB).",
      pick.label, objective_name(o), m.ranked.size(), total, format_number(f.p99_ms), format_number(f.qps),
      format_number(f.peak_rss_mb));
}

// Which measure judged each cell's accuracy loss, and how coarse a handful of labels is.
std::vector<std::string> accuracy_judgement(const CellRefs& completed, double limit) {
  std::map<AccuracyMeasure, std::vector<std::string>> cells_by;
  double coarsest = 0.0;
  for (const auto* cell : completed) {
    cells_by[cell->figures.accuracy_measure].push_back(cell->label);
    coarsest = std::max(coarsest, cell->figures.label_points_per_sample);
  }
  std::vector<std::string> parts;
  for (const auto& [measure, labels] : cells_by)
    parts.push_back(fmt::format("{} for {}", measure == AccuracyMeasure::kNone ? "nothing" : accuracy_measure_name(measure),
                                fmt::join(labels, ", ")));
  std::vector<std::string> lines{fmt::format("Accuracy loss judged by {}.", fmt::join(parts, "; "))};
  if (coarsest > 0.0 && limit < coarsest)
    lines.push_back(fmt::format(
        "One labelled sample is {:.3g} points of top-1, more than the {:g} allowed: against these labels only cells that "
        "lost no sample meet the limit; more labelled inputs would judge finer.",
        coarsest, limit));
  return lines;
}

// Cells of several batch sizes are ranked together (the batch is one of the choices), but each
// one's latency is per query of that many rows: the explanation says so.
std::optional<std::string> batch_mix(const CellRefs& completed) {
  std::set<long long> batches;
  for (const auto* a : completed) batches.insert(a->batch);
  if (batches.size() < 2) return std::nullopt;
  return fmt::format("These cells ran different batch sizes ({}): latency is per query of that many rows and "
                     "throughput counts rows, so a larger batch trades latency for throughput; each label names "
                     "its batch.",
                     fmt::join(batches, ", "));
}

std::vector<std::string> explain(const ModelRecommendation& m, Objective o, const Constraints& c, const CellRefs& completed) {
  std::vector<std::string> lines;
  const auto total = m.ranked.size() + m.rejected.size();
  if (!m.ranked.empty()) {
    lines.push_back(pick_explanation(m, o, total));
    if (m.ranked.size() > 1) {
      const auto& next = m.ranked[1];
      const double gap = (objective_key(next, o) / objective_key(m.ranked.front(), o) - 1.0) * 100.0;
      lines.push_back(fmt::format("Runner-up {}: {}, {:.1f}% {} than the pick's {}.", next.label, objective_value(next, o),
                                  std::abs(gap), o == Objective::kLatency ? "slower" : "lower",
                                  objective_value(m.ranked.front(), o)));
    }
    const ConstraintCheck* tightest = nullptr;
    for (const auto& check : m.ranked.front().checks)
      if (check.required && (!tightest || check.excess > tightest->excess)) tightest = &check;
    if (tightest)
      lines.push_back(fmt::format("Tightest constraint for the pick: {} ({} {:.0f}% {}).", tightest->detail,
                                  tightest->constraint == "QPS" ? "the minimum is" : "at", tightest->excess * 100,
                                  tightest->constraint == "QPS" ? "of the measured rate" : "of the limit"));
  } else {
    lines.push_back("No cell meets every constraint.");
    const CellAssessment* closest = nullptr;
    for (const auto& cell : m.rejected)
      if (cell.completed && (!closest || binding_excess(cell) < binding_excess(*closest))) closest = &cell;
    if (closest) lines.push_back(fmt::format("Closest: {}, ruled out by {}.", closest->label, closest->binding()));
  }
  const auto given = given_constraints(c);
  for (auto& line : qualification(m, given)) lines.push_back(std::move(line));
  if (!m.ranked.empty())
    for (auto& line : pick_figures(m.ranked.front(), given)) lines.push_back(std::move(line));
  if (auto line = batch_mix(completed)) lines.push_back(std::move(*line));
  if (o == Objective::kThroughput && std::all_of(completed.begin(), completed.end(), [](const CellAssessment* a) {
        return a->figures.qps_source == "measured inferences/s";
      }))
    lines.push_back(
        "Throughput here is each run's measured rate; for capacity use --scenario offline or --scenario server --find-max-qps.");
  if (c.energy && o != Objective::kEnergy) {
    const auto without = std::find_if(completed.begin(), completed.end(),
                                      [](const CellAssessment* a) { return !a->figures.inferences_per_joule; });
    lines.push_back(fmt::format("Energy cannot be judged ({}); ranked by {} instead.",
                                without != completed.end() ? (*without)->figures.energy_source : "no cell meets the constraints",
                                objective_name(o)));
  }
  if (c.max_accuracy_loss_pct)
    for (auto& line : accuracy_judgement(completed, *c.max_accuracy_loss_pct)) lines.push_back(std::move(line));
  return lines;
}

// ---- Output ---------------------------------------------------------------------------------

std::string accuracy_text(const CellFigures& f) {
  if (!f.accuracy_loss) return "-";
  if (f.accuracy_measure == AccuracyMeasure::kLabels) return fmt::format("{:.1f} points", *f.accuracy_loss * 100.0);
  return fmt::format("{:.2f}%", *f.accuracy_loss * 100.0);
}

// "71.4% (7)": top-1 vs labels and the sample count; "n/a" without labels.
std::string label_top1_text(const CellFigures& f) {
  return f.label_top1 ? fmt::format("{:.1f}% ({})", *f.label_top1 * 100, f.label_samples) : std::string("n/a");
}

bool any_label_top1(const Recommendation& rec) {
  for (const auto& m : rec.models)
    for (const auto* list : {&m.ranked, &m.rejected})
      for (const auto& cell : *list)
        if (cell.figures.label_top1) return true;
  return false;
}

bool any_gflops(const Recommendation& rec) {
  for (const auto& m : rec.models)
    for (const auto* list : {&m.ranked, &m.rejected})
      for (const auto& cell : *list)
        if (cell.gflops) return true;
  return false;
}

std::vector<std::string> row_for(const CellAssessment& cell, const std::string& rank, const Recommendation& rec) {
  const auto& f = cell.figures;
  const auto& c = rec.constraints;
  auto measured = [&](auto text) { return cell.completed ? text() : std::string("-"); };
  std::vector<std::string> row{rank,
                               cell.label,
                               measured([&] { return format_number(f.p99_ms); }),
                               measured([&] { return format_number(f.qps); }),
                               measured([&] { return f.peak_rss_mb > 0 ? format_number(f.peak_rss_mb) : std::string("-"); }),
                               accuracy_text(f)};
  if (any_label_top1(rec))
    row.push_back(label_top1_text(f));
  if (c.energy) row.push_back(f.inferences_per_joule ? fmt::format("{:.3g}", *f.inferences_per_joule) : "-");
  if (c.watts) row.push_back(f.average_watts ? fmt::format("{:.3g}", *f.average_watts) : "-");
  if (c.price_per_hour) row.push_back(cell.cost_per_million ? fmt::format("{:.4g}", *cell.cost_per_million) : "-");
  if (c.target_qps) row.push_back(cell.machines ? std::to_string(*cell.machines) : "-");
  if (any_gflops(rec)) {
    row.push_back(cell.gflops ? format_number(*cell.gflops) : "-");
    row.push_back(cell.percent_of_peak ? fmt::format("{:.1f}%", *cell.percent_of_peak) : "-");
  }
  row.push_back(cell.meets_all() ? "meets every constraint" : cell.binding());
  return row;
}

std::vector<MarkdownColumn> columns_for(const Constraints& c, bool with_gflops, bool with_label_top1) {
  std::vector<MarkdownColumn> columns{{"rank", true}, {"cell", false},       {"P99 ms", true},
                                      {"QPS", true},  {"peak RSS MB", true}, {"accuracy loss", true}};
  if (with_label_top1) columns.push_back({"top-1 vs labels", true});
  if (c.energy) columns.push_back({"inferences/J", true});
  if (c.watts) columns.push_back({"average W", true});
  if (c.price_per_hour) columns.push_back({"$ per M inferences", true});
  if (c.target_qps) columns.push_back({"machines", true});
  if (with_gflops) {
    columns.push_back({"GFLOP/s", true});
    columns.push_back({"% of peak", true});
  }
  columns.push_back({"verdict", false});
  return columns;
}

// LLM cells: the serving figures of the performance-testing guide beside its baselines.
std::string llm_markdown(const ModelRecommendation& m) {
  std::vector<std::vector<std::string>> rows;
  const auto optional_text = [](const std::optional<double>& v) { return v ? format_number(*v) : std::string("-"); };
  for (const auto* list : {&m.ranked, &m.rejected})
    for (const auto& cell : *list) {
      const auto& f = cell.figures;
      if (!cell.completed || !f.generation) continue;
      rows.push_back({cell.label, optional_text(f.ttft_p99_ms), optional_text(f.tpot_p99_ms), format_number(f.p99_ms),
                      f.peak_rss_mb > 0 ? fmt::format("{:.2f}", f.peak_rss_mb / 1024) : "-",
                      f.parameters ? fmt::format("{:.3g}", *f.parameters / 1e9) : "not recorded",
                      f.gb_per_billion_parameters ? fmt::format("{:.2f}", *f.gb_per_billion_parameters) : "-"});
    }
  if (rows.empty()) return "";
  return fmt::format("\nLLM serving, beside the baselines of {} ({}):\n\n", markdown_citation(FieldGuide::kPerformanceTesting),
                     kLlmServingBaselines) +
         markdown_table({{"cell", false},
                         {"TTFT P99 ms", true},
                         {"TPOT P99 ms", true},
                         {"P99 ms", true},
                         {"peak RSS GB", true},
                         {"B parameters", true},
                         {"GB per B params", true}},
                        rows);
}

// " (served)" where the results mix origins, so each section says whose latencies it ranks.
template <typename Section>
std::string origin_suffix(const Section& s) {
  return s.origin_named ? fmt::format(" ({})", name_of(s.origin)) : std::string();
}

// "resnet50", "resnet50 on vm (CPU)", "resnet50 (served)".
template <typename Section>
std::string section_title(const std::string& name, const Section& s) {
  return name + (s.machine.empty() ? "" : " on " + s.machine) + origin_suffix(s);
}

std::string model_markdown(const ModelRecommendation& m, const Recommendation& rec) {
  const auto title = section_title(m.model, m);
  std::string out = fmt::format("## {}\n\nObjective: {}; ties go to the smaller peak RSS.\n\n", title, m.objective);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < m.ranked.size(); ++i) rows.push_back(row_for(m.ranked[i], std::to_string(i + 1), rec));
  for (const auto& cell : m.rejected) rows.push_back(row_for(cell, "-", rec));
  out += markdown_table(columns_for(rec.constraints, any_gflops(rec), any_label_top1(rec)), rows) + "\n";

  std::set<std::string> qps_sources, accuracy_sources;
  for (const auto* list : {&m.ranked, &m.rejected})
    for (const auto& cell : *list)
      if (cell.completed) {
        qps_sources.insert(cell.figures.qps_source);
        if (cell.figures.accuracy_loss) accuracy_sources.insert(cell.figures.accuracy_source);
      }
  out += fmt::format("QPS: {}. Accuracy loss: {}.\n", fmt::join(qps_sources, "; "),
                     accuracy_sources.empty() ? "no cross-check" : fmt::format("{}", fmt::join(accuracy_sources, "; ")));
  if (rec.constraints.target_qps)
    out += fmt::format("Machines for {:g} inferences/s = ceil({:g} / QPS at the SLA), with QPS as above.\n",
                       *rec.constraints.target_qps, *rec.constraints.target_qps);
  if (rec.constraints.price_per_hour)
    out += fmt::format("Cost per million inferences = {:g} / (3600 x inferences/s) x 1e6.\n", *rec.constraints.price_per_hour);
  if (rec.constraints.watts) out += "Average power = measured energy (J) / measured duration (s), where energy was measured.\n";
  out += llm_markdown(m);

  if (!m.rejected.empty()) {
    out += "\nRuled out:\n";
    for (const auto& cell : m.rejected) {
      std::vector<std::string> reasons;
      for (const auto& check : cell.checks)
        if (check.required && check.outcome != Outcome::kMet) reasons.push_back(check.detail);
      out += fmt::format("- {}: {}\n", cell.label, fmt::join(reasons, "; "));
    }
  }
  out += "\nWhy:\n";
  for (const auto& line : m.explanation) out += "- " + line + "\n";
  return out + "\n" + decision_tree_branches_markdown(m.decision_tree_branches) + "\n";
}

json check_json(const ConstraintCheck& c) {
  const char* outcome = c.outcome == Outcome::kMet ? "met" : c.outcome == Outcome::kFailed ? "failed" : "cannot be judged";
  return {{"constraint", c.constraint}, {"outcome", outcome}, {"detail", c.detail}, {"required", c.required}};
}

template <typename T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json cell_json(const CellAssessment& cell) {
  const auto& f = cell.figures;
  json checks = json::array();
  for (const auto& c : cell.checks) checks.push_back(check_json(c));
  return {{"label", cell.label},
          {"path", cell.path},
          {"model_name", cell.model_name},
          {"model_file", cell.model_file},
          {"backend", cell.backend},
          {"batch", cell.batch},
          {"completed", cell.completed},
          {"p99_ms", f.p99_ms},
          {"qps", f.qps},
          {"qps_source", f.qps_source},
          {"inferences_per_s", f.inferences_per_s},
          {"peak_rss_mb", f.peak_rss_mb},
          {"accuracy_loss", optional_json(f.accuracy_loss)},
          {"accuracy_source", f.accuracy_source},
          {"accuracy_measure", accuracy_measure_name(f.accuracy_measure)},
          {"label_top1", optional_json(f.label_top1)},
          {"label_samples", f.label_samples},
          {"inferences_per_joule", optional_json(f.inferences_per_joule)},
          {"energy_source", f.energy_source},
          {"average_watts", optional_json(f.average_watts)},
          {"power_source", f.power_source},
          {"ttft_p99_ms", optional_json(f.ttft_p99_ms)},
          {"tpot_p99_ms", optional_json(f.tpot_p99_ms)},
          {"parameters", optional_json(f.parameters)},
          {"gb_per_billion_parameters", optional_json(f.gb_per_billion_parameters)},
          {"cost_per_million", optional_json(cell.cost_per_million)},
          {"machines", optional_json(cell.machines)},
          {"model_gflops", optional_json(f.model_gflops)},
          {"gflops_source", f.gflops_source},
          {"gflops", optional_json(cell.gflops)},
          {"percent_of_peak", optional_json(cell.percent_of_peak)},
          {"meets_all", cell.meets_all()},
          {"binding", cell.binding()},
          {"checks", checks}};
}

}  // namespace

bool CellAssessment::meets_all() const {
  return std::all_of(checks.begin(), checks.end(),
                     [](const ConstraintCheck& c) { return !c.required || c.outcome == Outcome::kMet; });
}

std::string CellAssessment::binding() const {
  const ConstraintCheck* worst = nullptr;
  for (const auto& c : checks)
    if (c.required && c.outcome == Outcome::kFailed && (!worst || c.excess > worst->excess)) worst = &c;
  if (worst) return worst->detail;
  for (const auto& c : checks)
    if (c.required && c.outcome == Outcome::kUnknown) return c.detail;
  return "";
}

bool Recommendation::every_model_has_a_pick() const {
  return std::all_of(models.begin(), models.end(), [](const ModelRecommendation& m) { return !m.ranked.empty(); });
}

namespace {

ModelRecommendation recommend_for(const std::string& model, const std::string& machine, const std::vector<LoadedResult>& cells,
                                  const Constraints& constraints, const std::optional<probes::PeakFlops>& peak,
                                  const std::map<std::string, LabelAccuracyLoss>& label_losses) {
  ModelRecommendation m;
  m.model = model;
  m.machine = machine;
  m.origin = cells.front().result.origin;  // the caller passes cells of one origin
  const auto labels = labels_for(cells);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    auto cell = assess(cells[i], labels[i], constraints, peak, label_losses);
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

// Rows: each model's cells in the order first seen; columns: machines; values: the objective's figure.
MachineMatrix machine_matrix(const std::vector<ModelRecommendation>& models, const std::vector<std::string>& machines,
                             const Constraints& constraints) {
  MachineMatrix matrix{machines, {}};
  std::map<std::pair<std::string, std::string>, std::size_t> row_of;
  for (const auto& m : models) {
    const auto column = static_cast<std::size_t>(std::find(machines.begin(), machines.end(), m.machine) - machines.begin());
    const auto objective = choose_objective(constraints, m.ranked);
    for (const auto* list : {&m.ranked, &m.rejected})
      for (const auto& cell : *list) {
        const auto model = m.model + origin_suffix(m);
        const auto [it, added] = row_of.try_emplace({model, cell.label}, matrix.rows.size());
        if (added) matrix.rows.push_back({model, cell.label, std::vector<std::string>(machines.size(), "-")});
        auto value = cell.completed ? objective_value(cell, objective) : std::string("did not complete");
        if (!m.ranked.empty() && &cell == &m.ranked.front()) value += " (pick)";
        matrix.rows[it->second].values[column] = value;
      }
  }
  return matrix;
}

// Every family (report/model_families) whose cells span two or more model names, per machine and origin.
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
        if (it == families.end())
          it = families.insert(families.end(), {family, m.machine, m.origin, m.origin_named, "", {}, {}});
        (cell.meets_all() ? it->ranked : it->rejected).push_back(cell);
        members[{family, m.machine, m.origin}].insert(cell.model_name);
      }
  std::erase_if(families,
                [&](const FamilyRecommendation& f) { return members[{f.family, f.machine, f.origin}].size() < 2; });
  for (auto& f : families) {
    const auto objective = choose_objective(constraints, f.ranked);
    f.objective = objective_name(objective);
    rank(f.ranked, objective);
    rank(f.rejected, objective);
  }
  return families;
}

std::string family_markdown(const FamilyRecommendation& f, const Recommendation& rec) {
  const auto title = section_title(f.family, f);
  std::vector<std::vector<std::string>> rows;
  const bool labels = any_label_top1(rec);
  const auto add = [&](const CellAssessment& cell, const std::string& rank) {
    const auto& fig = cell.figures;
    rows.push_back({rank, cell.model_file, cell.label, cell.completed ? format_number(fig.p99_ms) : "-",
                    cell.completed ? format_number(fig.qps) : "-", accuracy_text(fig)});
    if (labels)
      rows.back().push_back(label_top1_text(fig));
    rows.back().push_back(cell.meets_all() ? "meets every constraint" : cell.binding());
  };
  for (std::size_t i = 0; i < f.ranked.size(); ++i) add(f.ranked[i], std::to_string(i + 1));
  for (const auto& cell : f.rejected) add(cell, "-");
  std::vector<MarkdownColumn> columns{{"rank", true}, {"model file", false}, {"cell", false},
                                      {"P99 ms", true}, {"QPS", true},        {"accuracy loss", true}};
  if (labels) columns.push_back({"top-1 vs labels", true});
  columns.push_back({"verdict", false});
  auto out = fmt::format(
      "## {}: precision variants side by side\n\nEvery cell of {} and its reduced-precision files, ranked by {} among those "
      "that meet every constraint; each accuracy loss is against the family's FP32 reference (measured as each model's "
      "section says).\n\n",
      title, f.family, f.objective);
  out += markdown_table(columns, rows) + "\n";
  out += f.ranked.empty() ? "No cell of the family meets every constraint.\n\n"
                          : fmt::format("Pick across the family: {} {} ({}).\n\n", f.ranked.front().model_file,
                                        f.ranked.front().label, f.objective);
  return out;
}

std::string machine_matrix_markdown(const MachineMatrix& matrix) {
  std::vector<MarkdownColumn> columns{{"model", false}, {"cell", false}};
  for (const auto& machine : matrix.machines) columns.push_back({machine, true});
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : matrix.rows) {
    rows.push_back({row.model, row.cell});
    rows.back().insert(rows.back().end(), row.values.begin(), row.values.end());
  }
  return "## Which framework on which machine\n\nEach cell's figure on its recommendation's objective; (pick) marks the "
         "recommendation on that machine, - a cell not measured there.\n\n" +
         markdown_table(columns, rows) + "\n";
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
  const auto label_losses = label_accuracy_losses(results);
  std::map<result::ResultOrigin, std::vector<LoadedResult>> origins;  // never ranked against each other
  for (const auto& [model, of_model] : group_by_model(results)) {
    origins.clear();
    for (const auto& r : of_model) origins[r.result.origin].push_back(r);
    for (const auto& [origin, cells] : origins) {
      if (machines.size() == 1) {
        rec.models.push_back(recommend_for(model, "", cells, constraints, peak, label_losses));
        continue;
      }
      for (const auto& [machine, on_machine] : group_by_machine(cells))
        rec.models.push_back(recommend_for(model, machine, on_machine, constraints, peak, label_losses));
    }
  }
  name_mixed_origins(rec);
  rec.families = family_recommendations(rec.models, constraints);
  if (machines.size() > 1) rec.machine_matrix = machine_matrix(rec.models, machines, constraints);
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

std::string to_markdown(const Recommendation& rec) {
  std::string out =
      fmt::format("# infermark recommend\n\nConstraints: {}.\n", constraints_text(given_constraints(rec.constraints)));
  if (any_gflops(rec)) {
    std::set<std::string> sources;
    for (const auto& m : rec.models)
      for (const auto* list : {&m.ranked, &m.rejected})
        for (const auto& cell : *list)
          if (cell.figures.model_gflops)
            sources.insert(fmt::format("{}: {:g} GFLOP per inference ({})", m.model, *cell.figures.model_gflops,
                                       cell.figures.gflops_source));
    out += fmt::format("Model FLOPs: {}; GFLOP/s = that x inferences/s.\n", fmt::join(sources, "; "));
    out += rec.peak ? fmt::format("Peak: {}.\n", rec.peak->derivation) : std::string("Peak: unknown, so no % of peak.\n");
  }
  for (const auto& note : rec.notes) out += "Note: " + note + ".\n";
  out += "\n";
  for (const auto& m : rec.models) out += model_markdown(m, rec);
  for (const auto& f : rec.families) out += family_markdown(f, rec);
  if (rec.machine_matrix) out += machine_matrix_markdown(*rec.machine_matrix);
  out.pop_back();  // each model section ends with a blank line; the document need not
  return out;
}

namespace {

json families_json(const std::vector<FamilyRecommendation>& families) {
  json out = json::array();
  for (const auto& f : families) {
    json ranked = json::array(), rejected = json::array();
    for (const auto& cell : f.ranked) ranked.push_back(cell_json(cell));
    for (const auto& cell : f.rejected) rejected.push_back(cell_json(cell));
    out.push_back({{"family", f.family},
                   {"machine", f.machine},
                   {"origin", name_of(f.origin)},
                   {"objective", f.objective},
                   {"pick", f.ranked.empty() ? json(nullptr)
                                             : json{{"model_file", f.ranked.front().model_file}, {"label", f.ranked.front().label}}},
                   {"ranked", ranked},
                   {"rejected", rejected}});
  }
  return out;
}

json matrix_json(const MachineMatrix& matrix) {
  json rows = json::array();
  for (const auto& row : matrix.rows) rows.push_back({{"model", row.model}, {"cell", row.cell}, {"values", row.values}});
  return {{"machines", matrix.machines}, {"rows", rows}};
}

}  // namespace

json to_json(const Recommendation& rec) {
  const auto& c = rec.constraints;
  json models = json::array();
  for (const auto& m : rec.models) {
    json ranked = json::array(), rejected = json::array(), branches = json::array();
    for (const auto& cell : m.ranked) ranked.push_back(cell_json(cell));
    for (const auto& cell : m.rejected) rejected.push_back(cell_json(cell));
    for (const auto& b : m.decision_tree_branches) branches.push_back(to_json(b));
    models.push_back({{"model", m.model},
                      {"machine", m.machine},
                      {"origin", name_of(m.origin)},
                      {"origin_named", m.origin_named},
                      {"objective", m.objective},
                      {"pick", m.ranked.empty() ? json(nullptr) : json(m.ranked.front().label)},
                      {"ranked", ranked},
                      {"rejected", rejected},
                      {"decision_tree_branches", branches},
                      {"explanation", m.explanation}});
  }
  return {{"constraints",
           {{"p99_ms", optional_json(c.p99_ms)},
            {"min_qps", optional_json(c.min_qps)},
            {"mem_mb", optional_json(c.mem_mb)},
            {"max_accuracy_loss_pct", optional_json(c.max_accuracy_loss_pct)},
            {"dynamic_shapes", c.dynamic_shapes},
            {"energy", c.energy},
            {"price_per_hour", optional_json(c.price_per_hour)},
            {"target_qps", optional_json(c.target_qps)},
            {"model_gflops", optional_json(c.model_gflops)},
            {"watts", optional_json(c.watts)},
            {"ttft_ms", optional_json(c.ttft_ms)},
            {"tpot_ms", optional_json(c.tpot_ms)},
            {"domestic_hardware", c.domestic_hardware},
            {"fast_iteration", c.fast_iteration},
            {"dynamic_control_flow", c.dynamic_control_flow},
            {"multi_backend", c.multi_backend}}},
          {"peak", rec.peak ? json{{"gflops", rec.peak->gflops}, {"derivation", rec.peak->derivation}} : json(nullptr)},
          {"models", models},
          {"families", families_json(rec.families)},
          {"notes", rec.notes},
          {"machine_matrix", rec.machine_matrix ? matrix_json(*rec.machine_matrix) : json(nullptr)},
          {"every_model_has_a_pick", rec.every_model_has_a_pick()}};
}

}  // namespace infermark::report
