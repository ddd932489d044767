#!/usr/bin/env bash
# ctest html_report_in_chromium: measures tiny_cnn with the built infermark (every backend at 1
# and 2 threads, an onnxruntime ramp, a short server, soak and pulse run, a batch study, shapes
# drawn per query and a two-stage pipeline) and the tiny Llama (precisions x concurrency, SLO
# limits, conversations, shared prefixes, a rate sweep), renders the HTML report, runs
# `infermark evaluate` on a small suite, and checks both pages in chromium
# (tests/e2e/report_html.test.mjs). Any failing step fails the test; exits
# 77 (ctest: skipped) after rendering when /usr/bin/chromium is absent.
# Usage: html_report_test.sh INFERMARK RENDER_HTML_REPORT REPO WORK_DIR [MPIEXEC]
set -euo pipefail

[ $# -eq 4 ] || [ $# -eq 5 ] || { echo "usage: $0 INFERMARK RENDER_HTML_REPORT REPO WORK_DIR [MPIEXEC]" >&2; exit 2; }
infermark=$1 render=$2 repo=$3 work=$4
model="$repo/models/tiny_cnn.onnx"

rm -rf "$work"
mkdir -p "$work"
# One --out per run: two runs started within the same second would share a result folder.
"$infermark" run "$model" --runs 30 --threads 1,2 --out "$work/results/single-stream"
"$infermark" run "$model" --scenario ramp --ramp-step 2 --ramp-steps 3 --step-duration 0.3 -b onnxruntime \
  --out "$work/results/ramp"
"$infermark" run "$model" --scenario server --qps 50 --duration 1 -b onnxruntime --out "$work/results/server"

# Study and scenario charts (web/report_scenarios.js), each run a few seconds: soak, pulse, a batch
# study, shapes drawn per query, and a two-stage pipeline (tiny_cnn split after pooling).
"$infermark" run "$model" --scenario soak --soak-duration 3 --soak-interval 0.5 --capacity-probe 0.5 -b onnxruntime \
  --out "$work/results/soak"
"$infermark" run "$model" --scenario pulse --pulse-times 1,1,2 --capacity-probe 0.5 -b onnxruntime --out "$work/results/pulse"
cat >"$work/batch.yaml" <<EOF
name: batch
models: [$model]
backends: [onnxruntime]
base: {runs: 30, warmup: 3}
axes:
  batch: [1, 4, 16]
EOF
"$infermark" sweep "$work/batch.yaml" --out "$work/results/batch"
"$infermark" run "$repo/models/tiny_cnn_dynamic_hw.onnx" --shape-range input=1x3x24-40/8x24-40/8 --shape-sets 6 --runs 60 \
  -b onnxruntime --out "$work/results/shapes"
cat >"$work/pipeline.yaml" <<EOF
name: tiny-split
pipeline:
  stages:
    - {name: encoder, model: $repo/models/tiny_encoder.onnx, backend: onnxruntime, threads: 1}
    - {name: head, model: $repo/models/tiny_head.onnx, backend: onnxruntime, threads: 1}
modes: [serial, threads]
requests: 50
warmup: 2
EOF
"$infermark" pipeline "$work/pipeline.yaml" --out "$work/results/pipeline"

# LLM sections and the precision-family comparison: the zoo's tiny Llama in three precisions at
# three concurrency levels, few short requests each.
"$infermark" run "$repo/models/llama-tiny_fp16.gguf" "$repo/models/llama-tiny_q8_0.gguf" "$repo/models/llama-tiny_q4_0.gguf" \
  --concurrency 1,4,16 --prompt-tokens 16 --output-tokens 8 --runs 16 --warmup 2 --threads 2 --out "$work/results/llm"
# LLM traffic for the SLO panel, the Pareto fronts, the turn and prefix charts and the sweep's
# saturation mark: Q8_0 under a server rate with TTFT and TPOT limits (goodput and verdict the
# page must count again), 3-turn conversations, two shared prefixes (the first request of each
# cold), and a rate sweep whose second step (5050/s) overflows a 32-deep queue on any machine.
llm="$repo/models/llama-tiny_q8_0.gguf"
tokens=(--prompt-tokens 16 --output-tokens 8 --threads 2)
"$infermark" run "$llm" --scenario server --qps 20 --duration 1 --ttft-ms 50 --tpot-ms 5 "${tokens[@]}" --out "$work/results/llm-slo"
"$infermark" run "$llm" --turns 3 --think-time 0.02 --concurrency 2 --runs 12 --warmup 2 "${tokens[@]}" --out "$work/results/llm-turns"
"$infermark" run "$llm" --shared-prefix 2:32 --opt prefix_cache=on --concurrency 2 --runs 12 --warmup 0 "${tokens[@]}" \
  --out "$work/results/llm-prefix"
"$infermark" run "$llm" --scenario ramp --ramp-by rate --ramp-start 50 --ramp-step 5000 --ramp-steps 3 --step-duration 0.5 \
  --until-saturation --max-queue 32 --ttft-ms 1000 "${tokens[@]}" --out "$work/results/llm-sweep"
# A tensor-model family: tiny_cnn's FP16 and INT8 copies on two backends (the second cross-checked
# against the first) at the thread counts tiny_cnn ran above.
"$infermark" run "$repo/models/tiny_cnn_fp16.onnx" "$repo/models/tiny_cnn_int8.onnx" -b onnxruntime,openvino --runs 30 \
  --threads 1,2 --out "$work/results/tiny-cnn-variants"

# Serving: `infermark load` (two concurrency levels, the server's metrics scraped) against an
# `infermark serve` of tiny_cnn on a free port with two variants (an A/B table), and the
# per-variant results serve writes at exit.
"$infermark" serve --model "$model" -b onnxruntime,openvino --weights 75,25 --port 0 --no-grpc --out "$work/results/serve" \
  >"$work/serve.log" 2>&1 &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null || true' EXIT
address=""
for _ in $(seq 600); do
  address=$(sed -nE 's|.*listening on http://([0-9.]+:[0-9]+).*|\1|p' "$work/serve.log" | head -n1)
  [ -n "$address" ] || ! kill -0 "$serve_pid" 2>/dev/null && break
  sleep 0.1
done
[ -n "$address" ] || { echo "infermark serve did not start:"; cat "$work/serve.log"; exit 1; }
"$infermark" load "http://$address" --model tiny_cnn --runs 40 --concurrency 1,4 --scrape "http://$address/metrics" \
  --out "$work/results/load"
kill -TERM "$serve_pid"
wait "$serve_pid"
trap - EXIT

# Result files named one by one (not the folder), so only the renderer is under test here.
mapfile -t results < <(find "$work/results" -name '*.json' -not -path '*.outputs/*' | sort)
INFERMARK_WEB_DIR="$repo/web" "$render" "$work/report.html" "${results[@]}"
echo "report: $work/report.html"

# A web/ folder without the scenario chart script: no report, one error naming the file.
mkdir -p "$work/web-without-scenarios"
cp "$repo/web/report_template.html" "$work/web-without-scenarios/"
ln -sfn "$repo/web/node_modules" "$work/web-without-scenarios/node_modules"
if INFERMARK_WEB_DIR="$work/web-without-scenarios" "$render" "$work/no-report.html" "${results[0]}" 2>"$work/no-report.err"; then
  echo "FAIL: rendered a report without web/report_scenarios.js" >&2; exit 1
fi
grep -q 'report_scenarios.js: scenario chart script not found' "$work/no-report.err" ||
  { echo "FAIL: the error does not name the missing script:" >&2; cat "$work/no-report.err" >&2; exit 1; }

# `infermark evaluate` on a suite of the batch study and the pipeline above (--quick leaves one
# out): its page has a section per experiment and the decision at the end.
cat >"$work/suite.yaml" <<EOF
name: tiny
description: The browser test's evaluation.
decision: {p99-ms: 1000}
experiments:
  - {title: Batch, study: batch.yaml}
  - {title: Pipeline, study: pipeline.yaml}
  - {title: Left out, study: batch.yaml, quick: skip}
EOF
INFERMARK_WEB_DIR="$repo/web" "$infermark" evaluate "$work/suite.yaml" --quick --out "$work/evaluation"

# The same evaluation on two "hosts" (each rank in its own UTS namespace; root, unshare and an
# MPI build only): its decision names each pick's machine and puts the machines side by side.
hosts_html=""
mpiexec="${5:-}"
if [ -n "$mpiexec" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  cat >"$work/own_host.sh" <<'SH'
#!/bin/sh
exec unshare --uts sh -c 'hostname "host$OMPI_COMM_WORLD_RANK" && exec "$0" "$@"' "$@"
SH
  chmod +x "$work/own_host.sh"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 INFERMARK_WEB_DIR="$repo/web" \
    "$mpiexec" -np 2 --bind-to none "$work/own_host.sh" "$infermark" evaluate "$work/suite.yaml" --quick --per-host \
    --out "$work/evaluation-hosts"
  hosts_html="$work/evaluation-hosts/evaluation-tiny-quick/report.html"
fi

INFERMARK_REPORT_HTML="$work/report.html" INFERMARK_REPORT_SCREENSHOT="$work/report.png" \
  INFERMARK_EVALUATION_HTML="$work/evaluation/evaluation-tiny-quick/report.html" INFERMARK_EVALUATION_HOSTS_HTML="$hosts_html" \
  node --test "$repo/tests/e2e/report_html.test.mjs"
if [ ! -x /usr/bin/chromium ]; then
  echo "skipped: /usr/bin/chromium not found (scripts/setup installs it)"
  exit 77
fi
echo "screenshot: $work/report.png"
