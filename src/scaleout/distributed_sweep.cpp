#include "scaleout/distributed_sweep.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/markdown_table.hpp"
#include "harness/cross_check.hpp"
#include "scaleout/cpu_binding.hpp"
#include "study/cell_assignment.hpp"

namespace infermark::scaleout {
namespace {

using Finished = std::set<std::pair<int, std::size_t>>;  // (rank, cell) whose result rank 0 already holds

std::vector<std::vector<std::size_t>> cells_of_ranks(const DistributedSweep& sweep, int ranks) {
  if (sweep.spread == SweepSpread::kShareCells) return study::assign_cells(sweep.estimates_s, ranks);
  std::vector<std::vector<std::size_t>> every;
  for (const auto& names : sweep.rank_cell_names) {
    every.emplace_back(names.size());
    std::iota(every.back().begin(), every.back().end(), 0);
  }
  return every;
}

std::filesystem::path result_path(const DistributedSweep& sweep, const RankInfo& rank, std::size_t cell) {
  const auto& names = sweep.rank_cell_names.at(static_cast<std::size_t>(rank.rank));
  return results_folder(sweep.plan.output_dir, sweep.spread, rank.host) / (names.at(cell) + ".json");
}

bool holds_ok_result(const std::filesystem::path& path) {
  try {
    return std::filesystem::exists(path) && result::read_run_result(path.string()).status == result::CellStatus::kOk;
  } catch (const Error&) {
    return false;  // unreadable: measure it again
  }
}

// Rank 0's view, sent to every rank: the (rank, cell) pairs whose ok result its folders hold.
Finished finished_cells(World& world, const std::vector<RankInfo>& roster, const DistributedSweep& sweep,
                        const std::vector<std::vector<std::size_t>>& assignment) {
  nlohmann::json pairs = nlohmann::json::array();
  if (world.is_root() && sweep.plan.resume)
    for (std::size_t r = 0; r < assignment.size(); ++r)
      for (const auto cell : assignment[r])
        if (holds_ok_result(result_path(sweep, roster[r], cell))) pairs.push_back({r, cell});
  Finished finished;
  for (const auto& pair : nlohmann::json::parse(world.broadcast(pairs.dump())))
    finished.insert({pair.at(0).get<int>(), pair.at(1).get<std::size_t>()});
  return finished;
}

// Runs one cell as a plain sweep would, in `folder` (rank 0: the study folder; others: staging).
harness::CellOutcome run_cell(const DistributedSweep& sweep, std::size_t cell, const std::filesystem::path& folder,
                              const BackendRegistry& registry, const std::atomic<bool>& stop) {
  auto one = sweep.plan;
  one.cells = {sweep.plan.cells.at(cell)};
  one.cell_names = {sweep.plan.cell_names.at(cell)};
  one.output_dir = folder;
  auto outcomes = harness::run_comparison(one, registry, stop);
  if (outcomes.empty()) {  // stopped before it began: nothing to send
    harness::CellOutcome none;
    none.result_path.clear();
    return none;
  }
  return std::move(outcomes.front());
}

void record_rank(result::RunResult& result, const RankInfo& rank, int ranks, SweepSpread spread) {
  if (!result.environment.is_object()) result.environment = nlohmann::json::object();
  const auto binding = this_process_binding();
  result.environment["scaleout"] = {
      {"rank", rank.rank}, {"ranks", ranks}, {"host", rank.host}, {"spread", name_of(spread)}, {"cpus_allowed", binding.allowed}};
}

// Every result rank 0's folders hold for the plan's cells, per rank (host), then in study order.
std::vector<harness::CellOutcome> saved_outcomes(const DistributedSweep& sweep, const std::vector<RankInfo>& roster,
                                                 const std::vector<std::vector<std::size_t>>& assignment) {
  std::vector<std::pair<std::size_t, std::filesystem::path>> paths;  // (cell, path)
  for (std::size_t r = 0; r < assignment.size(); ++r) {
    std::vector<std::pair<std::size_t, std::filesystem::path>> mine;
    for (const auto cell : assignment[r]) mine.emplace_back(cell, result_path(sweep, roster[r], cell));
    std::sort(mine.begin(), mine.end());
    paths.insert(paths.end(), mine.begin(), mine.end());
  }
  if (sweep.spread == SweepSpread::kShareCells) std::sort(paths.begin(), paths.end());
  std::vector<harness::CellOutcome> outcomes;
  for (const auto& [cell, path] : paths) {
    if (!std::filesystem::exists(path)) continue;  // not run: the sweep was stopped
    harness::CellOutcome outcome;
    outcome.result_path = path;
    try {
      outcome.result = result::read_run_result(path.string());
    } catch (const Error& e) {
      fmt::print(stderr, "infermark: {}\n", e.what());
      continue;
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

// Agreement of outputs across the cells whose saved outputs this host can read (all of them when
// the ranks share a host or a file system), within each host's results.
void cross_check_reachable(std::vector<harness::CellOutcome>& outcomes, const std::string& reference) {
  std::map<std::filesystem::path, std::vector<harness::CellOutcome*>> by_folder;
  for (auto& o : outcomes)
    if (o.result.outputs_dir.empty() || std::filesystem::exists(o.result.outputs_dir))
      by_folder[o.result_path.parent_path()].push_back(&o);
  for (auto& [folder, group] : by_folder) {
    std::vector<harness::CellOutcome> copies;
    for (const auto* o : group) copies.push_back(*o);
    try {
      harness::cross_check_outputs(copies, reference);
    } catch (const Error& e) {
      fmt::print(stderr, "infermark: {}: outputs not compared: {}\n", folder.string(), e.what());
      continue;
    }
    for (std::size_t i = 0; i < group.size(); ++i) *group[i] = std::move(copies[i]);
  }
}

}  // namespace

std::vector<std::vector<std::string>> gather_cell_names(World& world, const std::vector<std::string>& mine) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& text : world.gather(nlohmann::json(mine).dump())) all.push_back(nlohmann::json::parse(text));
  return nlohmann::json::parse(world.broadcast(all.dump())).get<std::vector<std::vector<std::string>>>();
}

std::string different_cells_error(const std::vector<std::vector<std::string>>& rank_cell_names,
                                  const std::vector<RankInfo>& roster) {
  for (std::size_t r = 1; r < rank_cell_names.size(); ++r) {
    const auto& first = rank_cell_names.front();
    const auto& other = rank_cell_names[r];
    if (other == first) continue;
    const auto host = r < roster.size() ? " on " + roster[r].host : "";
    std::string difference = std::to_string(other.size()) + " cells against rank 0's " + std::to_string(first.size());
    for (std::size_t i = 0; i < std::min(first.size(), other.size()); ++i)
      if (first[i] != other[i]) {
        difference = "cell " + std::to_string(i + 1) + " is " + other[i] + " there, " + first[i] + " on rank 0";
        break;
      }
    return "rank " + std::to_string(r) + host + " expands the study to other cells than rank 0 (" + difference +
           "): threads given as a multiple of the cores (\"1.5x\") on hosts with different core counts, or other "
           "backends built; give threads as numbers and the backends by name, or run the whole study on each host "
           "with --per-host";
  }
  return "";
}

std::string_view name_of(SweepSpread spread) { return spread == SweepSpread::kPerHost ? "per host" : "share cells"; }

std::filesystem::path results_folder(const std::filesystem::path& study_folder, SweepSpread spread, const std::string& host) {
  return spread == SweepSpread::kPerHost ? study::per_host_folder(study_folder, host) : study_folder;
}

std::filesystem::path staging_folder(const std::filesystem::path& study_folder, int rank) {
  // FNV-1a of the study folder's absolute path: stable across reruns, apart for two studies.
  std::uint64_t hash = 1469598103934665603ULL;
  for (const unsigned char c : std::filesystem::absolute(study_folder).lexically_normal().string())
    hash = (hash ^ c) * 1099511628211ULL;
  return std::filesystem::temp_directory_path() /
         fmt::format("infermark-sweep-{}-{:016x}", study_folder.filename().string(), hash) / ("rank-" + std::to_string(rank));
}

DistributedSweepOutcome run_distributed_sweep(World& world, const std::vector<RankInfo>& roster, const DistributedSweep& sweep,
                                              const BackendRegistry& registry, const std::atomic<bool>& stop,
                                              const DistributedCellCallback& on_cell) {
  const auto assignment = cells_of_ranks(sweep, world.size());
  const auto finished = finished_cells(world, roster, sweep, assignment);
  const auto& me = roster.at(static_cast<std::size_t>(world.rank()));
  std::vector<std::size_t> todo;
  for (const auto cell : assignment[static_cast<std::size_t>(world.rank())])
    if (!finished.count({world.rank(), cell})) todo.push_back(cell);

  DistributedSweepOutcome result;
  for (std::size_t r = 0; r < assignment.size(); ++r) {
    RankShare share{roster[r], assignment[r].size(), 0, 0};
    for (const auto cell : assignment[r]) share.already_measured += finished.count({static_cast<int>(r), cell});
    result.shares.push_back(share);
  }
  const auto own_folder = world.is_root() ? results_folder(sweep.plan.output_dir, sweep.spread, me.host)
                                          : staging_folder(sweep.plan.output_dir, world.rank());
  const auto rounds = static_cast<std::size_t>(world.max(static_cast<double>(todo.size())));
  for (std::size_t round = 0; round < rounds; ++round) {
    std::string sent;  // this round's result as JSON text, "" when this rank ran nothing
    if (round < todo.size() && !stop.load()) {
      auto outcome = run_cell(sweep, todo[round], own_folder, registry, stop);
      if (!outcome.result_path.empty()) {
        record_rank(outcome.result, me, world.size(), sweep.spread);
        harness::save_result(outcome);  // again, with the rank recorded (a staged copy for a rerun)
        sent = nlohmann::json{{"cell", todo[round]}, {"result", result::to_json(outcome.result)}}.dump();
        if (world.is_root()) {
          if (!outcome.save_error.empty()) fmt::print(stderr, "infermark: {}\n", outcome.save_error);
          ++result.shares[0].ran;
          if (on_cell) on_cell(sweep.plan.cell_names.at(todo[round]), me, outcome);
          sent.clear();  // already in its place
        }
      }
    }
    world.idle_barrier();  // ranks done early wait here without spinning a core
    const auto received = world.gather(sent);
    for (std::size_t r = 1; r < received.size(); ++r) {
      if (received[r].empty()) continue;
      const auto message = nlohmann::json::parse(received[r]);
      const auto cell = message.at("cell").get<std::size_t>();
      harness::CellOutcome outcome;
      outcome.result_path = result_path(sweep, roster[r], cell);
      outcome.result = result::run_result_from_json(message.at("result"), "rank " + std::to_string(r) + "'s result");
      std::filesystem::create_directories(outcome.result_path.parent_path());
      harness::save_result(outcome);
      if (!outcome.save_error.empty()) fmt::print(stderr, "infermark: {}\n", outcome.save_error);
      ++result.shares[r].ran;
      if (on_cell) on_cell(sweep.rank_cell_names.at(r).at(cell), roster[r], outcome);
    }
    if (!world.all(!stop.load())) {
      result.stopped = true;
      break;
    }
  }
  if (world.is_root()) {
    result.outcomes = saved_outcomes(sweep, roster, assignment);
    cross_check_reachable(result.outcomes, sweep.plan.reference_backend);
  } else {
    result.shares.clear();
  }
  world.barrier();  // rank 0 has read the staged outputs it could reach
  if (!world.is_root() && !result.stopped) {
    std::error_code ignored;
    const auto staging = staging_folder(sweep.plan.output_dir, world.rank());
    std::filesystem::remove_all(staging, ignored);
    std::filesystem::remove(staging.parent_path(), ignored);  // once the host's last rank is done: empty
  }
  return result;
}

std::string ranks_summary(const std::vector<RankShare>& shares, SweepSpread spread) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : shares)
    rows.push_back({std::to_string(s.rank.rank), s.rank.host, std::to_string(s.assigned), std::to_string(s.ran),
                    std::to_string(s.already_measured)});
  return fmt::format(
      "## Ranks\n\n{} MPI ranks, {}: {}.\n\n{}\n", shares.size(), name_of(spread),
      spread == SweepSpread::kPerHost ? "every rank ran the whole study; each host's results are in its own folder"
                                      : "each cell ran once, on one rank (longest estimate first, dealt round-robin)",
      markdown_table({{"rank", true}, {"host"}, {"cells", true}, {"measured now", true}, {"measured before", true}}, rows));
}

}  // namespace infermark::scaleout
