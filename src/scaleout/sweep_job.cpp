#include "scaleout/sweep_job.hpp"

#include <fmt/core.h>

#include <map>
#include <optional>

#include "core/error.hpp"
#include "core/model_name.hpp"
#include "harness/cross_check.hpp"
#include "harness/unsaved_results.hpp"
#include "report/markdown_report.hpp"
#include "report/study_summary.hpp"
#include "scaleout/cpu_binding.hpp"
#include "scaleout/distributed_sweep.hpp"
#include "scaleout/rank_roster.hpp"
#include "study/cell_assignment.hpp"
#include "study/config_search.hpp"
#include "study/study_lock.hpp"
#include "study/study_search.hpp"

namespace infermark::scaleout {
namespace {

SweepSpread spread_of(const SweepJob& job) { return job.per_host ? SweepSpread::kPerHost : SweepSpread::kShareCells; }

int finish(const std::string& summary, const std::filesystem::path& folder, const std::vector<harness::CellOutcome>& outcomes,
           const std::atomic<bool>& stop, bool failed) {
  int exit_code = failed ? 1 : 0;
  if (!harness::write_text_file(folder / "summary.md", summary)) exit_code = 1;
  fmt::print("\n{}\nresults and summary.md: {}\n", summary, folder.string());
  harness::report_unsaved_results(outcomes, exit_code);
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
int search(const SweepJob& job, const BackendRegistry& registry, const std::atomic<bool>& stop) {
  const auto& study = job.study;
  const auto& cells = job.cells;
  const auto& plan = job.plan;
  const double p99_ms = job.p99_ms;
  std::vector<harness::CellOutcome> ran;
  study::search_study(study, cells.size(), p99_ms, [&](std::size_t index) -> std::optional<result::RunResult> {
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
                                            score.p99_ms <= p99_ms ? "" : " (over the target)")
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
      study::summary_header(study) + report::search_summary(results, cells.size(), p99_ms) + report::markdown_report(results);
  return finish(summary, plan.output_dir, ran, stop, failed || !report::search_found(results, p99_ms));
}

// Which rank runs which cell, for --dry-run.
void print_assignment_of(const SweepJob& job, int ranks) {
  const auto& cells = job.cells;
  if (job.per_host) {
    fmt::print("--per-host: each of the {} ranks runs every cell, on its own host\n", ranks);
    return;
  }
  const auto shares = study::assign_cells(job.estimates_s, ranks);
  for (std::size_t r = 0; r < shares.size(); ++r) {
    fmt::print("rank {}: {} cells\n", r, shares[r].size());
    for (const auto cell : shares[r])
      fmt::print("  {:<14} {:<28} {}\n", cells[cell].backend, cells[cell].model, study::settings_text(cells[cell]));
  }
}

// summary.md over every rank's results: the ranks, then the study's conclusions (per host with
// --per-host, since a best thread count belongs to one machine), then the tables by machine.
std::string distributed_summary(const study::Study& study, const DistributedSweepOutcome& done, SweepSpread spread) {
  std::vector<std::string> axis_flags;
  for (const auto& axis : study.axes) axis_flags.push_back(axis.flag);
  const auto results = loaded(done.outcomes);
  auto text = study::summary_header(study) + ranks_summary(done.shares, spread);
  if (spread == SweepSpread::kShareCells) {
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
std::string distributed_refusal(bool per_host, World& world, std::vector<RankInfo>& roster, DistributedSweep& sweep,
                                std::optional<study::StudyFolderLock>& lock) {
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
    roster = gather_roster(world);
  } catch (const Error& e) {
    return e.what();
  }
  if (per_host) {
    std::vector<std::string> hosts;
    for (const auto& rank : roster) hosts.push_back(rank.host);
    if (auto shared = study::shared_host_error(hosts); !shared.empty()) return shared;
  }
  sweep.rank_cell_names = gather_cell_names(world, sweep.plan.cell_names);
  return per_host ? "" : different_cells_error(sweep.rank_cell_names, roster);
}

// The sweep on several ranks (or --per-host on one). Every rank runs this; rank 0 writes.
int distributed_sweep(bool per_host, World& world, const study::Study& study, DistributedSweep sweep,
                      const BackendRegistry& registry, const std::atomic<bool>& stop) {
  std::vector<RankInfo> roster;
  std::optional<study::StudyFolderLock> lock;
  if (const auto refusal = distributed_refusal(per_host, world, roster, sweep, lock); !refusal.empty()) {
    if (world.is_root()) throw Error(refusal);
    return 2;  // rank 0 says why
  }
  if (const auto warning = binding_warning(this_process_binding(), world.rank(), world.host()); !warning.empty())
    fmt::print(stderr, "infermark: warning: {}\n", warning);
  if (world.is_root())
    fmt::print("{} ranks on {}; results gather in {}\n", world.size(),
               per_host ? "their own hosts (--per-host)" : "a share of the cells each", sweep.plan.output_dir.string());
  int exit_code = 0;
  try {
    std::size_t done_cells = 0;
    const auto done =
        run_distributed_sweep(world, roster, sweep, registry, stop,
                              [&](const std::string& cell_name, const RankInfo& ran_on, const harness::CellOutcome& outcome) {
                                fmt::print("[{} measured; rank {} on {}] {:<52} {}\n", ++done_cells, ran_on.rank, ran_on.host,
                                           cell_name, result::name_of(outcome.result.status));
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

}  // namespace

void print_assignment(const SweepJob& job, int ranks) { print_assignment_of(job, ranks); }

int run_sweep_job(const SweepJob& job, World& world, const BackendRegistry& registry, const std::atomic<bool>& stop) {
  const auto& study = job.study;
  const auto& cells = job.cells;
  const auto& plan = job.plan;
  if (world.distributed() || job.per_host)
    return distributed_sweep(job.per_host, world, study, {plan, job.estimates_s, spread_of(job), {}}, registry, stop);
  // Held until the sweep returns, and by its workers while they live: see study/study_lock.hpp.
  const study::StudyFolderLock lock(plan.output_dir);
  if (job.search) return search(job, registry, stop);
  std::size_t done = 0;
  const auto outcomes = harness::run_comparison(plan, registry, stop, [&](const harness::CellOutcome& outcome) {
    const auto& cell = cells[done++];
    // The model is named where the study has several, so each line says which cell it was.
    const auto model = study.models.size() > 1 ? model_name(cell.model) + " " : "";
    fmt::print("[{}/{}] {:<14} {}{:<40} {}\n", done, cells.size(), outcome.result.backend.name, model, study::settings_text(cell),
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

}  // namespace infermark::scaleout
