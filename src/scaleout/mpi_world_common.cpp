// The parts of World that do not depend on MPI being built in.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/clock.hpp"
#include "scaleout/mpi_world.hpp"

namespace infermark::scaleout {
namespace {

int positive_env(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return (*end == '\0' && value > 0 && value < 1'000'000) ? static_cast<int>(value) : 0;
}

}  // namespace

int launched_ranks() {
  // Open MPI's mpirun; MPICH's Hydra and Slurm's PMI-2; Slurm with PMIx.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const int n = positive_env(name)) return n;
  if (std::getenv("PMIX_RANK") != nullptr)
    if (const int n = positive_env("SLURM_NTASKS")) return n;
  return 1;
}

bool launched_by_mpi() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK"); }

std::string this_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

void sleep_until(std::int64_t at_ns) {
  const auto left = at_ns - mono_now_ns();
  if (left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
}

}  // namespace infermark::scaleout
