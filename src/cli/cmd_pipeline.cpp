// `infermark pipeline FILE.yaml`: runs a multi-stage pipeline in each requested mode (serial,
// threads, processes), writes one result per mode and a table comparing them with the field guides'
// predictions. `infermark pipeline-stage` is the hidden per-stage worker of the processes mode.
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/pipeline_command.hpp"
#include "cli/run_flags.hpp"
#include "cli/stop_signal.hpp"
#include "core/error.hpp"
#include "pipeline/pipeline_job.hpp"
#include "scaleout/single_process_guard.hpp"

namespace infermark::cli {
namespace {

int run_pipeline(const PipelineOptions& o) {
  const auto load = load_request(o);
  const auto& stop = install_stop_handler();
  const BackendRegistry registry(default_plugin_dir());
  return pipeline::run_pipeline_job({o.file, o.overrides, load, o.out}, registry, stop);
}

}  // namespace

pipeline::LoadRequest load_request(const PipelineOptions& o) {
  if (o.scenario_flags.concurrency.size() > 1) throw Error("--concurrency: a pipeline runs one level per invocation");
  pipeline::LoadRequest load;
  load.scenario = harness::scenario_of(o.scenario_flags);
  load.scenario_given = o.scenario_given;
  load.runs_given = o.runs_given;
  load.concurrency_given = !o.scenario_flags.concurrency.empty();
  return load;
}

int run_pipeline_study(const std::string& file, const std::string& out) {
  PipelineOptions options;
  options.file = file;
  options.out = out;
  return run_pipeline(options);
}

void define_pipeline_flags(CLI::App& cmd, PipelineOptions& o) {
  cmd.add_option("file", o.file, "Pipeline file (YAML with a 'pipeline:' section; see docs/studies.md)")->required();
  cmd.add_option("--out", o.out, "Results folder (results go to <out>/pipeline-<name>/)");
  cmd.add_option("--modes", o.overrides.modes, "Modes to run: serial, threads, processes (default: the file's)")
      ->delimiter(',')
      ->transform(CLI::CheckedTransformer(result::pipeline_mode_names()));
  cmd.add_option("--requests", o.overrides.requests,
                 "Timed requests per mode in closed-loop scenarios (default: the file's; --runs too)");
  cmd.add_option("--queue-depth", o.overrides.queue_depth, "Capacity of each queue between stages (default: the file's)");
  cmd.add_option("--timeout-ms", o.overrides.timeout_ms, "Per-request timeout, end to end; 0 = none (default: the file's)");
  cmd.add_option("--breaker-after", o.overrides.breaker_after, "Consecutive timeouts that open the circuit breaker; 0 = never");
  // The load: any scenario of `run` (default: a closed loop of `requests` at each mode's pipeline
  // depth); --warmup is the pipeline's untimed requests (default: the file's).
  add_scenario_flags(cmd, o.scenario_flags);
  cmd.get_option("--warmup")->description("Untimed warm-up requests, past the breaker (default: the file's)")->default_str("");
  cmd.get_option("--runs")
      ->description("Timed requests of a closed-loop scenario (default: the file's 'requests')")
      ->default_str("");
  cmd.get_option("--concurrency")->description("Requests in the pipeline at once, in every mode (default: each mode's depth)");
  // Which of the shared flags were given: the file's settings hold where they were not.
  cmd.parse_complete_callback([&cmd, &o] {
    if (cmd.count("--warmup") > 0) o.overrides.warmup = static_cast<int>(o.scenario_flags.scenario.warmup_queries);
    o.scenario_given = cmd.count("--scenario") > 0;
    o.runs_given = cmd.count("--runs") > 0;
  });
}

void define_pipeline_stage_flags(CLI::App& cmd, PipelineStageOptions& o) {
  cmd.add_option("--config", o.config, "The stage configuration (JSON written by `pipeline`)")->required();
}

void add_pipeline_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("pipeline", "Run a multi-stage pipeline serially and pipelined (threads, processes)");
  static PipelineOptions o;
  define_pipeline_flags(*cmd, o);
  cmd->callback([&exit_code] {
    scaleout::refuse_several_ranks("pipeline");
    exit_code = run_pipeline(o);
  });
}

void add_pipeline_stage_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("pipeline-stage", "Serve one pipeline stage (used by `pipeline`)");
  cmd->group("");  // internal: hidden from --help
  static PipelineStageOptions o;
  define_pipeline_stage_flags(*cmd, o);
  cmd->callback([&exit_code] {
    const auto& stop = install_stop_handler();
    const BackendRegistry registry(default_plugin_dir());
    try {
      exit_code = pipeline::run_stage_worker(registry, o.config, &stop) ? 0 : 3;
      if (exit_code) fmt::print(stderr, "stopped before the end of the request stream\n");
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}\n", e.what());
      exit_code = 1;
    }
  });
}

}  // namespace infermark::cli
