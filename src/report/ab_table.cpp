#include "report/ab_table.hpp"

#include <fmt/core.h>

#include "core/markdown_table.hpp"

namespace infermark::report {
namespace {

using nlohmann::json;

std::string variant_of(const result::RunResult& r) {
  return r.scenario.parameters.serving ? r.scenario.parameters.serving->variant : r.backend.name;
}
double weight_of(const result::RunResult& r) {
  return r.scenario.parameters.serving ? r.scenario.parameters.serving->weight : 0.0;
}

std::string change_text(const MetricChange& m) {
  std::string text = fmt::format("{:+.1f}%", m.change_pct);
  if (m.ratio_ci) text += fmt::format(" [{:.3f}, {:.3f}]", m.ratio_ci->low, m.ratio_ci->high);
  return text;
}

// "'ov' mirrored to 'ort': 1x3x224x224 2 of 120 disagreed (max abs error 0.0012); ..." per variant.
std::vector<std::string> shadow_notes(const std::vector<const LoadedResult*>& served) {
  std::vector<std::string> notes;
  for (const auto* c : served) {
    const auto& serving = c->result.scenario.parameters.serving;
    if (!serving) continue;
    for (const auto& [shadow, record] : serving->shadow) {
      std::string shapes;
      for (const auto& s : record.by_shape)
        shapes += fmt::format("{}{}: {} of {} disagreed (max abs error {:.3g})", shapes.empty() ? "" : "; ", s.shape, s.disagreed,
                              s.compared, s.max_abs_error);
      notes.push_back(fmt::format("'{}' mirrored to '{}': {}{}", variant_of(c->result), shadow,
                                  shapes.empty() ? "nothing compared" : shapes,
                                  record.dropped ? fmt::format(" ({} dropped)", record.dropped) : ""));
    }
  }
  return notes;
}

json change_json(const MetricChange& m) {
  return {{"change_pct", m.change_pct},
          {"ratio_ci", m.ratio_ci ? json::array({m.ratio_ci->low, m.ratio_ci->high}) : json(nullptr)},
          {"p_value", m.p_value ? json(*m.p_value) : json(nullptr)},
          {"verdict", verdict_name(m.verdict)}};
}

constexpr const char* kLatencyMeasured =
    "Server-side latency of the requests each variant served; the control is the variant with the largest weight.";

}  // namespace

AbComparison ab_comparison(const std::vector<LoadedResult>& cells) {
  std::vector<const LoadedResult*> served;
  for (const auto& c : cells)
    if (c.result.origin == result::ResultOrigin::kServed && c.result.latency_ms) served.push_back(&c);
  AbComparison ab;
  ab.shadow_notes = shadow_notes(served);
  if (served.size() < 2) return ab;
  const LoadedResult* control = served.front();
  for (const auto* c : served)
    if (weight_of(c->result) > weight_of(control->result)) control = c;
  ab.control = variant_of(control->result);
  ab.control_requests = control->result.scenario.timed_runs;
  for (const auto* c : served) {
    if (c == control) continue;
    const auto judged = compare_cell(cell_key(c->result), *control, *c, {});
    ab.rows.push_back({variant_of(c->result), c->result.scenario.timed_runs, judged.metrics.at(0), judged.metrics.at(1)});
  }
  return ab;
}

std::string ab_table(const std::vector<LoadedResult>& cells) {
  const auto ab = ab_comparison(cells);
  std::string shadows;
  for (const auto& note : ab.shadow_notes) shadows += "- Shadow: " + note + "\n";
  if (!shadows.empty()) shadows += "\n";
  if (ab.rows.empty()) return shadows;
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : ab.rows)
    rows.push_back({row.variant, std::to_string(row.requests), change_text(row.p50),
                    row.p50.p_value ? fmt::format("{:.3g}", *row.p50.p_value) : "-", verdict_name(row.p50.verdict),
                    change_text(row.p99), verdict_name(row.p99.verdict)});
  return fmt::format("### A/B on live traffic (against the control '{}', {} requests)\n\n", ab.control, ab.control_requests) +
         markdown_table({{"variant"},
                         {"requests", true},
                         {"P50 change [ratio 95% CI]", true},
                         {"p (Mann-Whitney)", true},
                         {"P50 verdict"},
                         {"P99 change [ratio 95% CI]", true},
                         {"P99 verdict"}},
                        rows) +
         "\n" + kLatencyMeasured + "\n\n" + shadows;
}

json to_json(const AbComparison& ab) {
  json rows = json::array();
  for (const auto& row : ab.rows)
    rows.push_back(
        {{"variant", row.variant}, {"requests", row.requests}, {"p50", change_json(row.p50)}, {"p99", change_json(row.p99)}});
  return {{"control", ab.control},
          {"control_requests", ab.control_requests},
          {"rows", rows},
          {"shadow_notes", ab.shadow_notes},
          {"latency_measured", kLatencyMeasured}};
}

}  // namespace infermark::report
