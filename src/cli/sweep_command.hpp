// `infermark sweep STUDY`: its flags, and the options they fill.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace infermark::cli {

struct SweepOptions {
  std::string study_file;
  std::string out = "results";
  bool dry_run = false;
  bool fresh = false;
  double max_duration_s = 0;  // 0: no limit
  bool search = false;        // guided search for the best cell meeting p99_ms instead of the whole matrix
  double p99_ms = 0;
  double memory_limit_mb = 0;  // per worker; 0: none
  bool per_host = false;       // every rank runs the whole study, results kept per host
};

void define_sweep_flags(CLI::App& cmd, SweepOptions& options);

}  // namespace infermark::cli
