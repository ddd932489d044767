#!/bin/bash
# World's collectives across two "hosts": network namespaces on their own addresses, reached by
# Open MPI as remote nodes over TCP (tests/e2e/netns_cluster.sh). Skips (77) without root.
#   netns_mpi_probe.sh PROBE CLUSTER_ID
set -euo pipefail
probe="$1" id="$2"
here="$(cd "$(dirname "$0")" && pwd)"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
trap '"$here/netns_cluster.sh" down "$id"' EXIT
mapfile -t addresses < <("$here/netns_cluster.sh" up "$id" 2)
hostfile=$(mktemp)
trap '"$here/netns_cluster.sh" down "$id"; rm -f "$hostfile"' EXIT
printf '%s slots=1\n' "${addresses[@]}" > "$hostfile"
out=$(timeout 100 mpirun --allow-run-as-root -np 2 --hostfile "$hostfile" --mca plm_rsh_agent "$here/netns_cluster.sh agent" \
  --mca oob_tcp_if_include "10.78.$id.0/24" --mca btl tcp,self --mca btl_tcp_if_include "10.78.$id.0/24" "$probe")
echo "$out"
# Rank 0 runs on the first namespace, which names itself host-0.
grep -q "2 ranks on host-0: collectives agree" <<< "$out"
