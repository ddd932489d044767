// One scenario run by several processes (MPI ranks) at once: the share of the load each rank
// applies, and the points where the ranks act together (start, capacity probe, ramp steps).
// Nothing here calls MPI: the caller hands in its collectives (scaleout::World in the CLI).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loadgen/scenario.hpp"

namespace infermark::loadgen {

// The collectives a distributed scenario needs. Every rank calls them at the same points, in the
// same order; a rank that fails says so through `all` instead of skipping one.
struct RankCoordination {
  int rank = 0, ranks = 1;
  std::string host;
  std::function<bool(bool)> all;                                       // true when every rank passed true
  std::function<double(double)> sum;                                   // the ranks' values added
  std::function<void()> start_together;                                // barrier, then wait for one common instant
  std::function<std::vector<std::string>(const std::string&)> gather;  // rank 0 gets every rank's text
  bool distributed() const { return ranks > 1; }
};

// `total` split over `ranks`: rank r gets total / ranks, and one more when r < total % ranks.
std::uint64_t share_of_count(std::uint64_t total, int rank, int ranks);

// The seed rank `rank` draws its arrivals and samples from: rank 0 keeps `seed` (one rank runs as
// before), the others a well-mixed function of it, so their Poisson streams are independent.
std::uint64_t seed_for_rank(std::uint64_t seed, int rank);

// The part of `total` that rank `rank` of `ranks` runs: open-loop rates (server, rate ramp) divided
// by the ranks; closed-loop clients and max/min queries split with the remainder to the low ranks;
// the seed mixed with the rank. In-flight limits (open loop --concurrency), queues and warm-up are
// per rank. Soak and pulse keep their shares of capacity: the ranks sum their probes and each runs
// total / ranks (run_scenario does it). Throws infermark::Error naming the flag for what cannot be
// split: single-stream, fewer clients or queries than ranks, a client ramp step below the ranks,
// and --find-max-qps (refused: a trial's verdict needs every rank's latency merged first).
ScenarioSpec share_for_rank(const ScenarioSpec& total, int rank, int ranks);

// What rank `rank` adds to a ramp step of `level` clients.
int ramp_clients_for_rank(double level, int rank, int ranks);

}  // namespace infermark::loadgen
