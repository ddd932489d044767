// `infermark sweep STUDY.yaml`: runs every cell of a study, each isolated in a worker, into a
// stable folder so an interrupted sweep resumes where it stopped; writes a summary at the end.
// With --search, runs only the cells a guided search visits (see study/config_search.hpp). Under
// MPI (`mpirun -np N infermark sweep ...`) the ranks share the cells out, or with --per-host each
// runs them all (see scaleout/distributed_sweep.hpp).
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "cli/run_flags.hpp"
#include "cli/stop_signal.hpp"
#include "cli/study_job.hpp"
#include "cli/sweep_command.hpp"
#include "cli/worker_launch.hpp"
#include "core/error.hpp"
#include "pipeline/pipeline_file.hpp"
#include "scaleout/sweep_job.hpp"
#include "study/study.hpp"

namespace infermark::cli {
namespace {

int sweep(const SweepOptions& o) {
  auto& world = scaleout::World::get();  // refuses several ranks when built without MPI
  const bool distributed = world.distributed() || o.per_host;
  if (pipeline::is_pipeline_file(o.study_file)) {
    if (distributed)
      throw Error(o.study_file + ": a pipeline study runs on one process; run it without mpirun and without --per-host");
    return run_pipeline_study(o.study_file, o.out);  // see cmd_pipeline.cpp
  }
  if (distributed && o.search)
    throw Error("--search walks the axes one cell after another; run it without mpirun and without --per-host");
  const auto study = study::load_study(o.study_file);
  const BackendRegistry registry(default_plugin_dir());
  auto [job, estimate_s] = make_study_job(study, registry, o.out, o.fresh, o.memory_limit_mb);
  job.search = o.search;
  job.p99_ms = o.p99_ms;
  job.per_host = o.per_host;
  if (world.is_root())
    fmt::print("study {}: {} cells ({} models x backends x axes), at most ~{:.0f} min{}\n", study.name, job.cells.size(),
               study.models.size(), estimate_s / 60, o.search ? "; --search runs only the cells its walk visits" : "");
  if (o.dry_run) {
    if (distributed) {
      if (world.is_root()) scaleout::print_assignment(job, world.size());
      return 0;
    }
    for (const auto& cell : job.cells) fmt::print("  {:<14} {:<28} {}\n", cell.backend, cell.model, study::settings_text(cell));
    return 0;
  }
  if (o.max_duration_s > 0 && estimate_s > o.max_duration_s)
    throw Error(fmt::format("{}: the matrix could take up to {:.0f} s, more than --max-duration {:.0f} s; trim the axes",
                            o.study_file, estimate_s, o.max_duration_s));
  return scaleout::run_sweep_job(job, world, registry, install_stop_handler());
}

}  // namespace

void define_sweep_flags(CLI::App& cmd, SweepOptions& o) {
  cmd.add_option("study", o.study_file, "Study YAML file (see studies/)")->required();
  cmd.add_option("--out", o.out, "Folder for the study's results (a study-<name> folder inside)")->capture_default_str();
  cmd.add_flag("--dry-run", o.dry_run, "Print the matrix and an upper bound of its duration; run nothing");
  cmd.add_flag("--fresh", o.fresh, "Measure every cell again instead of resuming");
  add_memory_limit_flag(cmd, o.memory_limit_mb);
  cmd.add_option("--max-duration", o.max_duration_s, "Refuse a matrix that could take longer than this (s)")->check(above_zero());
  auto* search = cmd.add_flag("--search", o.search,
                              "Find the highest-throughput cell meeting --p99-ms by a guided walk over the axes, "
                              "running only the cells it visits");
  cmd.add_option("--p99-ms", o.p99_ms, "The P99 latency target (ms) of --search")->check(above_zero())->needs(search);
  search->needs(cmd.get_option("--p99-ms"));
  cmd.add_flag("--per-host", o.per_host,
               "Under mpirun: every rank runs the whole study on its own host, results in <study folder>/<host>/ "
               "(without it the ranks share the cells out)");
}

void add_sweep_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("sweep", "Run a study: every combination of its axes, isolated and resumable");
  static SweepOptions options;
  define_sweep_flags(*cmd, options);
  cmd->callback([&exit_code] { exit_code = sweep(options); });
}

}  // namespace infermark::cli
