// `infermark run MODEL`: every capable backend (or those named with -b) measured on the same
// model and inputs, each in its own worker process; prints the comparison table and writes one
// JSON result per backend.
#include <fmt/core.h>

#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "backends/registry.hpp"
#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "cli/stop_signal.hpp"
#include "core/error.hpp"
#include "cli/worker_launch.hpp"
#include "harness/comparison.hpp"
#include "report/comparison_table.hpp"

namespace infermark::cli {
namespace {

struct RunCommandOptions {
  std::vector<std::string> models;  // one comparison over all of them (e.g. a GGUF model's quantisations)
  RunOptions measurement;
  std::vector<std::string> backends;
  std::string out = "results";
  bool in_process = false;
  double timeout_s = 0;  // 0: the scenario's planned duration plus 10 minutes for loading and warm-up
  std::string reference = "onnxruntime";
};

std::filesystem::path run_folder(const RunCommandOptions& o) {
  const auto extra = o.models.size() > 1 ? "-and-" + std::to_string(o.models.size() - 1) + "-more" : std::string();
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return std::filesystem::path(o.out) / (std::string(stamp) + "-" + std::filesystem::path(o.models.front()).stem().string() + extra);
}

// Backends named with -b, or every built backend that reads the model's format. Names that
// cannot run are reported now and skipped; the others still run.
std::vector<std::string> select_backends(const RunCommandOptions& o, const std::string& model, const BackendRegistry& registry,
                                         int& exit_code) {
  const auto format = model_format(model);
  if (o.backends.empty()) {
    std::vector<std::string> chosen;
    for (const auto& name : registry.available())
      if (backend_reads(name, format)) chosen.push_back(name);
    if (chosen.empty()) throw Error(model + ": no built backend reads ." + format + " models (see `infermark backends`)");
    return chosen;
  }
  std::vector<std::string> chosen;
  for (const auto& name : o.backends) {
    try {
      BackendRegistry::check_known(name);
      if (!registry.is_available(name)) throw Error("backend '" + name + "' is not built into this infermark (see `infermark backends`)");
      if (!backend_reads(name, format)) throw Error("backend '" + name + "' does not read ." + format + " models (" + model + ")");
      if (std::find(chosen.begin(), chosen.end(), name) == chosen.end()) chosen.push_back(name);
    } catch (const Error& e) {
      fmt::print(stderr, "infermark: -b {}: {}\n", name, e.what());
      exit_code = 2;
    }
  }
  if (chosen.empty()) throw Error("-b: none of the requested backends can run");
  return chosen;
}

void print_progress(std::size_t index, std::size_t total, const harness::CellOutcome& outcome) {
  if (isatty(STDOUT_FILENO)) fmt::print("\r\033[K");  // clear the live status line
  const auto& r = outcome.result;
  auto line = fmt::format("[{}/{}] {:<12} {}", index, total, r.backend.name, r.status);
  if (r.latency_ms) line += fmt::format("  mean {:.3f} ms over {} runs", r.latency_ms->mean, r.latency_ms->count);
  fmt::print("{}  -> {}\n", line, outcome.result_path.string());
  std::fflush(stdout);
}

int run(const RunCommandOptions& o) {
  const auto& stop = install_stop_handler();
  for (const auto& model : o.models) harness::check_model_file(model);
  int exit_code = 0;
  BackendRegistry registry(default_plugin_dir());
  harness::ComparisonPlan plan;
  const auto threads = thread_counts(o.measurement);
  for (const auto& model : o.models) {
    auto measurement = o.measurement;
    measurement.model = model;
    for (const auto& backend : select_backends(o, model, registry, exit_code))
      for (int t : threads)
        for (int c : concurrency_levels(measurement)) plan.cells.push_back(to_cell(measurement, backend, t, c));
  }
  plan.output_dir = run_folder(o);
  plan.in_process = o.in_process;
  plan.cell_timeout_s = o.timeout_s > 0 ? o.timeout_s : loadgen::planned_duration_s(o.measurement.scenario) + 600;
  plan.reference_backend = o.reference;
  plan.worker_argv = worker_argv;

  std::string thread_list;
  for (int t : threads) thread_list += (thread_list.empty() ? "" : ",") + (t == 0 ? std::string("framework-default") : std::to_string(t));
  const auto& s = o.measurement.scenario;
  std::string model_list;
  for (const auto& model : o.models) model_list += (model_list.empty() ? "" : " ") + model;
  fmt::print("infermark run {}: {} cell(s), scenario {}, batch {}, {} warm-up queries, threads {}\n", model_list,
             plan.cells.size(), loadgen::name_of(plan.cells.front().scenario.name), o.measurement.batch, s.warmup_queries, thread_list);
  // On a terminal, one status line per running cell, redrawn in place; in logs, nothing extra.
  const bool terminal = isatty(STDOUT_FILENO);
  const double planned_s = loadgen::planned_duration_s(o.measurement.scenario);
  if (terminal)
    plan.on_progress = [&](std::size_t cell, const std::string& stage, const std::string& live, double elapsed_s) {
      fmt::print("\r\033[K[{}/{}] {} ({} threads): {}{}, {:.0f} s elapsed{}", cell + 1, plan.cells.size(), plan.cells[cell].backend,
                 plan.cells[cell].options.intra_op_threads, stage.empty() ? "starting" : stage,
                 live.empty() ? std::string() : " [" + live + "]", elapsed_s,
                 o.measurement.scenario.name == loadgen::Scenario::kSingleStream ? std::string()
                                                                : fmt::format(" (scenario up to ~{:.0f} s)", planned_s));
      std::fflush(stdout);
    };
  std::size_t done = 0;
  const auto outcomes = harness::run_comparison(plan, registry, stop, [&](const harness::CellOutcome& outcome) {
    print_progress(++done, plan.cells.size(), outcome);
  });

  std::vector<report::RunResult> results;
  for (const auto& outcome : outcomes) {
    results.push_back(outcome.result);
    if (outcome.result.status != "ok" && exit_code == 0) exit_code = 1;
  }
  fmt::print("\n{}{}\nresults: {}\n", report::comparison_table(results), report::scenario_notes(results), plan.output_dir.string());
  if (stop.load()) {
    fmt::print(stderr, "infermark: interrupted; results measured so far are kept in {}\n", plan.output_dir.string());
    return 130;
  }
  return exit_code;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Measure a model on every capable backend and compare them");
  static RunCommandOptions options;
  cmd->add_option("models", options.models,
                  "Model file(s) (" + declared_backends().extensions_text() + "); several are compared in one table")
      ->required();
  std::string names;
  for (const auto& name : known_backend_names()) names += (names.empty() ? "" : ", ") + name;
  cmd->add_option("-b,--backends", options.backends, "Backends to compare (comma-separated, of " + names + "; default: every capable one)")
      ->delimiter(',');
  cmd->add_option("--out", options.out, "Folder for result files")->capture_default_str();
  cmd->add_flag("--in-process", options.in_process, "Measure every backend in this process (debugging; no crash isolation)");
  cmd->add_option("--timeout", options.timeout_s,
                  "Seconds before a cell's worker is stopped (default: the scenario's planned duration + 600)")
      ->check(above_zero());
  cmd->add_option("--reference", options.reference,
                  "Backend whose outputs the others are cross-checked against (default onnxruntime, else the first that ran)")
      ->capture_default_str();
  add_measurement_flags(*cmd, options.measurement);
  cmd->callback([&exit_code] { exit_code = run(options); });
}

}  // namespace infermark::cli
