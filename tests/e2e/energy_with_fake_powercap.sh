#!/usr/bin/env bash
# Usage: energy_with_fake_powercap.sh INFERMARK_E2E_TESTS
# Runs the e2e energy test (EnergyCli) where /sys/class/powercap is a fake RAPL tree, in a private
# mount namespace: two packages whose counters advance, core and uncore sub-domains that must not
# be added, so the "energy measured" branch (joules > 0, inferences/J in the run and report
# tables, the same inferences/J after a long warm-up) is exercised on machines without readable
# RAPL. Then again with a tree whose counters cannot be read: the CPU cell's energy must be
# unavailable with RAPL's reason, even where a GPU's NVML counter could be read. The machine's own
# /sys is untouched.
# Exit 77 (skipped) where no private mount namespace can be made (not root, no unshare).
set -euo pipefail
tests=$1

if [[ ${2:-} != --inside ]]; then
  if ! command -v unshare >/dev/null || ! unshare -m true 2>/dev/null; then
    echo "skipped: a private mount namespace needs root and unshare"
    exit 77
  fi
  exec unshare -m bash "$0" "$tests" --inside
fi

mount -t tmpfs fake-powercap /sys/class
root=/sys/class/powercap
zone() {  # zone ID NAME
  mkdir -p "$root/$1"
  echo "$2" >"$root/$1/name"
  echo 0 >"$root/$1/energy_uj"
  echo 262143328850 >"$root/$1/max_energy_range_uj"
}
zone intel-rapl:0 package-0
zone intel-rapl:0:0 core
zone intel-rapl:0:1 uncore
zone intel-rapl:1 package-1

# Each counter reads 0.5 W: its value is computed from the clock (bash's $EPOCHREALTIME), not counted
# per loop turn, so a turn that comes late delays an update but never changes the power shown. A
# turn forks nothing (printf and read are builtins; the pause is a read that times out on a FIFO
# nobody writes) and the loop runs at a raised priority: on two cores under a parallel test suite a
# writer that forked three `mv`s and a `sleep` per turn was starved for a good part of a 0.5 s
# measured phase, and the stale reading at its start doubled the power seen. Each write overwrites
# a fixed-width number in place (no truncation) with one write(), so a read never sees half of one.
# It stops at the next turn once .stop exists.
mkfifo "$root/.pause"
(
  renice -n -10 -p $BASHPID >/dev/null 2>&1 || true
  exec 9<>"$root/.pause"
  start=${EPOCHREALTIME/./}
  while [[ ! -e $root/.stop ]]; do
    now=${EPOCHREALTIME/./}
    for id in intel-rapl:0 intel-rapl:0:0 intel-rapl:1; do
      printf '%020d\n' $(((now - start) / 2)) 1<>"$root/$id/energy_uj"
    done
    read -r -t 0.002 -u 9 _ || true
  done
) &
writer=$!
trap 'kill $writer 2>/dev/null || true' EXIT

output=$("$tests" --gtest_filter='EnergyCli.*' 2>&1) || { echo "$output"; exit 1; }
echo "$output"
if grep -q SKIPPED <<<"$output"; then
  echo "FAILED: the energy test skipped although the fake RAPL tree is readable"
  exit 1
fi

# The same tree with every counter unreadable (a directory where energy_uj should be: root reads
# any file): no energy, RAPL's reason, and no other device's counter in its place.
touch "$root/.stop"
wait $writer 2>/dev/null || true
for id in intel-rapl:0 intel-rapl:0:0 intel-rapl:1; do
  rm -f "$root/$id/energy_uj"
  mkdir "$root/$id/energy_uj"
done
output=$("$tests" --gtest_filter='EnergyCli.RunRecordsEnergyAndTheTablesShowInferencesPerJoule' 2>&1) || { echo "$output"; exit 1; }
echo "$output"
if ! grep -q "no energy counter readable on this machine: RAPL unreadable: $root/intel-rapl:0/energy_uj: Is a directory" <<<"$output"; then
  echo "FAILED: with RAPL unreadable the CPU cell's energy should be unavailable with RAPL's reason"
  exit 1
fi
