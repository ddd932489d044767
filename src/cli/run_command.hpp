// `infermark run MODEL...`: its flags, and the options they fill (the measurement flags are in
// run_flags.hpp, shared with `load`, `pipeline` and study cells).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/run_options.hpp"

namespace infermark::cli {

struct RunCommandOptions {
  std::vector<std::string> models;  // one comparison over all of them (e.g. a GGUF model's quantisations)
  harness::RunOptions measurement;
  std::vector<std::string> backends;  // empty: every built one that reads the model
  std::string out = "results";
  bool in_process = false;
  double timeout_s = 0;        // 0: the scenario's planned duration plus 10 minutes for loading and warm-up
  double memory_limit_mb = 0;  // 0: none
  std::string reference = "onnxruntime";
};

void define_run_flags(CLI::App& cmd, RunCommandOptions& options);

}  // namespace infermark::cli
