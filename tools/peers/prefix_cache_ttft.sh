#!/usr/bin/env bash
# Shared-prefix TTFT, prefix cache on vs off: infermark serve (--opt prefix_cache=on|off) and
# llama-server (cache_prompt true|false per request), same GGUF, same workload, the four sides'
# order reversed every other round. Usage: PREFIX_GROUPS=2 ROUNDS=3 tools/peers/prefix_cache_ttft.sh
# (after scripts/setup: build/release, llama-server and the zoo's SmolLM2 Q8_0 GGUF).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
IM=build/release/infermark
LS=third_party/llama.cpp/install/bin/llama-server
MODEL=models/smollm2-135m_q8_0.gguf
ROUNDS=${ROUNDS:-3}
OUT=$(mktemp -d -t prefix-cache-ttft-XXXX); export OUT
WORK=(--protocol openai --model smollm2-135m_q8_0 --shared-prefix ${PREFIX_GROUPS:-4}:384 --prompt-tokens 32 --output-tokens 8 --runs 32 --warmup 0 --concurrency 2 --seed 7)
wait_up() { for i in $(seq 1 120); do curl -sf "http://127.0.0.1:$1/$2" >/dev/null && return 0; sleep 0.5; done; echo "server on $1 not up" >&2; return 1; }
run_serve() { # $1 on|off $2 round
  $IM serve --model $MODEL -b llamacpp --threads 2 --slots 2 --ctx 1024 --opt prefix_cache=$1 --port 18081 --no-grpc --out $OUT/serve-out >/dev/null 2>&1 &
  local pid=$!; wait_up 18081 v2/health/ready
  $IM load http://127.0.0.1:18081 "${WORK[@]}" --out $OUT/serve-$1-r$2 >/dev/null 2>&1
  kill $pid; wait $pid 2>/dev/null || true
}
run_llama() { # $1 on|off $2 round
  $LS -m $MODEL -t 2 -np 2 -c 2048 --port 18082 >/dev/null 2>&1 &
  local pid=$!; wait_up 18082 health
  local extra=(); [ "$1" = off ] && extra=(--body-field cache_prompt=false)
  $IM load http://127.0.0.1:18082 "${WORK[@]}" "${extra[@]}" --out $OUT/llama-$1-r$2 >/dev/null 2>&1
  kill $pid; wait $pid 2>/dev/null || true
}
for r in $(seq 1 $ROUNDS); do
  if [ $((r % 2)) = 1 ]; then order="serve-on serve-off llama-on llama-off"; else order="llama-off llama-on serve-off serve-on"; fi
  for side in $order; do
    case $side in serve-*) run_serve ${side#serve-} $r ;; llama-*) run_llama ${side#llama-} $r ;; esac
  done
done
python3 - <<'PY'
import glob, json, os, statistics
rows = {}
p50 = lambda s: s["percentiles"]["p50"]["value"] if s else None
for f in sorted(glob.glob(os.environ["OUT"] + "/*-r*/*/*.json")):
    side, rnd = f[len(os.environ["OUT"]) + 1:].split("/")[0].rsplit("-r", 1)
    r = json.load(open(f)); g = r["generation"]; p = g["shared_prefix"]
    rows.setdefault(side, {})[int(rnd)] = (p50(p["ttft_warm_ms"]), p50(p["ttft_cold_ms"]), p["warm_share"], g["prompt_tokens"]["mean"], r["status"])
for side, by_round in sorted(rows.items()):
    print(side, {k: tuple(round(x, 2) if isinstance(x, float) else x for x in v) for k, v in sorted(by_round.items())})
for engine in ("serve", "llama"):
    on, off = rows.get(engine + "-on", {}), rows.get(engine + "-off", {})
    ratios = [on[k][0] / off[k][0] for k in on if k in off and on[k][0] and off[k][0]]
    if ratios:
        print(f"{engine}: warm TTFT P50 cache on / off per round {[round(x, 3) for x in ratios]}, median {statistics.median(ratios):.3f}")
PY
