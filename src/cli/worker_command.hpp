// `infermark worker` (hidden; started by `run` and `sweep` for each cell): its flags.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace infermark::cli {

struct WorkerOptions {
  std::string cell_path;    // the cell request (JSON)
  std::string result_path;  // where its result goes
};

void define_worker_flags(CLI::App& cmd, WorkerOptions& options);

}  // namespace infermark::cli
