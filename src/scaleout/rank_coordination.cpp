#include "scaleout/rank_coordination.hpp"

namespace infermark::scaleout {

loadgen::RankCoordination coordination_of(World& world) {
  loadgen::RankCoordination ranks;
  ranks.rank = world.rank();
  ranks.ranks = world.size();
  ranks.host = world.host();
  ranks.all = [&world](bool mine) { return world.all(mine); };
  ranks.sum = [&world](double mine) { return world.sum(mine); };
  ranks.start_together = [&world] { sleep_until(world.common_start_ns()); };
  ranks.gather = [&world](const std::string& mine) { return world.gather(mine); };
  return ranks;
}

bool records_ranks(const World& world) { return world.distributed() || launched_by_mpi(); }

}  // namespace infermark::scaleout
