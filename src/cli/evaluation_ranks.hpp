// The ranks of `infermark evaluate`: this process alone, or under `mpirun ... evaluate --per-host`
// one rank per host, each running the whole evaluation on its own machine while rank 0 writes the
// report. Every experiment is a step all ranks take together (the sweeps are collective), so each
// rank's view of it — whether it can start, what it left out, how it ended — is gathered here and
// rank 0 decides for all. Pipelines run on each rank alone; their results travel to rank 0 after.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "scaleout/mpi_world.hpp"
#include "scaleout/rank_roster.hpp"

namespace infermark::cli {

// How one experiment went on one rank.
struct RankExperiment {
  bool ran = true;                       // false on every rank when no rank had a cell to run
  int exit_code = 0;                     // the sweep's or pipeline's; 130: stopped
  std::string error;                     // what it threw, "" when nothing
  std::vector<std::string> unsupported;  // the pairs `check` left out on this host
};

// What rank 0 learns of one experiment from every rank.
struct ExperimentAcrossRanks {
  bool ran = true;                       // as every rank's RankExperiment::ran
  bool stopped = false;                  // some rank was stopped (every rank learns this)
  bool failed = false;                   // some rank failed or threw
  std::string error;                     // every rank's error, each named by host where there are several
  std::vector<std::string> unsupported;  // every rank's left-out pairs, named by host where there are several
};

class EvaluationRanks {
 public:
  // Gathers every rank's host and build once (collective).
  EvaluationRanks(scaleout::World& world, bool per_host);

  // Why these ranks cannot run an evaluation together, "" when they can: several ranks without
  // --per-host (sharing one evaluation's cells among machines would mix them in one table), two
  // ranks on one host, or different builds. Every rank has the same answer; nothing else may be
  // called when it is not "".
  const std::string& refusal() const { return refusal_; }

  bool per_host() const { return per_host_; }
  bool is_root() const { return world_.is_root(); }
  scaleout::World& world() { return world_; }

  // Where this rank keeps its own files of the evaluation (the zoo build's log, `check`'s
  // answers): the evaluation folder, or hosts/<host> inside it with --per-host.
  std::filesystem::path own_folder(const std::filesystem::path& evaluation) const;
  // Where this rank's pipeline writes: the experiment's folder, or <host> inside it with --per-host.
  std::filesystem::path pipeline_folder(const std::filesystem::path& experiment_folder) const;

  // Runs `step` on rank 0, then on the other ranks together: ranks sharing a file system find
  // what rank 0 made (zoo models) instead of making it at the same time.
  template <typename Step>
  void root_first(Step&& step) {
    if (world_.is_root()) step();
    world_.idle_barrier();
    if (!world_.is_root()) step();
    world_.idle_barrier();
  }

  // "" when every rank can start the experiment, else why not (named by host where a rank other
  // than rank 0 cannot). Every rank gets the same answer.
  std::string why_not_everywhere(const std::string& mine);
  // Whether any rank has something to run (a rank whose cells `check` all left out takes part in
  // a sweep with none).
  bool any(bool mine);

  // Every rank's outcome of one experiment, merged on rank 0; `stopped` on every rank.
  ExperimentAcrossRanks gather_outcomes(const RankExperiment& mine);

  // Copies the result and summary files each rank's pipeline wrote under
  // pipeline_folder(experiment_folder) into the same place on rank 0 (tensor outputs stay on
  // their host, as a sweep's do).
  void gather_pipeline_results(const std::filesystem::path& experiment_folder);

  // Rank 0's exit code, on every rank, so mpirun's is the evaluation's.
  int agree_on_exit_code(int root_exit_code);

 private:
  std::string named(std::size_t rank, const std::string& text) const;

  scaleout::World& world_;
  bool per_host_ = false;
  std::vector<scaleout::RankInfo> roster_;
  std::string refusal_;
};

}  // namespace infermark::cli
