#!/usr/bin/env bash
# Usage: fixture_outputs_unchanged.sh INFERMARK SOURCE_DIR [--update]
# report, compare and recommend on the result files committed in tests/fixtures/results/ (written
# by the build of 2026-12-04) print byte for byte what that build printed, kept in
# tests/fixtures/expected_outputs/: a change to the result model or its readers that alters a
# figure, a label or a row of a decision document shows here. --update rewrites the expected
# outputs (only for a change that means to alter them; say why in its commit).
set -euo pipefail
infermark=$1
cd "$2"
update=${3:-}
fixtures=tests/fixtures/results
expected=tests/fixtures/expected_outputs
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

run() {  # NAME ARGS...: runs infermark ARGS, keeps stdout as NAME
  local name=$1
  shift
  "$infermark" "$@" >"$scratch/$name" 2>"$scratch/$name.err" || {
    echo "FAILED: infermark $* exited $?:"
    cat "$scratch/$name.err"
    exit 1
  }
}
run report.md report "$fixtures"
run report.csv report "$fixtures" --csv -
run compare.md compare "$fixtures" "$fixtures"
run compare.json compare "$fixtures" "$fixtures" --json
# The machine's peak is given: without it recommend derives the peak of the machine it runs on.
peak=(--peak-gflops 332.305664)
run recommend.md recommend "$fixtures" "${peak[@]}"
run recommend.json recommend "$fixtures" --json "${peak[@]}"
run recommend_constrained.md recommend "$fixtures" --p99-ms 5 --min-qps 100 "${peak[@]}"

status=0
for name in report.md report.csv compare.md compare.json recommend.md recommend.json recommend_constrained.md; do
  if [[ $update == --update ]]; then
    cp "$scratch/$name" "$expected/$name"
  elif ! diff -u "$expected/$name" "$scratch/$name"; then
    echo "FAILED: infermark's $name on the fixture results differs from what the 2026-12-04 build printed"
    status=1
  fi
done
exit $status
