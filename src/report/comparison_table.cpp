#include "report/comparison_table.hpp"

#include <fmt/format.h>

#include "core/markdown_table.hpp"
#include "report/energy_column.hpp"
#include "report/generation_table.hpp"
#include "report/label_accuracy_column.hpp"
#include "report/percentile_claims.hpp"
#include "report/relative_speed.hpp"
#include "report/zoo_accuracy.hpp"
#include "stats/agreement_measure.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>

namespace infermark::report {
namespace {

// The inferences/J column goes after inferences/s when any cell measured energy.
const std::vector<MarkdownColumn> kColumns{{"backend", false},     {"version", false},     {"threads", true},
                                           {"mean ± sd ms", true}, {"P50 ms", true},       {"P99 ms", true},
                                           {"relative P50", true}, {"inferences/s", true}, {"peak RSS MB", true},
                                           {"max abs err", true},  {"top-1 agree", true},  {"status", false}};
constexpr std::size_t kEnergyColumn = 8;
constexpr std::size_t kBatchColumn = 3;  // after threads; inserted after the energy column, so it does not shift it

std::string fixed(double value, int digits) { return fmt::format("{:.{}f}", value, digits); }

// Agreement of the first output with the reference backend's: max abs error, and the figure its
// kind calls for (report/agreement_measure): top-1 share of class scores, per step for per-step
// scores, the mean and least cosine of an embedding's vectors.
std::array<std::string, 2> agreement_cells(const result::RunResult& r) {
  if (!r.cross_check || r.cross_check->outputs.empty()) return {"-", "-"};
  if (r.cross_check->is_reference) return {"(reference)", "(reference)"};
  const auto& first = r.cross_check->outputs.front();
  if (!first.comparable) return {"not comparable", "-"};
  return {fmt::format("{:.2e}", first.max_abs_error), stats::agreement_text(first, kind_of(r.model.output_kinds, first.output))};
}

std::vector<std::string> row_for(const result::RunResult& r, const std::string& relative) {
  std::vector<std::string> row{r.backend.name, r.backend.version.empty() ? "-" : r.backend.version, threads_cell(r)};
  if (r.latency_ms) {
    row.push_back(fixed(r.latency_ms->mean, 3) + " ± " + fixed(r.latency_ms->stddev, 3));
    row.push_back(fixed(r.latency_ms->at(50).value, 3));
    row.push_back(fixed(r.latency_ms->at(99).value, 3));
    row.push_back(relative);
    row.push_back(fixed(r.throughput.inferences_per_s, 1));
  } else {
    row.insert(row.end(), 5, "-");
  }
  row.push_back(r.memory.peak_rss_mb > 0 ? fixed(r.memory.peak_rss_mb, 0) : "-");
  const auto agreement = agreement_cells(r);
  row.insert(row.end(), agreement.begin(), agreement.end());
  row.push_back(std::string(name_of(r.status)));
  return row;
}

// Version strings such as OpenVINO's build number are long; the full one is in the JSON.
std::string shorten(std::string text, std::size_t width) {
  if (text.size() > width) text = text.substr(0, width - 1) + "~";
  return text;
}

// Cells are compared with the fastest of their own model only (one run may measure several).
std::vector<std::string> relative_by_model(const std::vector<const result::RunResult*>& cells) {
  std::map<std::string, std::vector<std::size_t>> by_model;
  for (std::size_t i = 0; i < cells.size(); ++i) by_model[cells[i]->model.name + '\n' + cells[i]->model.path].push_back(i);
  std::vector<std::string> texts(cells.size(), "-");
  for (const auto& [model, indices] : by_model) {
    std::vector<const result::RunResult*> group;
    for (const auto i : indices) group.push_back(cells[i]);
    const auto speeds = relative_speeds(group);
    for (std::size_t k = 0; k < indices.size(); ++k) texts[indices[k]] = relative_text(speeds[k]);
  }
  return texts;
}

// The rows each query carried, unless every cell ran batch 1 (cells that differ cannot all be 1):
// latency is per query, so a batch of 7 read as batch 1 misleads by 7x.
bool batch_worth_showing(const std::vector<result::RunResult>& results) {
  return std::any_of(results.begin(), results.end(), [](const result::RunResult& r) { return r.scenario.batch != 1; });
}

}  // namespace

std::string batch_cell(const result::RunResult& r) {
  const auto& settings = r.effective_settings;
  const auto execution = std::find_if(settings.begin(), settings.end(), [](const EffectiveSetting& s) {
    return s.key == "batch_execution" && s.effective.ends_with("in a row");
  });
  return std::to_string(r.scenario.batch) + (execution == settings.end() ? "" : " (one by one)");
}

std::string effective_setting(const result::RunResult& result, const std::string& key) {
  for (const auto& s : result.effective_settings)
    if (s.key == key) return s.effective;
  return "";
}

std::string threads_cell(const result::RunResult& result) {
  for (const auto& s : result.effective_settings) {
    if (s.key != "intra_op_threads") continue;
    if (s.effective.empty()) return "-";
    if (s.state == SettingState::kUnverified) return s.effective + " (unverified)";
    if (!s.applied() && !s.requested.empty() && s.requested != s.effective) return s.effective + " (asked " + s.requested + ")";
    return s.effective;
  }
  return "-";
}

std::string comparison_table(const std::vector<result::RunResult>& results) {
  std::vector<std::string> models;
  for (const auto& r : results) models.push_back(r.model.path);
  if (!results.empty() && std::all_of(results.begin(), results.end(), is_generation_result))
    return generation_table(results) + zoo_accuracy_notes(models, "  ");
  std::vector<const result::RunResult*> cells;
  for (const auto& r : results) cells.push_back(&r);
  const auto relative = relative_by_model(cells);
  const bool energy = any_energy_measured(cells);
  auto columns = kColumns;
  if (energy) columns.insert(columns.begin() + kEnergyColumn, {"inferences/J", true});
  const bool labelled = any_label_accuracy(cells);  // accuracy against the inputs' labels, before status
  if (labelled) columns.insert(columns.end() - 1, {kLabelAccuracyTitle, false});
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < results.size(); ++i) {
    rows.push_back(row_for(results[i], relative[i]));
    rows.back()[1] = shorten(rows.back()[1], 24);
    if (energy) rows.back().insert(rows.back().begin() + kEnergyColumn, inferences_per_joule_cell(results[i]));
    if (labelled) rows.back().insert(rows.back().end() - 1, label_accuracy_cell(results[i]));
  }
  if (batch_worth_showing(results)) {
    columns.insert(columns.begin() + kBatchColumn, {"batch", true});
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].insert(rows[i].begin() + kBatchColumn, batch_cell(results[i]));
  }
  // Several models in one run (`run a.onnx b.onnx`): each row says which, as the generation table does.
  std::set<std::string> names;
  for (const auto& r : results)
    if (!r.model.name.empty()) names.insert(r.model.name);
  if (names.size() > 1) {
    columns.insert(columns.begin() + 1, {"model", false});
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].insert(rows[i].begin() + 1, results[i].model.name);
  }
  std::string table = markdown_table(columns, rows) + percentile_claim_note(results);
  if (const auto footnote = energy_footnote(cells); !footnote.empty()) table += "  " + footnote + "\n";
  for (const auto& r : results)
    if (!r.error.empty()) table += fmt::format("  {}\n", r.error);
  for (const auto& r : results)
    if (r.cross_check && !r.cross_check->is_reference)
      for (const auto& o : r.cross_check->outputs)
        if (!o.comparable) table += fmt::format("  {}: output '{}' not comparable: {}\n", r.backend.name, o.output, o.note);
  for (const auto& r : results)
    if (r.cross_check && !r.cross_check->is_reference && !r.cross_check->by_shape.empty()) {
      // Every input set was compared: name the shape that agrees worst, so a loss at one shape shows.
      const auto& shapes = r.cross_check->by_shape;
      const auto worst = std::max_element(shapes.begin(), shapes.end(), [](const auto& a, const auto& b) {
        return a.top1_agreement.value_or(1.0) > b.top1_agreement.value_or(1.0) ||
               (a.top1_agreement.value_or(1.0) == b.top1_agreement.value_or(1.0) && a.max_abs_error < b.max_abs_error);
      });
      table += fmt::format("  {}: outputs checked against {} on {} shapes; worst {}: max abs err {:.2e}{}\n", r.backend.name,
                           r.cross_check->reference_backend, shapes.size(), worst->shape, worst->max_abs_error,
                           worst->top1_agreement ? fmt::format(", top-1 {:.1f}%", *worst->top1_agreement * 100) : std::string());
    }
  return table + zoo_accuracy_notes(models, "  ");
}

namespace {

std::string cell_name(const result::RunResult& r) {
  const auto threads = effective_setting(r, "intra_op_threads");
  return r.backend.name + (threads.empty() ? "" : " (" + threads + " threads)");
}

// "SLO P99 <= 100 ms, TTFT P99 <= 200 ms (P99 180.2 ms): PASSED ..." from an SLA verdict.
std::string sla_note(const loadgen::SlaVerdict& sla) {
  std::string targets, measured;
  auto add = [&](const std::string& what, double target, double value) {
    targets += (targets.empty() ? "" : ", ") + fmt::format("{} <= {} ms", what, target);
    measured += (measured.empty() ? "" : ", ") + fmt::format("{} {:.3f} ms", what, value);
  };
  if (sla.p99_ms_target) add("P99", *sla.p99_ms_target, sla.p99_ms);
  if (sla.ttft) add("TTFT P99", sla.ttft->p99_ms_target, sla.ttft->p99_ms);
  if (sla.tpot) add("TPOT P99", sla.tpot->p99_ms_target, sla.tpot->p99_ms);
  std::string note = fmt::format("SLO {}: {} ({})", targets, sla.passed ? "PASSED" : "FAILED", measured);
  if (sla.queries_over_target)
    note += fmt::format("; {} over the P99 target, the run supports a P{:.2f} claim at 99% confidence", *sla.queries_over_target,
                        sla.claimable_percentile_at_target.value_or(0.0));
  if (sla.goodput_qps)
    note += fmt::format("; goodput {:.2f}/s ({} queries within every target)", *sla.goodput_qps, sla.good_queries);
  return note;
}

std::string search_note(const loadgen::MaxQpsSearchResult& search) {
  return fmt::format(
      "highest rate within the SLOs: {:.2f} queries/s{}", search.max_qps_within_sla,
      search.goodput_qps_at_max ? fmt::format(" (goodput there {:.2f}/s)", *search.goodput_qps_at_max) : std::string());
}

std::string knee_note(const loadgen::RampAnalysis& ramp) {
  const auto label = ramp.knee_label();
  auto note = label ? fmt::format("knee at {}: {}", *label, ramp.knee_reason) : ramp.knee_reason;
  if (ramp.saturation_step)
    note += fmt::format("; saturated at {}: {}", ramp.steps[*ramp.saturation_step].label, ramp.saturation_reason);
  return note;
}

// Streamed ramps: each step's throughput and token latencies.
std::string ramp_steps_note(const loadgen::RampAnalysis& ramp) {
  if (ramp.steps.empty() || !ramp.steps.front().ttft_p99_ms) return "";
  std::string steps;
  for (const auto& step : ramp.steps)
    steps +=
        fmt::format("{}{}: {:.2f} req/s{}, TTFT P99 {:.1f} ms, TPOT P99 {:.2f} ms", steps.empty() ? "" : "; ", step.label,
                    step.throughput_qps, step.goodput_qps ? fmt::format(" (goodput {:.2f})", *step.goodput_qps) : std::string(),
                    step.ttft_p99_ms.value_or(0.0), step.tpot_p99_ms.value_or(0.0));
  return "ramp steps: " + steps;
}

double slope_per_min(const loadgen::TrendVerdict& trend) { return trend.fit ? trend.fit->slope_per_min : 0.0; }

std::string soak_note(const loadgen::SoakAnalysis& soak) {
  return "soak: " + soak.verdict() +
         fmt::format(" (RSS {:+.2f} MB/min, P99 {:+.3f} ms/min{})", slope_per_min(soak.memory), slope_per_min(soak.latency),
                     soak.tpot ? fmt::format(", TPOT {:+.3f} ms/min ({})", slope_per_min(*soak.tpot), name_of(soak.tpot->verdict))
                               : std::string());
}

std::string pulse_note(const loadgen::PulseAnalysis& p) {
  return fmt::format("pulse: baseline P99 {:.3f} ms, peak P99 {:.3f} ms, {} errors/rejections in the burst, {}",
                     p.baseline_p99_ms, p.peak_p99_ms, p.burst_errors_and_rejections,
                     p.time_to_recover_s ? fmt::format("recovered {:.1f} s after the burst", *p.time_to_recover_s)
                                         : std::string("did not recover before the end"));
}

std::string replay_note(const result::RunResult& r) {
  const auto& t = r.scenario.parameters.trace;
  if (!t) return "";
  return fmt::format(
      "replay: {} ({}), {} requests over {:.1f} s recorded, replayed x{:g} in {:.1f} s ({:.2f} req/s); input "
      "{:.0f} tokens mean (max {}), output {:.0f} (max {}){}{}{}",
      t->file, name_of(t->format), t->requests, t->recorded_span_s, t->speed, t->replayed_span_s, t->mean_rate_rps,
      t->mean_input_tokens, t->max_input_tokens, t->mean_output_tokens, t->max_output_tokens,
      t->block_reuse_share ? fmt::format("; {:.0f}% of prompt blocks repeat an earlier one", *t->block_reuse_share * 100)
                           : std::string(),
      t->rows_skipped ? fmt::format("; {} rows without tokens skipped", t->rows_skipped) : std::string(),
      t->requests_shortened ? fmt::format("; {} requests shortened to fit the context", t->requests_shortened) : std::string());
}

std::string energy_note(const result::RunResult& r) {
  if (!r.resources || !r.resources->summary.energy.available || !r.resources->inferences_per_joule) return "";
  const auto& energy = r.resources->summary.energy;
  // Significant digits, not fixed decimals: a short run's 0.04 J must not print as "0.0 J".
  return fmt::format("energy: {} J, {} inferences/J ({})", format_number(energy.joules),
                     format_number(*r.resources->inferences_per_joule), energy.source);
}

}  // namespace

std::string scenario_notes(const std::vector<result::RunResult>& results) {
  std::string notes;
  auto add = [&](const result::RunResult& r, const std::string& text) {
    if (!text.empty()) notes += fmt::format("  {}: {}\n", cell_name(r), text);
  };
  for (const auto& r : results) {
    const auto& a = r.analysis;
    if (a.sla) add(r, sla_note(*a.sla));
    if (a.search) add(r, search_note(*a.search));
    if (a.ramp) add(r, knee_note(*a.ramp));
    if (a.soak) add(r, soak_note(*a.soak));
    if (a.ramp) add(r, ramp_steps_note(*a.ramp));
    if (a.pulse) add(r, pulse_note(*a.pulse));
    add(r, replay_note(r));
    add(r, energy_note(r));
  }
  return notes;
}

}  // namespace infermark::report
