// A load measured from several MPI ranks at once (`mpirun -np N infermark load URL`): the job's
// collectives as the load generator's rank coordination.
#pragma once

#include "loadgen/rank_share.hpp"
#include "scaleout/mpi_world.hpp"

namespace infermark::scaleout {

// The collectives of `world` (all, sum, a common start, gather) for the load generator.
loadgen::RankCoordination coordination_of(World& world);

// Whether the run is recorded as ranks (with a "scaleout" section saying whether each kept up):
// several ranks, or one that an MPI launcher started (`mpirun -np 1`).
bool records_ranks(const World& world);

}  // namespace infermark::scaleout
