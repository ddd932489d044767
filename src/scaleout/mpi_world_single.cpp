// World without MPI built in: a world of one, and a clear refusal when an MPI launcher started
// several ranks (each would otherwise run the whole job alone and write over the others).
#include <cstdlib>
#include <string>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "scaleout/mpi_world.hpp"

namespace infermark::scaleout {

bool built_with_mpi() { return false; }

World& World::get() {
  static World world;
  return world;
}

World::World() : host_(this_host_name()) {
  if (const int ranks = launched_ranks(); ranks > 1)
    throw Error("started as " + std::to_string(ranks) +
                " MPI ranks, but this infermark was built without MPI: install Open MPI or MPICH (scripts/setup "
                "installs Open MPI) and configure with -DINFERMARK_WITH_MPI=ON (or AUTO, the default)");
}

World::~World() = default;
void World::barrier() {}
void World::idle_barrier(double) {}
std::vector<std::string> World::gather(const std::string& mine) { return {mine}; }
std::string World::broadcast(const std::string& from_root) { return from_root; }
double World::sum(double mine) { return mine; }
double World::max(double mine) { return mine; }
bool World::all(bool mine) { return mine; }
std::int64_t World::common_start_ns(double lead_s) { return mono_now_ns() + static_cast<std::int64_t>(lead_s * 1e9); }
void World::abort(int exit_code) { std::exit(exit_code); }

}  // namespace infermark::scaleout
