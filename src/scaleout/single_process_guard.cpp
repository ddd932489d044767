#include "scaleout/single_process_guard.hpp"

#include <string>

#include "core/error.hpp"
#include "scaleout/mpi_world.hpp"

namespace infermark::scaleout {

void refuse_several_ranks(std::string_view command) {
  const int ranks = launched_ranks();
  if (ranks <= 1) return;
  throw Error("`" + std::string(command) + "` runs on one process, but this is one of " + std::to_string(ranks) +
              " MPI ranks (each would run it whole); to share work among ranks use `mpirun -np N infermark sweep STUDY.yaml` "
              "(cells spread over the ranks, or --per-host) or `mpirun -np N infermark load URL` (one load from several "
              "clients), or start it without mpirun");
}

}  // namespace infermark::scaleout
