// Runs a comparison: one cell per backend, each in its own worker process by default, writing
// each cell's result file as soon as the cell ends so nothing measured is lost.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "harness/measure_cell.hpp"

namespace infermark::harness {

// Progress of the running cell: its index, the worker's current stage and live figures, seconds elapsed.
using ProgressCallback =
    std::function<void(std::size_t cell, const std::string& stage, const std::string& live, double elapsed_s)>;

struct ComparisonPlan {
  std::vector<result::CellRequest> cells;
  std::filesystem::path output_dir;
  bool in_process = false;
  double cell_timeout_s = 600.0;
  double worker_memory_limit_mb = 0.0;            // resident memory a worker may use (0: no limit); workers only
  std::string reference_backend = "onnxruntime";  // whose outputs the others are compared with
  ProgressCallback on_progress;                   // optional, called while a worker runs
  // Optional file stems, one per cell (default: <model>.<backend>.t<threads>, plus .c<concurrency>
  // where only that tells cells apart). With `resume`, a
  // cell whose result file already holds an ok result is not run again.
  std::vector<std::string> cell_names;
  bool resume = false;
  // Builds the worker command line for a cell writing its result to `result_path`.
  std::function<std::vector<std::string>(const result::CellRequest&, const std::filesystem::path& result_path)> worker_argv;
};

struct CellOutcome {
  result::RunResult result;
  std::filesystem::path result_path;
  std::string save_error;  // why result_path could not be written (disk full...), "" when it was
};

// Writes the outcome's result file; a failure (disk full, a file size limit) is kept in
// `save_error` rather than thrown, so the cells after it still run and the table still prints.
void save_result(CellOutcome& outcome);

// Result file stems of cells without names: <model>.<backend>.t<threads> ("tdefault" for 0), then
// .c<concurrency> where cells differ only in that (a --concurrency list), then .<index> for any
// still alike, so no cell overwrites another's file.
std::vector<std::string> default_cell_names(const std::vector<result::CellRequest>& cells);

// Called after each cell with its outcome (e.g. to print progress).
using CellCallback = std::function<void(const CellOutcome&)>;

std::vector<CellOutcome> run_comparison(const ComparisonPlan& plan, const BackendRegistry& registry,
                                        const std::atomic<bool>& stop, const CellCallback& on_cell = {});

// The last "infermark-stage: ..." line a worker wrote to its log, or "" if none.
std::string last_stage(const std::filesystem::path& worker_log);

inline constexpr const char* kStagePrefix = "infermark-stage: ";
inline constexpr const char* kProgressPrefix = "infermark-progress: ";

// The last live-figures line a worker wrote ("completed=123 p99_ms=4.567"), or "".
std::string last_progress(const std::filesystem::path& worker_log);

}  // namespace infermark::harness
