// One `infermark load URL` (alone or as `mpirun -np N infermark load URL`): every concurrency level
// measured against the server, one result each in a new results folder, a line printed per level.
#pragma once

#include <atomic>
#include <string>

#include "harness/run_options.hpp"
#include "remote/measure_remote.hpp"

namespace infermark::scaleout {

struct LoadJob {
  remote::RemoteRequest request;    // everything but the cell, which each concurrency level sets
  harness::RunOptions measurement;  // inputs and scenario, as `run` takes them
  std::string out = "results";
};

// Every rank runs this; rank 0 creates the folder, writes and prints the merged results. Returns
// 0, 1 when a level failed or its result could not be saved, 130 when `stop` was set. Throws
// infermark::Error naming the flag for a bad request, before anything is measured.
int run_load_job(const LoadJob& job, const std::atomic<bool>& stop);

}  // namespace infermark::scaleout
