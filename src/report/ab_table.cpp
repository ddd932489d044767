#include "report/ab_table.hpp"

#include <fmt/core.h>

#include "report/compare.hpp"
#include "report/markdown_table.hpp"

namespace infermark::report {
namespace {

std::string variant_of(const RunResult& r) { return r.scenario.parameters.value("variant", r.backend.name); }
double weight_of(const RunResult& r) { return r.scenario.parameters.value("weight", 0.0); }

std::string change_text(const MetricChange& m) {
  std::string text = fmt::format("{:+.1f}%", m.change_pct);
  if (m.ratio_ci) text += fmt::format(" [{:.3f}, {:.3f}]", m.ratio_ci->low, m.ratio_ci->high);
  return text;
}

// "Shadow: ov mirrored to ort: 1x3x224x224 2 of 120 disagreed (max abs error 0.0012); ..." per variant.
std::string shadow_notes(const std::vector<const LoadedResult*>& served) {
  std::string notes;
  for (const auto* c : served) {
    const auto& p = c->result.scenario.parameters;
    if (!p.contains("shadow") || !p["shadow"].is_object()) continue;
    for (const auto& [shadow, record] : p["shadow"].items()) {
      std::string shapes;
      for (const auto& s : record.value("by_shape", nlohmann::json::array()))
        shapes += fmt::format("{}{}: {} of {} disagreed on top-1 (max abs error {:.3g})", shapes.empty() ? "" : "; ",
                              s.value("shape", "?"), s.value("disagreed", 0), s.value("compared", 0),
                              s.value("max_abs_error", 0.0));
      notes += fmt::format("- Shadow: '{}' mirrored to '{}': {}{}\n", variant_of(c->result), shadow,
                           shapes.empty() ? "nothing compared" : shapes,
                           record.value("dropped", 0) ? fmt::format(" ({} dropped)", record.value("dropped", 0)) : "");
    }
  }
  return notes.empty() ? "" : notes + "\n";
}

}  // namespace

std::string ab_table(const std::vector<LoadedResult>& cells) {
  std::vector<const LoadedResult*> served;
  for (const auto& c : cells)
    if (c.result.scenario.name == "serve" && c.result.latency_ms) served.push_back(&c);
  if (served.size() < 2) return shadow_notes(served);
  const LoadedResult* control = served.front();
  for (const auto* c : served)
    if (weight_of(c->result) > weight_of(control->result)) control = c;
  std::vector<std::vector<std::string>> rows;
  for (const auto* c : served) {
    if (c == control) continue;
    const auto judged = compare_cell(cell_key(c->result), *control, *c, {});
    const auto& p50 = judged.metrics.at(0);
    const auto& p99 = judged.metrics.at(1);
    rows.push_back({variant_of(c->result), std::to_string(c->result.scenario.timed_runs), change_text(p50),
                    p50.p_value ? fmt::format("{:.3g}", *p50.p_value) : "-", verdict_name(p50.verdict), change_text(p99),
                    verdict_name(p99.verdict)});
  }
  return fmt::format("### A/B on live traffic (against the control '{}', {} requests)\n\n", variant_of(control->result),
                     control->result.scenario.timed_runs) +
         markdown_table({{"variant"},
                         {"requests", true},
                         {"P50 change [ratio 95% CI]", true},
                         {"p (Mann-Whitney)", true},
                         {"P50 verdict"},
                         {"P99 change [ratio 95% CI]", true},
                         {"P99 verdict"}},
                        rows) +
         "\nServer-side latency of the requests each variant served; the control is the variant with the largest weight.\n\n" +
         shadow_notes(served);
}

}  // namespace infermark::report
