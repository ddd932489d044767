#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/CMakeLists.txt, clang) into BUILD_DIR and runs each for
# SECONDS from its seed corpus (tests/fuzz/corpus/<target>; copied, the repository's seeds stay as
# they are). Exits non-zero on the first crash, leak, sanitizer report or out-of-memory, leaving
# the reproducer in BUILD_DIR/artifacts/. Used by ctest (fuzz_smoke) and for longer runs:
#   tests/fuzz/run_fuzz.sh build/fuzz 600            # every target, 10 minutes each
#   tests/fuzz/run_fuzz.sh build/fuzz 60 fuzz_npy    # one target
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$1"
SECONDS_EACH="${2:-30}"
shift $(( $# < 2 ? $# : 2 ))
command -v clang++ >/dev/null || { echo "run_fuzz.sh: clang++ not found (scripts/setup installs clang)" >&2; exit 2; }
cmake -S "$HERE" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" >/dev/null
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  for seeds in "$HERE"/corpus/*/; do TARGETS+=("$(basename "$seeds")"); done
fi
mkdir -p "$BUILD/artifacts"
for target in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$target"
  mkdir -p "$corpus"
  cp -n "$HERE/corpus/$target/"* "$corpus/" 2>/dev/null || true
  log="$BUILD/$target.log"
  if ! "$BUILD/$target" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$BUILD/artifacts/$target-" "$corpus" >"$log" 2>&1; then
    echo "$target: FAILED (reproducer in $BUILD/artifacts/; log $log)"
    grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$log" | head -20
    exit 1
  fi
  runs=$(grep -oE "stat::number_of_executed_units: [0-9]+" "$log" | awk '{print $2}')
  coverage=$(grep -oE "cov: [0-9]+" "$log" | tail -1 | awk '{print $2}')
  echo "$target: ok, $runs executions in ${SECONDS_EACH} s, coverage $coverage edges, corpus $(ls "$corpus" | wc -l) inputs"
done
