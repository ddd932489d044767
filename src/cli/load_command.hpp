// `infermark load URL`: its flags, which fill the remote client's request directly.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "harness/run_options.hpp"
#include "remote/measure_remote.hpp"

namespace infermark::cli {

struct LoadOptions {
  remote::RemoteRequest request;    // everything but the cell, which each concurrency level sets
  harness::RunOptions measurement;  // inputs and scenario, as `run` takes them
  std::string out = "results";
};

void define_load_flags(CLI::App& cmd, LoadOptions& options);

}  // namespace infermark::cli
