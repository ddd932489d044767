#!/usr/bin/env bash
# Usage: wrong_way_includes_fail.sh BUILD_DIR
# The layer order is a build rule (cmake/Layers.cmake): each probe is a source linked like one
# layer's library and including one header. Downward probes must compile (so a failure below is
# the layering's, not a broken probe); each wrong-way probe must fail, and fail because the header
# is not found from that layer.
set -uo pipefail
build=$1
status=0
for probe in harness_reads_result pipeline_reads_result serve_reads_kserve remote_reads_kserve; do
  if ! out=$(cmake --build "$build" --target "infermark_layer_probe_$probe" 2>&1); then
    echo "FAILED: the downward probe $probe does not compile:"; echo "$out"; status=1
  fi
done
for probe in result_reads_harness serve_reads_harness pipeline_reads_harness remote_reads_serve harness_reads_report kserve_reads_serve; do
  out=$(cmake --build "$build" --target "infermark_layer_probe_$probe" 2>&1)
  if [[ $? -eq 0 ]]; then
    echo "FAILED: $probe compiled: a wrong-way include is not refused by the build"; status=1
  elif ! grep -q "No such file or directory" <<<"$out"; then
    echo "FAILED: $probe failed for another reason than the header being out of reach:"; echo "$out"; status=1
  else
    echo "refused as it should be: $probe ($(grep -m1 -o '[a-z_]*/[a-z_]*\.hpp: No such file or directory' <<<"$out"))"
  fi
done
exit $status
