// `infermark worker`: measures one cell in this process and writes its result file. `run`
// starts one worker per cell so a framework's crash or hang cannot take the comparison down.
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/stop_signal.hpp"
#include "cli/worker_command.hpp"
#include "core/error.hpp"
#include "harness/comparison.hpp"
#include "loadgen/live_stats.hpp"
#include "remote/measure_remote.hpp"
#include "result/cell_json.hpp"

#include <atomic>
#include <chrono>
#include <thread>

namespace infermark::cli {
namespace {

result::RunResult measure_remote_cell(const result::CellRequest& cell, const std::atomic<bool>* stop,
                                      const harness::StageCallback& on_stage) {
  try {
    return remote::measure_remote(remote::request_for_cell(cell), stop, on_stage);
  } catch (const Error& e) {  // an incomplete cell: a failed result naming why, never a lost one
    auto result = result::result_for_cell(cell);
    result.status = result::CellStatus::kFailed;
    result.error = std::string("remote cell: ") + e.what();
    return result;
  }
}

}  // namespace

void define_worker_flags(CLI::App& cmd, WorkerOptions& o) {
  cmd.add_option("--cell", o.cell_path, "The cell request (JSON written by `run`)")->required();
  cmd.add_option("--result", o.result_path, "Where to write the result JSON")->required();
}

void add_worker_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("worker", "Measure one cell in this process (used by `run`)");
  cmd->group("");  // internal: hidden from --help
  static WorkerOptions o;
  define_worker_flags(*cmd, o);
  cmd->callback([&exit_code] {
    const auto& stop = install_stop_handler();
    const auto cell = result::read_cell(o.cell_path);
    BackendRegistry registry(default_plugin_dir());
    // Once a second, the live figures for `run`'s progress line (read from this worker's log).
    std::atomic<bool> done{false};
    std::thread progress([&done] {
      while (!done.load()) {
        for (int i = 0; i < 10 && !done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const auto& live = loadgen::LiveStats::global();
        if (live.completed() > 0)
          fmt::print(stderr, "{}completed={} p99_ms={:.3f}\n", harness::kProgressPrefix, live.completed(), live.p99_ms());
        std::fflush(stderr);
      }
    });
    const auto on_stage = [](const std::string& stage) {
      fmt::print(stderr, "{}{}\n", harness::kStagePrefix, stage);
      std::fflush(stderr);
    };
    // A study's server cell goes to the remote client; every other cell to its backend.
    const auto result = cell.remote.is_null() ? harness::measure_cell(registry, cell, &stop, on_stage)
                                              : measure_remote_cell(cell, &stop, on_stage);
    done = true;
    progress.join();
    result::write_run_result(result, o.result_path);
    exit_code = 0;  // the result file carries the cell's status
  });
}

}  // namespace infermark::cli
