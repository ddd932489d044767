#!/usr/bin/env bash
# ctest html_report_in_chromium: measures tiny_cnn with the built infermark (every backend at 1
# and 2 threads, an onnxruntime ramp and a short server run), renders the HTML report and
# checks it in chromium (tests/e2e/report_html.test.mjs). Any failing step fails the test; exits
# 77 (ctest: skipped) after rendering when /usr/bin/chromium is absent.
# Usage: html_report_test.sh INFERMARK RENDER_HTML_REPORT REPO WORK_DIR
set -euo pipefail

[ $# -eq 4 ] || { echo "usage: $0 INFERMARK RENDER_HTML_REPORT REPO WORK_DIR" >&2; exit 2; }
infermark=$1 render=$2 repo=$3 work=$4
model="$repo/models/tiny_cnn.onnx"

rm -rf "$work"
mkdir -p "$work"
# One --out per run: two runs started within the same second would share a result folder.
"$infermark" run "$model" --runs 30 --threads 1,2 --out "$work/results/single-stream"
"$infermark" run "$model" --scenario ramp --ramp-step 2 --ramp-steps 3 --step-duration 0.3 -b onnxruntime \
  --out "$work/results/ramp"
"$infermark" run "$model" --scenario server --qps 50 --duration 1 -b onnxruntime --out "$work/results/server"

# Result files named one by one (not the folder), so only the renderer is under test here.
mapfile -t results < <(find "$work/results" -name '*.json' -not -path '*.outputs/*' | sort)
INFERMARK_WEB_DIR="$repo/web" "$render" "$work/report.html" "${results[@]}"
echo "report: $work/report.html"

INFERMARK_REPORT_HTML="$work/report.html" INFERMARK_REPORT_SCREENSHOT="$work/report.png" \
  node --test "$repo/tests/e2e/report_html.test.mjs"
if [ ! -x /usr/bin/chromium ]; then
  echo "skipped: /usr/bin/chromium not found (scripts/setup installs it)"
  exit 77
fi
echo "screenshot: $work/report.png"
