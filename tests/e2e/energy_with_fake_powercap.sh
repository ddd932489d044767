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

# Each counter reads 0.5 W: its value is computed from the clock (bash's $EPOCHREALTIME, no fork),
# not counted per loop turn, so a loaded machine that starves this loop delays an update but never
# changes the power the counters show. Renamed into place so a read never sees half a write.
# It stops at the next turn once .stop exists (killing it could leave a `mv` of its running, which
# would put energy_uj back after the second part below removed it).
(
  start=${EPOCHREALTIME/./}
  while [[ ! -e $root/.stop ]]; do
    now=${EPOCHREALTIME/./}
    uj=$(((now - start) / 2))
    for id in intel-rapl:0 intel-rapl:0:0 intel-rapl:1; do
      echo "$uj" >"$root/$id/.next" && mv "$root/$id/.next" "$root/$id/energy_uj"
    done
    sleep 0.002
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
  rm -f "$root/$id/energy_uj" "$root/$id/.next"
  mkdir "$root/$id/energy_uj"
done
output=$("$tests" --gtest_filter='EnergyCli.RunRecordsEnergyAndTheTablesShowInferencesPerJoule' 2>&1) || { echo "$output"; exit 1; }
echo "$output"
if ! grep -q "no energy counter readable on this machine: RAPL unreadable: $root/intel-rapl:0/energy_uj: Is a directory" <<<"$output"; then
  echo "FAILED: with RAPL unreadable the CPU cell's energy should be unavailable with RAPL's reason"
  exit 1
fi
