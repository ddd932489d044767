// A study swept by several MPI ranks (`mpirun -np N infermark sweep STUDY.yaml [--per-host]`).
// The ranks move in rounds: each runs its next cell, isolated in a worker as a plain sweep does,
// then the results go to rank 0, the only rank that writes the study folder, and a stop on any
// rank ends the sweep for all after that round, so nothing measured is lost and no rank is left
// waiting in a collective. Resuming: rank 0 says which cells its folder already holds.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/comparison.hpp"
#include "scaleout/mpi_world.hpp"
#include "scaleout/rank_roster.hpp"

namespace infermark::scaleout {

enum class SweepSpread {
  kShareCells,  // each cell runs once, on one rank (study::assign_cells)
  kPerHost,     // every rank runs every cell; each host's results in its own folder
};

// "share cells" or "per host", as results record it.
std::string_view name_of(SweepSpread spread);

struct DistributedSweep {
  harness::ComparisonPlan plan;     // this rank's cells and their names; output_dir is the study folder; resume
  std::vector<double> estimates_s;  // each cell's study::cell_estimate_s, for the assignment
  SweepSpread spread = SweepSpread::kShareCells;
  // Every rank's cell names (gather_cell_names): rank 0 files each rank's results under that
  // rank's names, which differ where a host resolves "1.5x" threads to its own core count.
  std::vector<std::vector<std::string>> rank_cell_names;
};

// Every rank's cell names, in rank order, on every rank.
std::vector<std::vector<std::string>> gather_cell_names(World& world, const std::vector<std::string>& mine);

// "" when every rank expanded the study to rank 0's cells, else the refusal of sharing them out
// (a rank would run a cell rank 0 does not know): names the first rank and cell that differ.
std::string different_cells_error(const std::vector<std::vector<std::string>>& rank_cell_names,
                                  const std::vector<RankInfo>& roster);

// What each rank did, for summary.md.
struct RankShare {
  RankInfo rank;
  std::size_t assigned = 0, already_measured = 0, ran = 0;
};

struct DistributedSweepOutcome {
  // Rank 0: every result the study folder holds for this sweep's cells (per host, then in study
  // order), those measured earlier included. Other ranks: empty.
  std::vector<harness::CellOutcome> outcomes;
  std::vector<RankShare> shares;  // rank 0 only
  bool stopped = false;           // some rank was asked to stop; the sweep ended early
};

// Called on rank 0 for each cell as its result is saved, with the cell's name on the rank that ran it.
using DistributedCellCallback =
    std::function<void(const std::string& cell_name, const RankInfo& ran_on, const harness::CellOutcome&)>;

// Where rank 0 keeps the results a rank measured: the study folder, or its host's folder under it.
std::filesystem::path results_folder(const std::filesystem::path& study_folder, SweepSpread spread, const std::string& host);

// Where a rank other than 0 runs its cells before sending their results to rank 0: a folder of
// its own under the system's temporary folder (never shared with another rank, even when the
// study folder is on a shared file system), kept until the sweep completes so a rerun can send
// what an interrupted one measured but did not deliver.
std::filesystem::path staging_folder(const std::filesystem::path& study_folder, int rank);

// Runs the sweep on every rank of `world` (each must call it with the same plan). `roster` is
// gather_roster's. Results record the rank and host that ran them (environment.scaleout).
DistributedSweepOutcome run_distributed_sweep(World& world, const std::vector<RankInfo>& roster, const DistributedSweep& sweep,
                                              const BackendRegistry& registry, const std::atomic<bool>& stop,
                                              const DistributedCellCallback& on_cell = {});

// The "Ranks" section of summary.md: which rank ran how many cells on which host.
std::string ranks_summary(const std::vector<RankShare>& shares, SweepSpread spread);

}  // namespace infermark::scaleout
