// `infermark sweep STUDY.yaml`: runs every cell of a study, each isolated in a worker, into a
// stable folder so an interrupted sweep resumes where it stopped; writes a summary at the end.
// With --search, runs only the cells a guided search visits (see study/config_search.hpp). Under
// MPI (`mpirun -np N infermark sweep ...`) the ranks share the cells out, or with --per-host each
// runs them all (see scaleout/distributed_sweep.hpp).
#include <fmt/core.h>

#include <algorithm>

#include "cli/commands.hpp"
#include "cli/run_flags.hpp"
#include "cli/stop_signal.hpp"
#include "cli/sweep_command.hpp"
#include "cli/worker_launch.hpp"
#include "core/error.hpp"
#include "harness/comparison.hpp"
#include "pipeline/pipeline_file.hpp"
#include "remote/load_request.hpp"
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
  const auto cells = study::expand(study, registry.available());
  if (cells.empty()) throw Error(o.study_file + ": the study has no cells (no built backend reads its models?)");

  harness::ComparisonPlan plan;
  double estimate_s = 0;
  std::vector<double> estimates_s;
  for (const auto& cell : cells) {
    const auto options = cell_options(study, cell);  // validates every cell before anything runs
    if (!cell.server && !registry.is_available(cell.backend))
      throw Error(o.study_file + ": backend '" + cell.backend + "' is not built into this infermark");
    plan.cells.push_back(harness::to_cell(options, cell.backend, harness::thread_counts(options).front()));
    if (const auto& server = cell.server)
      plan.cells.back().remote =
          remote::server_cell_remote(server->url, server->protocol, server->model, server->origin, plan.cells.back());
    plan.cell_names.push_back(cell.name);
    estimates_s.push_back(study::cell_estimate_s(options.scenario));
    estimate_s += estimates_s.back();
  }
  if (world.is_root())
    fmt::print("study {}: {} cells ({} models x backends x axes), at most ~{:.0f} min{}\n", study.name, cells.size(),
               study.models.size(), estimate_s / 60, o.search ? "; --search runs only the cells its walk visits" : "");
  if (o.dry_run) {
    if (distributed) {
      if (world.is_root())
        scaleout::print_assignment({study, cells, plan, estimates_s, o.search, o.p99_ms, o.per_host}, world.size());
      return 0;
    }
    for (const auto& cell : cells) fmt::print("  {:<14} {:<28} {}\n", cell.backend, cell.model, study::settings_text(cell));
    return 0;
  }
  if (o.max_duration_s > 0 && estimate_s > o.max_duration_s)
    throw Error(fmt::format("{}: the matrix could take up to {:.0f} s, more than --max-duration {:.0f} s; trim the axes",
                            o.study_file, estimate_s, o.max_duration_s));

  plan.output_dir = study::study_folder(o.out, study);
  plan.resume = !o.fresh;
  plan.cell_timeout_s = 0;
  for (const auto& cell : plan.cells)
    plan.cell_timeout_s = std::max(plan.cell_timeout_s, harness::default_cell_timeout_s(cell.scenario));
  plan.worker_memory_limit_mb = o.memory_limit_mb;
  plan.worker_argv = worker_argv;
  return scaleout::run_sweep_job({study, cells, plan, estimates_s, o.search, o.p99_ms, o.per_host}, world, registry,
                                 install_stop_handler());
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
