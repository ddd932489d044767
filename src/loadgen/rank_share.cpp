#include "loadgen/rank_share.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/random.hpp"
#include "loadgen/trace.hpp"

namespace infermark::loadgen {
namespace {

std::string ranks_text(int ranks) { return std::to_string(ranks) + " ranks"; }

// Closed-loop clients split over the ranks; each rank needs one at least.
int split_clients(int clients, int rank, int ranks, const std::string& flag) {
  if (clients < ranks)
    throw Error(flag + " " + std::to_string(clients) + ": fewer clients than the " + ranks_text(ranks) +
                " (each rank needs at least one); use more clients or fewer ranks");
  return static_cast<int>(share_of_count(static_cast<std::uint64_t>(clients), rank, ranks));
}

}  // namespace

std::uint64_t share_of_count(std::uint64_t total, int rank, int ranks) {
  const auto n = static_cast<std::uint64_t>(ranks), r = static_cast<std::uint64_t>(rank);
  return total / n + (r < total % n ? 1 : 0);
}

std::uint64_t seed_for_rank(std::uint64_t seed, int rank) {
  if (rank == 0) return seed;
  SeededRandom mix(seed ^ (static_cast<std::uint64_t>(rank) * 0xD1B54A32D192ED03ull));
  return mix.next();
}

int ramp_clients_for_rank(double level, int rank, int ranks) {
  return split_clients(static_cast<int>(level), rank, ranks, "--ramp-start/--ramp-step (a ramp step's clients)");
}

ScenarioSpec share_for_rank(const ScenarioSpec& total, int rank, int ranks) {
  if (ranks <= 1) return total;
  if (rank < 0 || rank >= ranks) throw Error("rank " + std::to_string(rank) + " outside 0.." + std::to_string(ranks - 1));
  ScenarioSpec share = total;
  share.seed = seed_for_rank(total.seed, rank);
  switch (total.name) {
    case Scenario::kSingleStream:
      throw Error("--scenario single-stream is one client and cannot be split over " + ranks_text(ranks) +
                  ": run it with one rank, or use --scenario concurrency --concurrency N to split N clients");
    case Scenario::kConcurrency:
    case Scenario::kOffline:
      // Offline without --concurrency: every rank keeps its own default (its host's cores).
      if (total.concurrency > 0) share.concurrency = split_clients(total.concurrency, rank, ranks, "--concurrency");
      if (total.max_queries > 0) {
        if (total.max_queries < static_cast<std::uint64_t>(ranks))
          throw Error("--runs " + std::to_string(total.max_queries) + ": fewer queries than the " + ranks_text(ranks));
        share.max_queries = share_of_count(total.max_queries, rank, ranks);
      }
      share.min_queries = std::max<std::uint64_t>(1, share_of_count(total.min_queries, rank, ranks));
      break;
    case Scenario::kServer:
    case Scenario::kInteractive:
      if (total.find_max_qps)
        throw Error("--find-max-qps cannot run over " + ranks_text(ranks) +
                    " (each trial's verdict needs every rank's latency merged): run it with one rank, or --qps R over several");
      share.qps = total.qps / ranks;
      break;
    case Scenario::kRamp:
      if (total.ramp_by == RampBy::kRate) {
        share.ramp_step = total.ramp_step / ranks;
        share.ramp_start = total.ramp_start / ranks;
      } else {
        RampConfig levels;
        levels.step = total.ramp_step;
        levels.start = total.ramp_start;
        levels.steps = total.ramp_steps;
        for (const double level : ramp_levels(levels)) ramp_clients_for_rank(level, rank, ranks);  // refuses a step too small
      }
      break;
    case Scenario::kSoak:
    case Scenario::kPulse:
      break;                 // sized by the ranks' summed capacity probe in run_scenario
    case Scenario::kReplay:  // every rank reads the whole trace and sends its share of the requests (run_replay)
      if (const auto requests = load_trace(total.trace)->requests.size(); requests < static_cast<std::size_t>(ranks))
        throw Error("--trace " + total.trace.file + ": " + std::to_string(requests) + " requests, fewer than the " +
                    ranks_text(ranks));
      break;
  }
  return share;
}

}  // namespace infermark::loadgen
