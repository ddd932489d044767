#include "scaleout/cpu_binding.hpp"

#include <sched.h>
#include <unistd.h>

namespace infermark::scaleout {

CpuBinding this_process_binding() {
  CpuBinding binding;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) binding.allowed = CPU_COUNT(&set);
  binding.online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  return binding;
}

std::string binding_warning(const CpuBinding& binding, int rank, const std::string& host) {
  if (binding.allowed <= 0 || binding.online <= 0 || binding.allowed >= binding.online) return "";
  return "rank " + std::to_string(rank) + " on " + host + " may run on " + std::to_string(binding.allowed) + " of " +
         std::to_string(binding.online) +
         " CPUs (the launcher bound it), and so may every cell it measures; to give each rank the whole machine, "
         "start one rank per host with mpirun --bind-to none (srun --cpu-bind=none)";
}

}  // namespace infermark::scaleout
