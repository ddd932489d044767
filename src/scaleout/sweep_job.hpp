// Running a study's cells once `sweep` has expanded them (a study's axes are `run` flags, which the
// command line parses): every cell, each isolated in a worker; or the guided search's cells only;
// or, under mpirun or with --per-host, the cells shared out over the ranks (distributed_sweep.hpp).
// Writes the results and summary.md into the study folder and prints a line per cell.
#pragma once

#include <atomic>
#include <vector>

#include "backends/registry.hpp"
#include "harness/comparison.hpp"
#include "scaleout/mpi_world.hpp"
#include "study/study.hpp"

namespace infermark::scaleout {

struct SweepJob {
  study::Study study;
  std::vector<study::StudyCell> cells;
  harness::ComparisonPlan plan;     // one cell per study cell, with its name; output_dir: the study folder
  std::vector<double> estimates_s;  // each cell's study::cell_estimate_s, for sharing cells out
  bool search = false;              // the guided search for the best cell meeting p99_ms
  double p99_ms = 0;
  bool per_host = false;  // every rank runs every cell on its own host
};

// --dry-run: which rank would run which cell.
void print_assignment(const SweepJob& job, int ranks);

// Every rank runs this. Returns 0, 1 when a cell failed or a file could not be written (or the
// search found no cell meeting the target), 130 when stopped; under mpirun every rank returns rank
// 0's verdict. Throws infermark::Error when the ranks cannot sweep together (rank 0 says why).
int run_sweep_job(const SweepJob& job, World& world, const BackendRegistry& registry, const std::atomic<bool>& stop);

}  // namespace infermark::scaleout
