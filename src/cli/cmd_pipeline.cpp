// `infermark pipeline FILE.yaml`: runs a multi-stage pipeline in each requested mode (serial,
// threads, processes), writes one result per mode and a table comparing them with the seed's
// predictions. `infermark pipeline-stage` is the hidden per-stage worker of the processes mode.
#include <fmt/core.h>

#include <fstream>

#include "cli/commands.hpp"
#include "cli/pipeline_file.hpp"
#include "cli/run_options.hpp"
#include "cli/stop_signal.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "harness/measure_cell.hpp"
#include "pipeline/pipeline_report.hpp"
#include "probes/environment.hpp"

namespace infermark::cli {
namespace {

struct PipelineOptions {
  std::string file;
  std::string out = "results";
  std::vector<std::string> modes;
  int requests = 0, queue_depth = 0, breaker_after = -1;
  double timeout_ms = -1;
  RunOptions load;                // the scenario flags, shared with `run`
  const CLI::App* cmd = nullptr;  // which of them were given
};

bool given(const PipelineOptions& o, const std::string& flag) { return o.cmd && o.cmd->count(flag) > 0; }

void apply_overrides(const PipelineOptions& o, pipeline::PipelineSpec& spec) {
  if (!o.modes.empty()) spec.modes = o.modes;
  if (o.requests > 0) spec.requests = o.requests;
  if (given(o, "--warmup")) spec.warmup = static_cast<int>(o.load.scenario.warmup_queries);
  if (o.queue_depth > 0) spec.queue_depth = o.queue_depth;
  if (o.timeout_ms >= 0) spec.timeout_ms = o.timeout_ms;
  if (o.breaker_after >= 0) spec.breaker_after = o.breaker_after;
  pipeline::validate(spec, o.file);
}

pipeline::LoadRequest load_request(const PipelineOptions& o) {
  if (o.load.concurrency.size() > 1) throw Error("--concurrency: a pipeline runs one level per invocation");
  pipeline::LoadRequest load;
  load.scenario = scenario_of(o.load);
  load.scenario_given = given(o, "--scenario");
  load.runs_given = given(o, "--runs");
  load.concurrency_given = !o.load.concurrency.empty();
  return load;
}

void save_outputs(const std::vector<Tensor>& outputs, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (const auto& t : outputs) write_npy(t, harness::output_file(dir, t.name));
}

std::string breaker_lines(const pipeline::ModeOutcome& outcome, const pipeline::PipelineSpec& spec) {
  if (spec.timeout_ms <= 0) return "";
  const auto& b = outcome.breaker;
  std::string text = fmt::format("- {}: timeout {} ms; breaker (opens after {} consecutive timeouts) opened {} time(s), "
                                 "{} request(s) rejected, final state {}",
                                 outcome.mode, spec.timeout_ms, spec.breaker_after, b.value("times_opened", 0),
                                 b.value("rejected", 0), b.value("final_state", "closed"));
  for (const auto& e : b.value("events", nlohmann::json::array())) text += fmt::format("; {} at {:.1f} ms", e.value("state", ""), e.value("at_ms", 0.0));
  return text + "\n";
}

int run_pipeline(const PipelineOptions& o) {
  auto spec = load_pipeline_file(o.file);
  apply_overrides(o, spec);
  const auto load = load_request(o);
  const auto& stop = install_stop_handler();
  const BackendRegistry registry(default_plugin_dir());
  const auto folder = std::filesystem::path(o.out) / ("pipeline-" + spec.name);
  std::filesystem::create_directories(folder);
  pipeline::RunSettings settings;
  settings.executable = std::filesystem::read_symlink("/proc/self/exe");
  settings.work_dir = folder / "work";
  settings.stop = &stop;
  const auto captured = probes::capture_environment();
  settings.logical_cores = captured.logical_cores;
  const auto environment = probes::to_json(captured);

  std::vector<pipeline::ModeOutcome> outcomes;
  for (const auto& mode : spec.modes) {
    if (stop.load()) break;
    fmt::print("pipeline {}: {} ...\n", spec.name, mode);
    std::fflush(stdout);
    outcomes.push_back(pipeline::run_mode(registry, spec, mode, load, settings));
    if (outcomes.back().status != "ok") fmt::print(stderr, "infermark: {} mode {}: {}\n", mode, outcomes.back().status, outcomes.back().error);
  }
  std::vector<pipeline::ModeFigures> figures;
  for (const auto& outcome : outcomes) figures.push_back(pipeline::figures_of(outcome, spec.stages.size()));
  pipeline::compare_modes(figures, outcomes);

  bool failed = false;
  std::string breakers;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const auto& outcome = outcomes[i];
    auto result = pipeline::to_run_result(spec, o.file, outcome, figures[i], environment);
    if (!outcome.last_outputs.empty()) {
      const auto dir = folder / "outputs" / outcome.mode;
      save_outputs(outcome.last_outputs, dir);
      result.outputs_dir = dir.string();
    }
    report::write_run_result(result, (folder / (spec.name + "." + outcome.mode + ".json")).string());
    failed = failed || outcome.status != "ok";
    breakers += breaker_lines(outcome, spec);
  }
  std::string summary = "# Pipeline " + spec.name + "\n\n" + (spec.description.empty() ? "" : spec.description + "\n\n");
  summary += fmt::format("{} per mode after {} warm-up requests, batch {}, queue depth {}; predictions from the "
                         "serial stage times: serial = 1 / (sum of stages), pipelined = 1 / (slowest stage). Request "
                         "figures run from stage 1 taking a request to the last stage done.\n\n",
                         load.scenario_given ? "--scenario " + std::string(loadgen::name_of(load.scenario.name))
                                             : fmt::format("{} timed requests", spec.requests),
                         spec.warmup, spec.inputs.batch, spec.queue_depth);
  summary += pipeline::summary_table(spec, figures);
  if (const auto table = pipeline::load_table(outcomes); !table.empty()) summary += "\nAs the load generator measured it:\n\n" + table;
  if (!breakers.empty()) summary += "\n" + breakers;
  std::ofstream(folder / "summary.md") << summary;
  fmt::print("\n{}\nresults and summary.md: {}\n", summary, folder.string());
  if (stop.load()) return 130;
  return failed ? 1 : 0;
}

}  // namespace

int run_pipeline_study(const std::string& file, const std::string& out) {
  PipelineOptions options;
  options.file = file;
  options.out = out;
  return run_pipeline(options);
}

void add_pipeline_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("pipeline", "Run a multi-stage pipeline serially and pipelined (threads, processes)");
  static PipelineOptions o;
  cmd->add_option("file", o.file, "Pipeline file (YAML with a 'pipeline:' section; see docs/studies.md)")->required();
  cmd->add_option("--out", o.out, "Results folder (results go to <out>/pipeline-<name>/)");
  cmd->add_option("--modes", o.modes, "Modes to run: serial, threads, processes (default: the file's)")->delimiter(',');
  cmd->add_option("--requests", o.requests, "Timed requests per mode in closed-loop scenarios (default: the file's; --runs too)");
  cmd->add_option("--queue-depth", o.queue_depth, "Capacity of each queue between stages (default: the file's)");
  cmd->add_option("--timeout-ms", o.timeout_ms, "Per-request timeout, end to end; 0 = none (default: the file's)");
  cmd->add_option("--breaker-after", o.breaker_after, "Consecutive timeouts that open the circuit breaker; 0 = never");
  // The load: any scenario of `run` (default: a closed loop of `requests` at each mode's pipeline
  // depth); --warmup is the pipeline's untimed requests (default: the file's).
  add_scenario_flags(*cmd, o.load);
  cmd->get_option("--warmup")->description("Untimed warm-up requests, past the breaker (default: the file's)")->default_str("");
  cmd->get_option("--runs")->description("Timed requests of a closed-loop scenario (default: the file's 'requests')")->default_str("");
  cmd->get_option("--concurrency")->description("Requests in the pipeline at once, in every mode (default: each mode's depth)");
  o.cmd = cmd;
  cmd->callback([&exit_code] { exit_code = run_pipeline(o); });
}

void add_pipeline_stage_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("pipeline-stage", "Serve one pipeline stage (used by `pipeline`)");
  cmd->group("");  // internal: hidden from --help
  static std::string config;
  cmd->add_option("--config", config, "The stage configuration (JSON written by `pipeline`)")->required();
  cmd->callback([&exit_code] {
    const auto& stop = install_stop_handler();
    const BackendRegistry registry(default_plugin_dir());
    try {
      exit_code = pipeline::run_stage_worker(registry, config, &stop) ? 0 : 3;
      if (exit_code) fmt::print(stderr, "stopped before the end of the request stream\n");
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}\n", e.what());
      exit_code = 1;
    }
  });
}

}  // namespace infermark::cli
