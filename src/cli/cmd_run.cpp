// `infermark run MODEL`: every capable backend (or those named with -b) measured on the same
// model and inputs, each in its own worker process; prints the comparison table and writes one
// JSON result per backend.
#include <fmt/core.h>

#include <unistd.h>

#include <ctime>

#include "backends/registry.hpp"
#include "cli/commands.hpp"
#include "cli/run_command.hpp"
#include "cli/run_flags.hpp"
#include "cli/stop_signal.hpp"
#include "cli/worker_launch.hpp"
#include "core/error.hpp"
#include "harness/comparison.hpp"
#include "harness/planned_batch.hpp"
#include "harness/run_options.hpp"
#include "harness/unsaved_results.hpp"
#include "report/comparison_table.hpp"
#include "result/results_folder.hpp"
#include "scaleout/single_process_guard.hpp"

namespace infermark::cli {
namespace {

// -b's backends for `model`, or every built one that reads it; names that cannot run are reported
// now and skipped (exit code 2 at the end), the others still run.
std::vector<std::string> backends_for(const RunCommandOptions& o, const std::string& model, const BackendRegistry& registry,
                                      int& exit_code) {
  const auto selection = harness::select_backends(o.backends, model, registry.available());
  for (const auto& [name, why] : selection.rejected) {
    fmt::print(stderr, "infermark: -b {}: {}\n", name, why);
    exit_code = 2;
  }
  if (selection.chosen.empty()) throw Error("-b: none of the requested backends can run");
  return selection.chosen;
}

void print_progress(std::size_t index, std::size_t total, const harness::CellOutcome& outcome) {
  if (isatty(STDOUT_FILENO)) fmt::print("\r\033[K");  // clear the live status line
  const auto& r = outcome.result;
  auto line = fmt::format("[{}/{}] {:<12} {}", index, total, r.backend.name, result::name_of(r.status));
  if (r.latency_ms) line += fmt::format("  mean {:.3f} ms over {} runs", r.latency_ms->mean, r.latency_ms->count);
  fmt::print("{}  -> {}\n", line,
             outcome.save_error.empty() ? outcome.result_path.string() : "NOT SAVED (" + outcome.save_error + ")");
  std::fflush(stdout);
}

int run(const RunCommandOptions& o) {
  const auto& stop = install_stop_handler();
  for (const auto& model : o.models) result::check_model_file(model);
  int exit_code = 0;
  BackendRegistry registry(default_plugin_dir());
  harness::ComparisonPlan plan;
  const auto threads = harness::thread_counts(o.measurement);
  for (const auto& model : o.models) {
    auto measurement = o.measurement;
    measurement.model = model;
    for (auto& cell : harness::model_cells(measurement, backends_for(o, model, registry, exit_code)))
      plan.cells.push_back(std::move(cell));
  }
  plan.output_dir = result::create_results_folder(o.out, result::models_label(o.models), std::time(nullptr));
  plan.in_process = o.in_process;
  plan.cell_timeout_s = o.timeout_s > 0 ? o.timeout_s : harness::default_cell_timeout_s(o.measurement.scenario);
  plan.worker_memory_limit_mb = o.memory_limit_mb;
  plan.reference_backend = o.reference;
  plan.worker_argv = worker_argv;

  const auto thread_list = harness::thread_list_text(threads);
  const auto& s = o.measurement.scenario;
  std::string model_list;
  for (const auto& model : o.models) model_list += (model_list.empty() ? "" : " ") + model;
  fmt::print("infermark run {}: {} cell(s), scenario {}, {}, {} warm-up queries, threads {}\n", model_list, plan.cells.size(),
             loadgen::name_of(plan.cells.front().scenario.name), harness::planned_batch_text(plan.cells.front().inputs),
             s.warmup_queries, thread_list);
  // On a terminal, one status line per running cell, redrawn in place; in logs, nothing extra.
  const bool terminal = isatty(STDOUT_FILENO);
  const double planned_s = loadgen::planned_duration_s(o.measurement.scenario);
  if (terminal)
    plan.on_progress = [&](std::size_t cell, const std::string& stage, const std::string& live, double elapsed_s) {
      fmt::print("\r\033[K[{}/{}] {} ({} threads): {}{}, {:.0f} s elapsed{}", cell + 1, plan.cells.size(),
                 plan.cells[cell].backend, plan.cells[cell].options.intra_op_threads, stage.empty() ? "starting" : stage,
                 live.empty() ? std::string() : " [" + live + "]", elapsed_s,
                 o.measurement.scenario.name == loadgen::Scenario::kSingleStream
                     ? std::string()
                     : fmt::format(" (scenario up to ~{:.0f} s)", planned_s));
      std::fflush(stdout);
    };
  std::size_t done = 0;
  const auto outcomes = harness::run_comparison(
      plan, registry, stop, [&](const harness::CellOutcome& outcome) { print_progress(++done, plan.cells.size(), outcome); });

  std::vector<result::RunResult> results;
  for (const auto& outcome : outcomes) {
    results.push_back(outcome.result);
    if (outcome.result.status != result::CellStatus::kOk && exit_code == 0) exit_code = 1;
  }
  fmt::print("\n{}{}\nresults: {}\n", report::comparison_table(results), report::scenario_notes(results),
             plan.output_dir.string());
  harness::report_unsaved_results(outcomes, exit_code);
  if (stop.load()) {
    fmt::print(stderr, "infermark: interrupted; results measured so far are kept in {}\n", plan.output_dir.string());
    return 130;
  }
  return exit_code;
}

}  // namespace

void define_run_flags(CLI::App& cmd, RunCommandOptions& o) {
  cmd.add_option("models", o.models,
                 "Model file(s) (" + declared_backends().extensions_text() + "); several are compared in one table")
      ->required();
  std::string names;
  for (const auto& name : known_backend_names()) names += (names.empty() ? "" : ", ") + name;
  cmd.add_option("-b,--backends", o.backends,
                 "Backends to compare (comma-separated, of " + names + "; default: every capable one)")
      ->delimiter(',');
  cmd.add_option("--out", o.out, "Folder for result files")->capture_default_str();
  auto* in_process =
      cmd.add_flag("--in-process", o.in_process, "Measure every backend in this process (debugging; no crash isolation)");
  add_memory_limit_flag(cmd, o.memory_limit_mb)->excludes(in_process);
  cmd.add_option("--timeout", o.timeout_s,
                 "Seconds before a cell's worker is stopped (default: the scenario's planned duration + 600)")
      ->check(above_zero());
  cmd.add_option("--reference", o.reference,
                 "Backend whose outputs the others are cross-checked against (default onnxruntime, else the first that ran)")
      ->capture_default_str();
  add_measurement_flags(cmd, o.measurement);
}

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Measure a model on every capable backend and compare them");
  static RunCommandOptions options;
  define_run_flags(*cmd, options);
  cmd->callback([&exit_code] {
    scaleout::refuse_several_ranks("run");
    exit_code = run(options);
  });
}

}  // namespace infermark::cli
