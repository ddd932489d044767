// Runs `infermark serve`: loads the model repository, listens, and on SIGTERM or SIGINT stops
// accepting, drains in-flight requests and exits.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "serve/serve_config.hpp"

namespace infermark::serve {

// `infermark serve --model FILE -b A,B ...`: one model, one variant per backend.
struct SingleModelFlags {
  std::string model_file;
  std::string name;                   // "": the file's stem
  std::vector<std::string> backends;  // one variant each, named after the backend
  std::vector<double> weights;        // "": equal
  std::string precision = "fp32";
  int threads = 0;
  int instances = 1;
  int slots = 4;    // language models: sequence slots
  int context = 0;  // language models: tokens per sequence (0: the model's)
  BatchingSettings batching;
  std::size_t max_queue = 128;
  double timeout_ms = 0;
  double inline_below_us = 200;  // see ModelSpec::inline_below_us
  std::map<std::string, std::string> options;
};

// Throws infermark::Error naming the flag.
ServeConfig single_model_config(const SingleModelFlags& flags);

// The connection cap in force: `configured`, or with 0 what `open_files` (the open-file limit)
// leaves after a reserve for the server's own files, threads and refusals.
std::size_t connection_cap(std::size_t configured, std::size_t open_files);

// Raises this process's soft open-file limit to its hard limit; returns the soft limit now.
std::size_t raise_open_file_limit();

// Blocks until SIGTERM/SIGINT; returns the exit code. Prints the address it listens on first.
int run_serve(const ServeConfig& config);

}  // namespace infermark::serve
