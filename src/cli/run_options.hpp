// The measurement flags shared by `run` (the orchestrator) and `worker` (one isolated cell),
// and the translation between them, so a worker measures exactly what `run` was asked for.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/measure_cell.hpp"

namespace infermark::cli {

struct RunOptions {
  std::string model;
  long long batch = 1;
  int warmup = 10;
  int runs = 100;
  // Intra-op thread counts; one cell per backend and count. Empty: the machine's physical core
  // count, applied to every backend. 0: each framework's own default.
  std::vector<int> threads;
  int inter_op_threads = 0;
  std::string precision = "fp32";
  std::string device = "cpu";
  std::vector<std::string> shapes;       // name=AxBxC
  std::vector<std::string> input_files;  // name=file.npy
  std::vector<std::string> backend_opts; // key=value, passed to every backend that runs
  unsigned long long seed = 42;
};

// Adds the shared flags with their validators to `cmd`.
void add_measurement_flags(CLI::App& cmd, RunOptions& options);

// The thread counts to measure (the default resolved).
std::vector<int> thread_counts(const RunOptions& options);

// Builds the cell for `backend` at `threads`; throws infermark::Error naming the flag for malformed values.
harness::CellRequest to_cell(const RunOptions& options, const std::string& backend, int threads);

// The `infermark worker ...` command line that measures `cell` into `result_path`.
std::vector<std::string> worker_command(const RunOptions& options, const harness::CellRequest& cell,
                                        const std::filesystem::path& result_path);

// The physical core count used when --threads is not given.
int default_thread_count();

}  // namespace infermark::cli
