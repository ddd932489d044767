// `recommend` as Markdown: the constraints, then per model its ranked table, sources, LLM figures,
// what ruled cells out, the Why list and the decision-tree branches; the families; the machine matrix.
#include <fmt/format.h>

#include <set>

#include "core/markdown_table.hpp"
#include "report/decision_tree_verdicts.hpp"
#include "report/field_guides.hpp"
#include "report/recommend.hpp"
#include "report/recommend_sections.hpp"

namespace infermark::report {
namespace {

std::string accuracy_text(const CellFigures& f) {
  if (!f.accuracy_loss) return "-";
  if (f.accuracy_measure == AccuracyMeasure::kLabels) return fmt::format("{:.1f} points", *f.accuracy_loss * 100.0);
  return fmt::format("{:.2f}%", *f.accuracy_loss * 100.0);
}

// "71.4% (7)": top-1 vs labels and the sample count; "n/a" without labels.
std::string label_top1_text(const CellFigures& f) {
  return f.label_top1 ? fmt::format("{:.1f}% ({})", *f.label_top1 * 100, f.label_samples) : std::string("n/a");
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
  if (any_label_top1(rec)) row.push_back(label_top1_text(f));
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

std::string family_markdown(const FamilyRecommendation& f, const Recommendation& rec) {
  const auto title = section_title(f.family, f);
  std::vector<std::vector<std::string>> rows;
  const bool labels = any_label_top1(rec);
  const auto add = [&](const CellAssessment& cell, const std::string& rank) {
    const auto& fig = cell.figures;
    rows.push_back({rank, cell.model_file, cell.label, cell.completed ? format_number(fig.p99_ms) : "-",
                    cell.completed ? format_number(fig.qps) : "-", accuracy_text(fig)});
    if (labels) rows.back().push_back(label_top1_text(fig));
    rows.back().push_back(cell.meets_all() ? "meets every constraint" : cell.binding());
  };
  for (std::size_t i = 0; i < f.ranked.size(); ++i) add(f.ranked[i], std::to_string(i + 1));
  for (const auto& cell : f.rejected) add(cell, "-");
  std::vector<MarkdownColumn> columns{{"rank", true},   {"model file", false}, {"cell", false},
                                      {"P99 ms", true}, {"QPS", true},         {"accuracy loss", true}};
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

}  // namespace

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

}  // namespace infermark::report
