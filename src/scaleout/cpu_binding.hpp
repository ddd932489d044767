// Whether the launcher pinned this rank to some of the machine's CPUs. mpirun binds each rank to
// one core by default (two ranks or fewer; a socket beyond), and the workers a sweep starts
// inherit it, so a 4-thread cell would measure on one core unless told --bind-to none.
#pragma once

#include <string>

namespace infermark::scaleout {

struct CpuBinding {
  int allowed = 0;  // CPUs this process may run on (sched_getaffinity)
  int online = 0;   // CPUs online on the machine
};

CpuBinding this_process_binding();

// "" when the process may use every online CPU (or a count is unknown), else the warning naming the
// rank, its host, the counts and how to unbind (mpirun --bind-to none, srun --cpu-bind=none).
std::string binding_warning(const CpuBinding& binding, int rank, const std::string& host);

}  // namespace infermark::scaleout
