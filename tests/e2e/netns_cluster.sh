#!/bin/bash
# Linux network namespaces joined by veth pairs to a bridge stand in for separate hosts: each
# "host" has its own network stack, address and (through a UTS namespace per process) host name.
# Open MPI reaches them as remote nodes through this script as its remote-shell agent, so ranks
# talk over TCP between the addresses, as on a real cluster. Root only.
#
#   netns_cluster.sh up ID HOSTS   bridge imc<ID>br (10.78.ID.1/24) and namespaces imc<ID>h<k>
#                                  (10.78.ID.(10+k)), k = 0..HOSTS-1; prints one address per line
#   netns_cluster.sh down ID       removes them (also what `up` does first)
#   netns_cluster.sh agent HOST CMD...   Open MPI's plm_rsh_agent: runs CMD in HOST's namespace
#                                  with host name host-<k>, as ssh would run it on HOST
#   netns_cluster.sh exec ID K CMD...    runs CMD in host K's namespace (e.g. a server)
set -euo pipefail

namespace_of() { echo "imc${1}h${2}"; }

down() {
  local id="$1"
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^imc${id}h[0-9]+$" || true); do ip netns del "$ns"; done
  ip link del "imc${id}br" 2>/dev/null || true
}

up() {
  local id="$1" hosts="$2"
  [ "$(id -u)" -eq 0 ] || { echo "netns_cluster.sh: needs root (network namespaces)" >&2; exit 77; }
  down "$id"
  ip link add "imc${id}br" type bridge
  ip addr add "10.78.${id}.1/24" dev "imc${id}br"
  ip link set "imc${id}br" up
  for ((k = 0; k < hosts; k++)); do
    local ns; ns=$(namespace_of "$id" "$k")
    ip netns add "$ns"
    ip link add "imc${id}v${k}" type veth peer name eth0 netns "$ns"
    ip link set "imc${id}v${k}" master "imc${id}br"
    ip link set "imc${id}v${k}" up
    ip -n "$ns" addr add "10.78.${id}.$((10 + k))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    echo "10.78.${id}.$((10 + k))"
  done
}

# ssh's calling convention: options first, then the host, then the command as words a shell joins.
agent() {
  while [[ "${1:-}" == -* ]]; do shift; done
  local address="$1"; shift
  local id k
  id=$(echo "$address" | cut -d. -f3)
  k=$(( $(echo "$address" | cut -d. -f4) - 10 ))
  exec ip netns exec "$(namespace_of "$id" "$k")" unshare --uts sh -c "hostname host-$k && exec $*"
}

run_in() {
  local id="$1" k="$2"; shift 2
  exec ip netns exec "$(namespace_of "$id" "$k")" unshare --uts sh -c 'hostname "host-$0" && exec "$@"' "$k" "$@"
}

case "${1:-}" in
  up) up "$2" "$3" ;;
  down) down "$2" ;;
  agent) shift; agent "$@" ;;
  exec) shift; run_in "$@" ;;
  *) echo "usage: netns_cluster.sh up ID HOSTS | down ID | agent HOST CMD... | exec ID K CMD..." >&2; exit 2 ;;
esac
