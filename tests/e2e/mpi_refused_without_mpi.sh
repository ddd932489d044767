#!/bin/bash
# An infermark built without MPI, started by mpirun as two ranks, refuses (exit 2) and says how to
# build with MPI, instead of letting each rank run the whole job alone.
#   mpi_refused_without_mpi.sh MPIEXEC PROBE_BUILT_WITHOUT_MPI
set -uo pipefail
out=$("$1" -np 2 "$2" 2>&1)
code=$?
echo "$out"
echo "mpirun exit code: $code"
[ "$code" -eq 2 ] && grep -q 'started as 2 MPI ranks, but this infermark was built without MPI.*-DINFERMARK_WITH_MPI=ON' <<< "$out"
