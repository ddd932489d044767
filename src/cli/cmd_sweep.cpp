// `infermark sweep STUDY.yaml`: runs every cell of a study, each isolated in a worker, into a
// stable folder so an interrupted sweep resumes where it stopped; writes a summary at the end.
// With --search, runs only the cells a guided search visits (see study/config_search.hpp). Under
// MPI (`mpirun -np N infermark sweep ...`) the ranks share the cells out, or with --per-host each
// runs them all (see scaleout/distributed_sweep.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <optional>

#include "cli/commands.hpp"
#include "cli/run_flags.hpp"
#include "cli/stop_signal.hpp"
#include "cli/sweep_command.hpp"
#include "cli/unsaved_results.hpp"
#include "cli/worker_launch.hpp"
#include "core/error.hpp"
#include "harness/comparison.hpp"
#include "harness/cross_check.hpp"
#include "pipeline/pipeline_file.hpp"
#include "remote/load_request.hpp"
#include "report/markdown_report.hpp"
#include "report/study_summary.hpp"
#include "scaleout/cpu_binding.hpp"
#include "scaleout/distributed_sweep.hpp"
#include "scaleout/rank_roster.hpp"
#include "study/cell_assignment.hpp"
#include "study/config_search.hpp"
#include "study/study.hpp"
#include "study/study_lock.hpp"
#include "study/study_search.hpp"

namespace infermark::cli {
namespace {

scaleout::SweepSpread spread_of(const SweepOptions& o) {
  return o.per_host ? scaleout::SweepSpread::kPerHost : scaleout::SweepSpread::kShareCells;
}

int finish(const std::string& summary, const std::filesystem::path& folder, const std::vector<harness::CellOutcome>& outcomes,
           const std::atomic<bool>& stop, bool failed) {
  int exit_code = failed ? 1 : 0;
  if (!write_text_file(folder / "summary.md", summary)) exit_code = 1;
  fmt::print("\n{}\nresults and summary.md: {}\n", summary, folder.string());
  report_unsaved_results(outcomes, exit_code);
  if (stop.load()) {
    fmt::print(stderr, "infermark: interrupted; rerun the same command to resume\n");
    return 130;
  }
  return exit_code;
}

std::vector<report::LoadedResult> loaded(const std::vector<harness::CellOutcome>& outcomes) {
  std::vector<report::LoadedResult> results;
  for (const auto& outcome : outcomes) results.push_back({outcome.result, outcome.result_path.string()});
  return results;
}

// The guided search (study/study_search.hpp), each visited cell run exactly as the sweep runs it.
int search(const SweepOptions& o, const study::Study& study, const std::vector<study::StudyCell>& cells,
           const harness::ComparisonPlan& plan, const BackendRegistry& registry, const std::atomic<bool>& stop) {
  std::vector<harness::CellOutcome> ran;
  study::search_study(study, cells.size(), o.p99_ms, [&](std::size_t index) -> std::optional<result::RunResult> {
    auto one = plan;
    one.cells = {plan.cells[index]};
    one.cell_names = {plan.cell_names[index]};
    const auto outcome = harness::run_comparison(one, registry, stop);
    if (outcome.empty()) return std::nullopt;  // interrupted
    ran.push_back(outcome.front());
    const auto& r = outcome.front().result;
    const auto score = study::score_of(r);
    fmt::print("[search {}] {:<14} {:<40} {}{}\n", ran.size(), r.backend.name, study::settings_text(cells[index]),
               result::name_of(r.status),
               score.measured ? fmt::format(", {:.1f} inferences/s, P99 {:.2f} ms{}", score.throughput, score.p99_ms,
                                            score.p99_ms <= o.p99_ms ? "" : " (over the target)")
                              : "");
    std::fflush(stdout);
    return r;
  });
  // Agreement against one reference across every cell run (each single-cell run checked only itself).
  harness::cross_check_outputs(ran, plan.reference_backend);
  const auto results = loaded(ran);
  bool failed = results.empty();
  for (const auto& r : results) failed = failed || r.result.status != result::CellStatus::kOk;
  const auto summary =
      study::summary_header(study) + report::search_summary(results, cells.size(), o.p99_ms) + report::markdown_report(results);
  return finish(summary, plan.output_dir, ran, stop, failed || !report::search_found(results, o.p99_ms));
}

// Which rank runs which cell, for --dry-run.
void print_assignment(const SweepOptions& o, const std::vector<study::StudyCell>& cells, const std::vector<double>& estimates_s,
                      int ranks) {
  if (o.per_host) {
    fmt::print("--per-host: each of the {} ranks runs every cell, on its own host\n", ranks);
    return;
  }
  const auto shares = study::assign_cells(estimates_s, ranks);
  for (std::size_t r = 0; r < shares.size(); ++r) {
    fmt::print("rank {}: {} cells\n", r, shares[r].size());
    for (const auto cell : shares[r])
      fmt::print("  {:<14} {:<28} {}\n", cells[cell].backend, cells[cell].model, study::settings_text(cells[cell]));
  }
}

// summary.md over every rank's results: the ranks, then the study's conclusions (per host with
// --per-host, since a best thread count belongs to one machine), then the tables by machine.
std::string distributed_summary(const study::Study& study, const scaleout::DistributedSweepOutcome& done,
                                scaleout::SweepSpread spread) {
  std::vector<std::string> axis_flags;
  for (const auto& axis : study.axes) axis_flags.push_back(axis.flag);
  const auto results = loaded(done.outcomes);
  auto text = study::summary_header(study) + scaleout::ranks_summary(done.shares, spread);
  if (spread == scaleout::SweepSpread::kShareCells) {
    text += report::study_summary(results, axis_flags);
  } else {
    std::map<std::filesystem::path, std::vector<report::LoadedResult>> by_host;  // results folder -> its results
    for (const auto& r : results) by_host[std::filesystem::path(r.path).parent_path()].push_back(r);
    for (const auto& [folder, host_results] : by_host)
      text += "## Host " + folder.filename().string() + "\n\n" + report::study_summary(host_results, axis_flags);
  }
  return text + report::markdown_report(results);
}

// Why the ranks cannot run this sweep together, or "": builds that differ, two ranks on one host
// under --per-host, ranks that expand the study to other cells, rank 0's study folder held by
// another sweep. Every rank reaches the same verdict from what was broadcast. Fills `roster`,
// `sweep`'s cell names of every rank and, on rank 0, `lock`.
std::string distributed_refusal(const SweepOptions& o, scaleout::World& world, std::vector<scaleout::RankInfo>& roster,
                                scaleout::DistributedSweep& sweep, std::optional<study::StudyFolderLock>& lock) {
  std::string locked;  // rank 0 alone writes the study folder, so it alone locks it
  if (world.is_root()) {
    try {
      lock.emplace(sweep.plan.output_dir);
    } catch (const Error& e) {
      locked = e.what();
    }
  }
  if (auto refusal = world.broadcast(locked); !refusal.empty()) return refusal;
  try {
    roster = scaleout::gather_roster(world);
  } catch (const Error& e) {
    return e.what();
  }
  if (o.per_host) {
    std::vector<std::string> hosts;
    for (const auto& rank : roster) hosts.push_back(rank.host);
    if (auto shared = study::shared_host_error(hosts); !shared.empty()) return shared;
  }
  sweep.rank_cell_names = scaleout::gather_cell_names(world, sweep.plan.cell_names);
  return o.per_host ? "" : scaleout::different_cells_error(sweep.rank_cell_names, roster);
}

// The sweep on several ranks (or --per-host on one). Every rank runs this; rank 0 writes.
int distributed_sweep(const SweepOptions& o, scaleout::World& world, const study::Study& study, scaleout::DistributedSweep sweep,
                      const BackendRegistry& registry, const std::atomic<bool>& stop) {
  std::vector<scaleout::RankInfo> roster;
  std::optional<study::StudyFolderLock> lock;
  if (const auto refusal = distributed_refusal(o, world, roster, sweep, lock); !refusal.empty()) {
    if (world.is_root()) throw Error(refusal);
    return 2;  // rank 0 says why
  }
  if (const auto warning = scaleout::binding_warning(scaleout::this_process_binding(), world.rank(), world.host());
      !warning.empty())
    fmt::print(stderr, "infermark: warning: {}\n", warning);
  if (world.is_root())
    fmt::print("{} ranks on {}; results gather in {}\n", world.size(),
               o.per_host ? "their own hosts (--per-host)" : "a share of the cells each", sweep.plan.output_dir.string());
  int exit_code = 0;
  try {
    std::size_t done_cells = 0;
    const auto done = scaleout::run_distributed_sweep(
        world, roster, sweep, registry, stop,
        [&](const std::string& cell_name, const scaleout::RankInfo& ran_on, const harness::CellOutcome& outcome) {
          fmt::print("[{} measured; rank {} on {}] {:<52} {}\n", ++done_cells, ran_on.rank, ran_on.host, cell_name,
                     result::name_of(outcome.result.status));
          std::fflush(stdout);
        });
    if (world.is_root()) {
      bool failed = done.outcomes.empty();
      for (const auto& outcome : done.outcomes) failed = failed || outcome.result.status != result::CellStatus::kOk;
      exit_code = finish(distributed_summary(study, done, sweep.spread), sweep.plan.output_dir, done.outcomes, stop, failed);
      if (done.stopped && exit_code != 130) {
        fmt::print(stderr, "infermark: a rank was stopped; rerun the same command to resume\n");
        exit_code = 130;
      }
    }
  } catch (const std::exception& e) {
    // One rank alone cannot go on, and the others would wait for it in a collective forever.
    fmt::print(stderr, "infermark: rank {} on {}: {}\n", world.rank(), world.host(), e.what());
    std::fflush(stderr);
    world.abort(2);
  }
  // Every rank ends with rank 0's verdict, so mpirun's exit code is the sweep's.
  return std::stoi(world.broadcast(std::to_string(exit_code)));
}

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
      if (world.is_root()) print_assignment(o, cells, estimates_s, world.size());
      return 0;
    }
    for (const auto& cell : cells) fmt::print("  {:<14} {:<28} {}\n", cell.backend, cell.model, study::settings_text(cell));
    return 0;
  }
  if (o.max_duration_s > 0 && estimate_s > o.max_duration_s)
    throw Error(fmt::format("{}: the matrix could take up to {:.0f} s, more than --max-duration {:.0f} s; trim the axes",
                            o.study_file, estimate_s, o.max_duration_s));

  const auto& stop = install_stop_handler();
  plan.output_dir = study::study_folder(o.out, study);
  plan.resume = !o.fresh;
  plan.cell_timeout_s = 0;
  for (const auto& cell : plan.cells)
    plan.cell_timeout_s = std::max(plan.cell_timeout_s, harness::default_cell_timeout_s(cell.scenario));
  plan.worker_memory_limit_mb = o.memory_limit_mb;
  plan.worker_argv = worker_argv;
  if (distributed) return distributed_sweep(o, world, study, {plan, estimates_s, spread_of(o), {}}, registry, stop);
  // Held until the sweep returns, and by its workers while they live: see study/study_lock.hpp.
  const study::StudyFolderLock lock(plan.output_dir);
  if (o.search) return search(o, study, cells, plan, registry, stop);
  std::size_t done = 0;
  const auto outcomes = harness::run_comparison(plan, registry, stop, [&](const harness::CellOutcome& outcome) {
    const auto& cell = cells[done++];
    fmt::print("[{}/{}] {:<14} {:<40} {}\n", done, cells.size(), outcome.result.backend.name, study::settings_text(cell),
               result::name_of(outcome.result.status));
    std::fflush(stdout);
  });

  const auto results = loaded(outcomes);
  std::vector<std::string> axis_flags;
  for (const auto& axis : study.axes) axis_flags.push_back(axis.flag);
  bool failed = false;
  for (const auto& outcome : outcomes) failed = failed || outcome.result.status != result::CellStatus::kOk;
  return finish(study::summary_header(study) + report::study_summary(results, axis_flags) + report::markdown_report(results),
                plan.output_dir, outcomes, stop, failed);
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
