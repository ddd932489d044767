#include "pipeline/pipeline_report.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/core.h>

#include "core/markdown_table.hpp"
#include "core/npy.hpp"
#include "result/cell_json.hpp"
#include "result/result_builders.hpp"
#include "result/results_folder.hpp"

namespace infermark::pipeline {
namespace {

double ms(std::int64_t ns) { return static_cast<double>(ns) * 1e-6; }

std::optional<stats::LatencySummary> summary_of(const std::vector<double>& samples) {
  if (samples.empty()) return std::nullopt;
  return stats::summarize(samples);
}

std::optional<result::BriefLatency> brief_latency(const std::optional<stats::LatencySummary>& s) {
  if (!s) return std::nullopt;
  return result::BriefLatency{s->count, s->mean, s->at(50).value, s->at(99).value, s->max};
}

bool pipelined(PipelineMode mode) { return mode != PipelineMode::kSerial; }

std::string mode_name(PipelineMode mode) { return std::string(result::name_of(mode)); }

// How the mode was loaded: lanes, where latency starts, what the default stands for.
nlohmann::json load_parameters(const PipelineSpec& spec, const ModeOutcome& outcome) {
  const bool open = loadgen::is_open_loop(outcome.scenario);
  nlohmann::json j{{"mode", mode_name(outcome.mode)},
                   {"queue_depth", spec.queue_depth},
                   {"pipeline_depth", pipeline_depth(spec, outcome.mode)},
                   {"handoff", name_of(spec.handoff)},
                   {"timeout_ms", spec.timeout_ms},
                   {"load", std::string(loadgen::name_of(outcome.scenario.name)) + ": each lane issues one request into stage 1 "
                                                                                   "and waits until it leaves the last stage"},
                   {"latency_from", open ? "scheduled arrival (waiting for a lane and for stage 1 included)"
                                         : "issue (waiting for stage 1 included)"},
                   {"failed_queries", "rejected by the breaker, dropped past the timeout, or completed after it"}};
  if (outcome.load)
    for (const auto& [key, value] : outcome.load->parameters.items()) j[key] = value;
  return j;
}

std::string cell(const std::optional<stats::LatencySummary>& s, double p) { return s ? format_number(s->at(p).value) : "-"; }

std::string mean_cell(const std::optional<stats::LatencySummary>& s) { return s ? format_number(s->mean) : "-"; }

}  // namespace

ModeFigures figures_of(const ModeOutcome& outcome, std::size_t stage_count) {
  ModeFigures f;
  f.mode = outcome.mode;
  f.rejected = outcome.breaker ? static_cast<int>(outcome.breaker->rejected) : 0;
  std::vector<std::vector<double>> service(stage_count), inference(stage_count), wait(stage_count);
  f.stages.resize(stage_count);
  std::int64_t first = 0, last = 0;
  for (const auto& r : outcome.records) {
    ++f.admitted;
    first = f.admitted == 1 ? r.admitted_ns : std::min(first, r.admitted_ns);
    last = std::max(last, r.completed_ns);
    const auto ran = r.dropped_at_stage < 0 ? stage_count : static_cast<std::size_t>(r.dropped_at_stage);
    for (std::size_t k = 0; k < ran; ++k) {
      const auto& s = r.stamps[k];
      ++f.stages[k].processed;
      service[k].push_back(ms(s.sent_ns - s.received_ns));
      inference[k].push_back(ms(s.finished_ns - s.started_ns));
      if (k > 0) wait[k].push_back(ms(s.received_ns - r.stamps[k - 1].sent_ns));
    }
    if (r.dropped_at_stage >= 0) {
      ++f.dropped;
      ++f.stages[static_cast<std::size_t>(r.dropped_at_stage)].dropped_here;
      continue;
    }
    ++f.completed;
    r.timed_out ? ++f.late : ++f.on_time;
    f.latency_samples_ms.push_back(ms(r.completed_ns - r.admitted_ns));
  }
  for (std::size_t k = 0; k < stage_count; ++k) {
    f.stages[k].service_ms = summary_of(service[k]);
    f.stages[k].inference_ms = summary_of(inference[k]);
    f.stages[k].queue_wait_ms = summary_of(wait[k]);
  }
  f.latency_ms = summary_of(f.latency_samples_ms);
  f.wall_s = static_cast<double>(last - first) * 1e-9;
  if (f.wall_s > 0) {
    f.throughput_qps = f.completed / f.wall_s;
    f.goodput_qps = f.on_time / f.wall_s;
  }
  return f;
}

void compare_modes(std::vector<ModeFigures>& figures, const std::vector<ModeOutcome>& outcomes) {
  const ModeFigures* serial = nullptr;
  const ModeOutcome* serial_outcome = nullptr;
  for (std::size_t i = 0; i < figures.size(); ++i)
    if (figures[i].mode == PipelineMode::kSerial) {
      serial = &figures[i];
      serial_outcome = &outcomes[i];
    }
  for (std::size_t i = 0; i < figures.size(); ++i) {
    auto& f = figures[i];
    const ModeFigures& basis = serial && serial->completed > 0 ? *serial : f;
    f.predicted_from = basis.mode;
    double sum = 0, slowest = 0;
    bool complete = true;
    for (const auto& s : basis.stages) {
      if (!s.service_ms) complete = false;
      const double mean = s.service_ms ? s.service_ms->mean : 0;
      sum += mean;
      slowest = std::max(slowest, mean);
    }
    if (complete && sum > 0) {
      f.predicted_latency_ms = sum;
      f.predicted_qps = 1000.0 / (pipelined(f.mode) ? slowest : sum);
    }
    if (!serial_outcome || &outcomes[i] == serial_outcome) continue;
    const auto& mine = outcomes[i].last_outputs;
    const auto& theirs = serial_outcome->last_outputs;
    // Requests take the input file's samples in turn: outputs of different samples do not compare.
    if (mine.empty() || mine.size() != theirs.size() || outcomes[i].last_sample != serial_outcome->last_sample) continue;
    double worst = 0;
    bool comparable = true;
    for (std::size_t t = 0; t < mine.size(); ++t) {
      const auto a = to_doubles(mine[t]), b = to_doubles(theirs[t]);
      if (a.size() != b.size()) comparable = false;
      for (std::size_t e = 0; comparable && e < a.size(); ++e) worst = std::max(worst, std::abs(a[e] - b[e]));
    }
    if (comparable) f.max_abs_diff_vs_serial = worst;
  }
}

result::RunResult to_run_result(const PipelineSpec& spec, const std::string& spec_file, const ModeOutcome& outcome,
                                const ModeFigures& f, const nlohmann::json& environment) {
  result::RunResult r;
  r.status = outcome.status;
  r.error = outcome.error;
  r.started_at = result::utc_timestamp();
  r.isolation = outcome.mode == PipelineMode::kProcesses ? "worker process per stage" : "in-process";
  r.model = {spec_file, spec.name, "pipeline", 0, {}, {}, {}};
  std::string names, frameworks, versions;
  for (std::size_t k = 0; k < spec.stages.size(); ++k) {
    const auto sep = k ? std::string("+") : std::string();
    names += sep + spec.stages[k].backend;
    if (k < outcome.stages.size()) {
      const auto& d = outcome.stages[k];
      frameworks += (k ? " -> " : "") + d.backend.framework;
      versions += sep + d.backend.version;
      for (const auto& s : d.effective_settings)
        r.effective_settings.push_back({d.name + "." + s.key, s.requested, s.effective, s.state, s.note});
      r.timing.load_ms += d.load_ms;
    }
  }
  if (!outcome.stages.empty()) {
    r.model.inputs = outcome.stages.front().inputs;
    r.model.outputs = outcome.stages.back().outputs;
  }
  r.backend.name = names;
  r.backend.framework = "pipeline: " + frameworks;
  r.backend.version = versions;
  r.scenario.name = outcome.scenario.name;
  r.scenario.pipeline_mode = outcome.mode;
  r.scenario.batch = spec.inputs.batch;
  r.scenario.warmup_runs = spec.warmup;
  r.scenario.timed_runs = static_cast<int>(outcome.scenario.max_queries);
  r.scenario.seed = spec.inputs.seed;
  r.scenario.parameters.request = outcome.scenario;
  result::merge_resolved(r.scenario.parameters, load_parameters(spec, outcome));
  // Latency, throughput, phases and analysis as the load generator measured them, like any cell's.
  if (outcome.load && !outcome.load->phases.empty()) {
    result::CellRequest cell;
    cell.backend = names;
    cell.scenario = outcome.scenario;
    result::record_outcome(r, cell, *outcome.load, outcome.resources, outcome.sampler_start_ns);
  }
  r.status = outcome.status;
  r.error = outcome.error;
  r.memory.peak_scope = "not measured for pipelines";

  result::PipelineRecord& pipeline = r.pipeline.emplace();
  pipeline.mode = outcome.mode;
  for (std::size_t k = 0; k < spec.stages.size(); ++k) {
    const auto& s = f.stages[k];
    pipeline.stages.push_back({k < outcome.stages.size() ? to_json(outcome.stages[k]) : to_json(spec.stages[k]),
                               static_cast<std::uint64_t>(s.processed), static_cast<std::uint64_t>(s.dropped_here),
                               brief_latency(s.service_ms), brief_latency(s.inference_ms), brief_latency(s.queue_wait_ms)});
  }
  pipeline.handoff = name_of(spec.handoff);
  pipeline.transport = outcome.mode == PipelineMode::kSerial ? "none: one thread runs the stages in turn"
                       : outcome.mode == PipelineMode::kThreads
                           ? "in-process bounded queues; tensors moved, not copied"
                           : "POSIX shared-memory rings (/dev/shm), one slot per queued request";
  pipeline.queue_depth = spec.queue_depth;
  // Requested in a closed loop; an open loop's count follows from its rate and duration.
  if (!loadgen::is_open_loop(outcome.scenario)) pipeline.requests.timed = outcome.scenario.max_queries;
  const auto count = [](int n) { return static_cast<std::uint64_t>(n); };
  pipeline.requests.admitted = count(f.admitted);
  pipeline.requests.completed = count(f.completed);
  pipeline.requests.completed_on_time = count(f.on_time);
  pipeline.requests.completed_late = count(f.late);
  pipeline.requests.dropped = count(f.dropped);
  pipeline.requests.rejected_by_breaker = count(f.rejected);
  pipeline.timeout_ms = spec.timeout_ms;
  pipeline.in_pipeline_latency_ms = brief_latency(f.latency_ms);
  pipeline.in_pipeline_throughput_qps = f.throughput_qps;
  pipeline.goodput_qps = f.goodput_qps;
  pipeline.breaker = outcome.breaker;
  pipeline.prediction = {f.predicted_from, f.predicted_latency_ms, f.predicted_qps,
                         pipelined(outcome.mode) ? "1 / slowest stage" : "1 / sum of stages"};
  pipeline.max_abs_diff_vs_serial = f.max_abs_diff_vs_serial;
  pipeline.text_check = outcome.text_check;
  r.environment = environment;
  return r;
}

std::string summary_table(const PipelineSpec& spec, const std::vector<ModeFigures>& figures) {
  std::vector<MarkdownColumn> columns{{"mode"},
                                      {"completed", true},
                                      {"timed out", true},
                                      {"rejected", true},
                                      {"req/s", true},
                                      {"predicted req/s", true},
                                      {"P50 ms", true},
                                      {"P99 ms", true},
                                      {"predicted ms", true},
                                      {"max abs diff vs serial", true}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : figures) {
    rows.push_back({mode_name(f.mode), std::to_string(f.completed), std::to_string(f.late + f.dropped),
                    std::to_string(f.rejected), format_number(f.throughput_qps),
                    f.predicted_qps > 0 ? format_number(f.predicted_qps) : "-", cell(f.latency_ms, 50), cell(f.latency_ms, 99),
                    f.predicted_latency_ms > 0 ? format_number(f.predicted_latency_ms) : "-",
                    f.mode == PipelineMode::kSerial ? "(reference)"
                    : f.max_abs_diff_vs_serial      ? fmt::format("{:.2e}", *f.max_abs_diff_vs_serial)
                                                    : "-"});
  }
  std::string out = markdown_table(columns, rows);
  std::vector<MarkdownColumn> stage_columns{{"mode"},
                                            {"stage"},
                                            {"backend"},
                                            {"service ms (mean)", true},
                                            {"inference ms (mean)", true},
                                            {"queue wait ms (mean)", true},
                                            {"queue wait ms (P99)", true},
                                            {"dropped here", true}};
  std::vector<std::vector<std::string>> stage_rows;
  for (const auto& f : figures)
    for (std::size_t k = 0; k < f.stages.size(); ++k) {
      const auto& s = f.stages[k];
      stage_rows.push_back({mode_name(f.mode), spec.stages[k].name, spec.stages[k].backend, mean_cell(s.service_ms),
                            mean_cell(s.inference_ms), k ? mean_cell(s.queue_wait_ms) : "-", k ? cell(s.queue_wait_ms, 99) : "-",
                            std::to_string(s.dropped_here)});
    }
  return out + "\n" + markdown_table(stage_columns, stage_rows);
}

std::string load_table(const std::vector<ModeOutcome>& outcomes) {
  std::vector<MarkdownColumn> columns{{"mode"},         {"scenario"},        {"phase"},        {"lanes", true},
                                      {"issued", true}, {"completed", true}, {"failed", true}, {"req/s", true},
                                      {"P50 ms", true}, {"P99 ms", true},    {"latency from"}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& o : outcomes) {
    if (!o.load || o.load->phases.empty()) continue;
    const auto& load = *o.load;
    const auto& phase = load.phases[load.headline.value_or(load.phases.size() - 1)];
    const auto& h = phase.recorder.latency();
    auto percentile = [&](double p) {
      return h.count() ? format_number(static_cast<double>(h.value_at_percentile(p)) * 1e-6) : "-";
    };
    rows.push_back({mode_name(o.mode), std::string(loadgen::name_of(o.scenario.name)), phase.label,
                    std::to_string(phase.concurrency), std::to_string(phase.issued), std::to_string(phase.recorder.completed()),
                    std::to_string(phase.recorder.errors() + phase.recorder.rejected()), format_number(phase.achieved_qps()),
                    percentile(50), percentile(99), loadgen::is_open_loop(o.scenario) ? "scheduled arrival" : "issue"});
  }
  return rows.empty() ? "" : markdown_table(columns, rows);
}

// Recognised text against the labels, per mode (empty without a text check).
std::string text_check_table(const std::vector<ModeOutcome>& outcomes) {
  std::vector<MarkdownColumn> columns{{"mode"},
                                      {"requests", true},
                                      {"lines expected", true},
                                      {"lines read", true},
                                      {"lines exact", true},
                                      {"line accuracy %", true},
                                      {"character accuracy %", true}};
  std::vector<std::vector<std::string>> rows;
  const result::TextCheckRecord* example = nullptr;
  PipelineMode example_mode = PipelineMode::kSerial;
  std::string errors;
  for (const auto& o : outcomes) {
    if (!o.text_check) continue;
    const auto& t = *o.text_check;
    if (!example && t.requests > 0) example = &t, example_mode = o.mode;
    if (t.error) errors += "- " + mode_name(o.mode) + ": " + *t.error + "\n";
    rows.push_back({mode_name(o.mode), std::to_string(t.requests), std::to_string(t.lines_expected),
                    std::to_string(t.lines_recognised), std::to_string(t.lines_exact),
                    fmt::format("{:.1f}", 100 * t.line_accuracy), fmt::format("{:.1f}", 100 * t.character_accuracy)});
  }
  if (rows.empty()) return "";
  std::string out =
      "\nRecognised text against the labels of the input images (greedy CTC decoding; spaces ignored and case "
      "kept, as PaddleOCR's recognition metric by default; a line is exact when it matches a line the image "
      "shows; character accuracy is 1 - edit distance / characters shown, lines joined in reading order):\n\n" +
      markdown_table(columns, rows);
  if (example) {
    out += "\nWhat each image shows and what " + mode_name(example_mode) + " read (its first request):\n\n";
    const auto quoted = [](const std::vector<std::string>& lines) {
      std::string text;
      for (const auto& l : lines) text += (text.empty() ? "\"" : " \"") + l + "\"";
      return text.empty() ? std::string("(none)") : text;
    };
    for (const auto& s : example->samples)
      out += fmt::format("- image {}: shows {}; read {}\n", s.sample, quoted(s.expected), quoted(s.recognised));
  }
  return out + errors;
}

std::string breaker_lines(const ModeOutcome& outcome, const PipelineSpec& spec) {
  if (spec.timeout_ms <= 0) return "";
  const auto b = outcome.breaker.value_or(result::BreakerRecord{});
  std::string text = fmt::format(
      "- {}: timeout {} ms; breaker (opens after {} consecutive timeouts) opened {} time(s), "
      "{} request(s) rejected, final state {}",
      mode_name(outcome.mode), spec.timeout_ms, spec.breaker_after, b.times_opened, b.rejected, name_of(b.final_state));
  for (const auto& e : b.events) text += fmt::format("; {} at {:.1f} ms", name_of(e.state), e.at_ms);
  return text + "\n";
}

std::string pipeline_summary(const PipelineSpec& spec, const std::vector<ModeOutcome>& outcomes,
                             const std::vector<ModeFigures>& figures, const LoadRequest& load) {
  std::string breakers;
  for (const auto& outcome : outcomes) breakers += breaker_lines(outcome, spec);
  std::string summary = "# Pipeline " + spec.name + "\n\n" + (spec.description.empty() ? "" : spec.description + "\n\n");
  summary += fmt::format(
      "{} per mode after {} warm-up requests, batch {}, queue depth {}; predictions from the "
      "serial stage times: serial = 1 / (sum of stages), pipelined = 1 / (slowest stage). Request "
      "figures run from stage 1 taking a request to the last stage done.\n\n",
      load.scenario_given ? "--scenario " + std::string(loadgen::name_of(load.scenario.name))
                          : fmt::format("{} timed requests", spec.requests),
      spec.warmup, spec.inputs.batch, spec.queue_depth);
  summary += summary_table(spec, figures);
  if (const auto table = load_table(outcomes); !table.empty()) summary += "\nAs the load generator measured it:\n\n" + table;
  if (!breakers.empty()) summary += "\n" + breakers;
  summary += text_check_table(outcomes);
  return summary;
}

std::filesystem::path pipeline_folder(const std::filesystem::path& out, const PipelineSpec& spec) {
  return result::stable_results_folder(out, "pipeline", spec.name);
}

std::filesystem::path mode_result_path(const std::filesystem::path& folder, const PipelineSpec& spec, PipelineMode mode) {
  return folder / (spec.name + "." + mode_name(mode) + ".json");
}

void write_mode_result(const std::filesystem::path& folder, const PipelineSpec& spec, const std::string& spec_file,
                       const ModeOutcome& outcome, const ModeFigures& figures, const nlohmann::json& environment) {
  auto result = to_run_result(spec, spec_file, outcome, figures, environment);
  if (!outcome.last_outputs.empty()) {
    const auto dir = folder / "outputs" / mode_name(outcome.mode);
    std::filesystem::create_directories(dir);
    for (const auto& t : outcome.last_outputs) write_npy(t, result::output_file(dir, t.name));
    result.outputs_dir = dir.string();
  }
  result::write_run_result(result, mode_result_path(folder, spec, outcome.mode).string());
}

}  // namespace infermark::pipeline
