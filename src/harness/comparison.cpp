#include "harness/comparison.hpp"

#include <fstream>
#include <functional>
#include <map>

#include "core/error.hpp"
#include "core/model_name.hpp"
#include "harness/cross_check.hpp"
#include "probes/environment.hpp"
#include "process/child_process.hpp"

namespace infermark::harness {
namespace {

// The last few lines of a worker's log: what a crashed framework printed before dying.
std::string log_tail(const std::filesystem::path& log, std::size_t max_lines = 3) {
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.rfind(kStagePrefix, 0) != 0 && line.rfind(kProgressPrefix, 0) != 0) lines.push_back(line);
  std::string tail;
  for (std::size_t i = lines.size() > max_lines ? lines.size() - max_lines : 0; i < lines.size(); ++i)
    tail += (tail.empty() ? "" : " | ") + lines[i];
  return tail;
}

// A result for a worker that ended without writing one (crash, hang, out of memory).
result::RunResult result_for_lost_worker(const result::CellRequest& cell, const process::ChildOutcome& outcome,
                                         const std::filesystem::path& log) {
  auto result = result::result_for_cell(cell);
  result.status = outcome.kind == process::ChildOutcome::Kind::kTimedOut      ? result::CellStatus::kTimeout
                  : outcome.kind == process::ChildOutcome::Kind::kMemoryLimit ? result::CellStatus::kMemoryLimit
                  : outcome.kind == process::ChildOutcome::Kind::kSignaled    ? result::CellStatus::kCrashed
                                                                              : result::CellStatus::kFailed;
  const auto stage = last_stage(log);
  result.error = cell.backend + ": " + outcome.describe() + (stage.empty() ? "" : " while " + stage);
  if (const auto tail = log_tail(log); !tail.empty()) result.error += " [worker log: " + tail + "]";
  result.environment = probes::to_json(probes::capture_environment());
  return result;
}

result::RunResult run_in_worker(const ComparisonPlan& plan, std::size_t index, const result::CellRequest& cell,
                                const std::filesystem::path& path, const std::atomic<bool>& stop) {
  const auto log = std::filesystem::path(path).replace_extension(".log");
  std::filesystem::remove(log);
  std::filesystem::remove(path);
  std::function<void(double)> tick;
  if (plan.on_progress) tick = [&](double elapsed_s) { plan.on_progress(index, last_stage(log), last_progress(log), elapsed_s); };
  const process::ChildLimits limits{.timeout_s = plan.cell_timeout_s, .memory_mb = plan.worker_memory_limit_mb};
  const auto outcome = process::run_child(plan.worker_argv(cell, path), log, limits, &stop, tick);
  auto result =
      std::filesystem::exists(path) ? result::read_run_result(path.string()) : result_for_lost_worker(cell, outcome, log);
  if (limits.memory_mb > 0) result.memory.limit_mb = limits.memory_mb;
  if (!std::filesystem::exists(path)) return result;
  // The worker wrote its measurements before anything went wrong: keep them, and say what happened.
  if (outcome.kind == process::ChildOutcome::Kind::kTimedOut) {
    // A worker stopped at the time limit still writes what it measured until then.
    result.status = result::CellStatus::kTimeout;
    result.error =
        cell.backend + ": " + outcome.describe() + " while " + last_stage(log) + "; the measurements made until then are kept";
  } else if (outcome.kind == process::ChildOutcome::Kind::kExited && outcome.exit_code == 0) {
    std::filesystem::remove(log);
  } else {
    result.error += (result.error.empty() ? "" : "; ") + ("worker " + outcome.describe() + " after writing this result");
  }
  return result;
}

}  // namespace

namespace {

std::string last_line_with(const std::filesystem::path& worker_log, const std::string& prefix) {
  std::ifstream in(worker_log);
  std::string found;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) found = line.substr(prefix.size());
  return found;
}

}  // namespace

void save_result(CellOutcome& outcome) {
  try {
    result::write_run_result(outcome.result, outcome.result_path.string());
    outcome.save_error.clear();
  } catch (const Error& e) {
    outcome.save_error = e.what();
  }
}

std::string last_stage(const std::filesystem::path& worker_log) { return last_line_with(worker_log, kStagePrefix); }
std::string last_progress(const std::filesystem::path& worker_log) { return last_line_with(worker_log, kProgressPrefix); }

std::vector<std::string> default_cell_names(const std::vector<result::CellRequest>& cells) {
  std::vector<std::string> names;
  for (const auto& cell : cells) {
    const auto threads = cell.options.intra_op_threads;
    names.push_back(model_name(cell.model) + "." + cell.backend + ".t" + (threads > 0 ? std::to_string(threads) : "default"));
  }
  const auto disambiguate = [&names](const std::function<std::string(std::size_t)>& suffix) {
    std::map<std::string, int> count;
    for (const auto& name : names) ++count[name];
    for (std::size_t i = 0; i < names.size(); ++i)
      if (count[names[i]] > 1) names[i] += suffix(i);
  };
  disambiguate([&cells](std::size_t i) { return ".c" + std::to_string(cells[i].scenario.concurrency); });
  disambiguate([](std::size_t i) { return "." + std::to_string(i + 1); });
  return names;
}

std::vector<CellOutcome> run_comparison(const ComparisonPlan& plan, const BackendRegistry& registry,
                                        const std::atomic<bool>& stop, const CellCallback& on_cell) {
  std::filesystem::create_directories(plan.output_dir);
  std::vector<CellOutcome> outcomes;
  const auto names = plan.cell_names.empty() ? default_cell_names(plan.cells) : plan.cell_names;
  for (auto cell : plan.cells) {
    if (stop.load()) break;
    cell.isolation = plan.in_process ? "in-process" : "worker process";
    const auto& stem = names.at(outcomes.size());
    CellOutcome outcome;
    outcome.result_path = plan.output_dir / (stem + ".json");
    cell.outputs_dir = plan.output_dir / (stem + ".outputs");
    if (plan.resume && std::filesystem::exists(outcome.result_path)) {
      auto previous = result::read_run_result(outcome.result_path.string());
      if (previous.status == result::CellStatus::kOk) {
        outcome.result = std::move(previous);
        if (on_cell) on_cell(outcome);
        outcomes.push_back(std::move(outcome));
        continue;  // measured by an earlier, interrupted run of the same plan
      }
    }
    outcome.result = plan.in_process ? measure_cell(registry, cell, &stop)
                                     : run_in_worker(plan, outcomes.size(), cell, outcome.result_path, stop);
    save_result(outcome);
    if (on_cell) on_cell(outcome);
    outcomes.push_back(std::move(outcome));
  }
  cross_check_outputs(outcomes, plan.reference_backend);
  return outcomes;
}

}  // namespace infermark::harness
