// `infermark worker`: measures one cell in this process and writes its result file. `run`
// starts one worker per backend so a framework's crash or hang cannot take the comparison down.
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "cli/stop_signal.hpp"
#include "core/error.hpp"
#include "harness/comparison.hpp"

namespace infermark::cli {

void add_worker_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("worker", "Measure one backend in this process (used by `run`; for debugging)");
  cmd->group("");  // internal: hidden from --help
  static RunOptions options;
  static std::string backend, result_path, outputs_dir;
  cmd->add_option("model", options.model, "Model file")->required();
  cmd->add_option("--backend", backend, "Backend to measure")->required();
  cmd->add_option("--result", result_path, "Where to write the result JSON")->required();
  cmd->add_option("--save-outputs", outputs_dir, "Folder for the last run's outputs as .npy");
  add_measurement_flags(*cmd, options);
  cmd->callback([&exit_code] {
    const auto& stop = install_stop_handler();
    if (options.threads.size() > 1) throw Error("worker: --threads takes one value");
    auto cell = to_cell(options, backend, thread_counts(options).front());
    cell.isolation = "worker process";
    cell.outputs_dir = outputs_dir;
    BackendRegistry registry(default_plugin_dir());
    const auto result = harness::measure_cell(registry, cell, &stop, [](const std::string& stage) {
      fmt::print(stderr, "{}{}\n", harness::kStagePrefix, stage);
      std::fflush(stderr);
    });
    report::write_run_result(result, result_path);
    exit_code = 0;  // the result file carries the cell's status
  });
}

}  // namespace infermark::cli
