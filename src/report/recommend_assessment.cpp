#include "report/recommend_assessment.hpp"

#include <cmath>
#include <filesystem>

#include "report/comparison_table.hpp"
#include "report/recommend_checks.hpp"
#include "report/recommend_figures.hpp"

namespace infermark::report {
namespace {

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

}  // namespace

QualityLosses quality_losses(const std::vector<LoadedResult>& results) {
  QualityLosses losses{label_accuracy_losses(results), {}};
  std::vector<const result::RunResult*> runs;
  for (const auto& r : results) runs.push_back(&r.result);
  const auto perplexity = perplexity_losses(runs);
  for (std::size_t i = 0; i < results.size(); ++i)
    if (perplexity[i]) losses.perplexity[results[i].path] = *perplexity[i];
  return losses;
}

CellAssessment assess(const LoadedResult& loaded, const std::string& label, const Constraints& c,
                      const std::optional<probes::PeakFlops>& peak, const QualityLosses& losses) {
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
  const auto labels = losses.labels.find(loaded.path);
  const auto perplexity = losses.perplexity.find(loaded.path);
  if (cell.completed)
    cell.figures = figures_of(r, c, labels == losses.labels.end() ? nullptr : &labels->second,
                              perplexity == losses.perplexity.end() ? nullptr : &perplexity->second);
  cell.checks = checks_for(cell, r, c);
  fill_economics(cell, c, peak);
  return cell;
}

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

}  // namespace infermark::report
