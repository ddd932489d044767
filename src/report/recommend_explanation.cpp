#include "report/recommend_explanation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "core/markdown_table.hpp"
#include "report/recommend_figures.hpp"
#include "report/recommend_ranking.hpp"

namespace infermark::report {
namespace {

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
  // A pipeline's memory is not measured (its result says so): no figure rather than 0 MB.
  const auto memory = f.peak_rss_mb > 0 ? "peak RSS " + format_number(f.peak_rss_mb) + " MB" : std::string("memory not measured");
  return fmt::format("Pick {}: {} among the {} of {} cell(s) that meet every constraint (P99 {} ms, {} inferences/s, {}).",
                     pick.label, objective_name(o), m.ranked.size(), total, format_number(f.p99_ms), format_number(f.qps),
                     memory);
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
  return fmt::format(
      "These cells ran different batch sizes ({}): latency is per query of that many rows and "
      "throughput counts rows, so a larger batch trades latency for throughput; each label names "
      "its batch.",
      fmt::join(batches, ", "));
}

}  // namespace

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

}  // namespace infermark::report
