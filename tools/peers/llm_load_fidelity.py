"""Fidelity of `infermark load --protocol openai` against NVIDIA's aiperf: the same llama-server
(llama.cpp's, from `scripts/setup`), the same prompts (one JSONL file both read), the same output
length, sampling and concurrency, the two clients alternated round by round (the machines are
shared and noisy). Both stream chat completions and take token counts from the server's `usage`.

llama-server serves a random-weight GGUF model (llama-small by default), so every request carries
`"grammar": "root ::= [a-z ]+"` (random weights otherwise emit invalid UTF-8, which llama-server
rejects mid-stream), `"ignore_eos": true`, so every request generates exactly --output-tokens, and
`"cache_prompt": false`, so no prompt is served from llama-server's prompt cache (both clients send
the same prompts, round after round). Server and clients run on separate CPUs.

Compared: TTFT (mean, P50); time between tokens: aiperf's inter_token_latency, per request (request
latency - TTFT) / (tokens - 1), against infermark's tpot_ms, (last - first token) / (tokens - 1)
(the same here: llama-server ends the stream right after the last token); request latency and
output tokens/s. Beside
them, llama-server's own milliseconds per generated token over each client's run (its
`llamacpp:tokens_predicted_seconds_total` / `tokens_predicted_total`), since the server itself runs
at a different speed under each client; a client's ITL over the server's own figure says how much
the client adds.

Usage: llm_load_fidelity.py [--infermark PATH] [--models DIR] [--model NAME] [--llama-server PATH]
                            [--aiperf-venv DIR] [--rounds N] [--requests N] [--concurrency C ...]
                            [--prompt-words W] [--output-tokens T] [--server-threads N]
"""

import argparse
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from aiperf_support import aiperf_environment, make_tokenizer  # noqa: E402
from serve_support import free_port, http, parse_metrics, wait_until  # noqa: E402

GRAMMAR = "root ::= [a-z ]+"
# The server and the clients on separate CPUs, so a client's own CPU cost (aiperf runs several
# Python processes) does not slow the server it measures (--server-cpus, --client-cpus).
SERVER_CPU, CLIENT_CPUS = "1", "0"
WORDS = ("the of and to in is that it for on was with as be by at this from have or one had not but what all were when "
         "we there can an your which their said if do will each about how up out them then she many some so these would "
         "other into has more her two like him see time could no make than first been its who now people my made over").split()



def run(command, timeout=1800, env=None):
    print("$ " + shlex.join(command), file=sys.stderr)
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done.stdout


def write_prompts(path, count, words, seed=7):
    """`count` prompts of `words` common words each, as aiperf's single_turn JSONL ({"text": ...})."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(count):
            f.write(json.dumps({"text": " ".join(rng.choice(WORDS) for _ in range(words))}) + "\n")


def start_llama_server(binary, model, slots, threads, log_path):
    port = free_port()
    command = ["taskset", "-c", SERVER_CPU, binary, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-np", str(slots), "-c",
               str(2048 * slots), "-t", str(threads), "--metrics", "--no-webui"]
    log = open(log_path, "w")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    address = f"127.0.0.1:{port}"

    def ready():
        if process.poll() is not None:
            raise RuntimeError(f"llama-server exited with code {process.returncode}; see {log_path}")
        return http(address, "GET", "/health")[0] == 200
    wait_until(ready, 120, "llama-server ready")
    return process, address, command


def aiperf(venv, tokenizer, address, model, prompts, requests, warmup, concurrency, output_tokens, work):
    artifacts = tempfile.mkdtemp(prefix="aiperf-", dir=work)
    extra = json.dumps({"grammar": GRAMMAR, "ignore_eos": True, "cache_prompt": False})
    command = ["taskset", "-c", CLIENT_CPUS, os.path.join(venv, "bin", "aiperf"), "profile", "--model", model, "--url", f"http://{address}",
               "--endpoint-type", "chat", "--streaming", "--tokenizer", tokenizer, "--use-server-token-count",
               "--input-file", prompts, "--custom-dataset-type", "single_turn", "--request-count", str(requests),
               "--warmup-request-count", str(warmup), "--concurrency", str(concurrency), "--osl", str(output_tokens),
               "--osl-stddev", "0", "--extra-inputs", extra, "--artifact-dir", artifacts, "--no-gpu-telemetry",
               "--random-seed", "1"]
    run(command, env=aiperf_environment())
    with open(os.path.join(artifacts, "profile_export_aiperf.json")) as f:
        s = json.load(f)
    if s.get("error_summary"):
        raise RuntimeError(f"aiperf saw errors: {s['error_summary']}")
    return command, {"ttft_mean": s["time_to_first_token"]["avg"], "ttft_p50": s["time_to_first_token"]["p50"],
                     "tbt_mean": s["inter_token_latency"]["avg"], "tbt_p50": s["inter_token_latency"]["p50"],
                     "latency_p50": s["request_latency"]["p50"], "tokens_per_s": s["output_token_throughput"]["avg"],
                     "output_tokens": s["output_sequence_length"]["avg"], "prompt_tokens": s["input_sequence_length"]["avg"],
                     "requests": s["request_count"]["avg"]}


def infermark_load(infermark, address, model, prompts, requests, warmup, concurrency, output_tokens, work):
    out = tempfile.mkdtemp(prefix="infermark-", dir=work)
    command = ["taskset", "-c", CLIENT_CPUS, infermark, "load", f"http://{address}", "--protocol", "openai", "--model", model, "--prompts", prompts,
               "--output-tokens", str(output_tokens), "--scenario", "concurrency", "--concurrency", str(concurrency),
               "--runs", str(requests), "--warmup", str(warmup), "--body-field", f"grammar={json.dumps(GRAMMAR)}", "--body-field", "cache_prompt=false",
               "--out", out]
    run(command)
    path = next(os.path.join(d, f) for d, _, files in os.walk(out) for f in files if f.endswith(".json"))
    with open(path) as f:
        r = json.load(f)
    if r["remote"]["errors"]["total"]:
        raise RuntimeError(f"infermark load saw errors: {r['remote']['errors']}")
    g = r["generation"]

    def p50(summary):
        return summary["percentiles"]["p50"]["value"]
    return command, {"ttft_mean": g["ttft_ms"]["mean"], "ttft_p50": p50(g["ttft_ms"]), "tbt_mean": g["tpot_ms"]["mean"],
                     "tbt_p50": p50(g["tpot_ms"]), "latency_p50": p50(g["e2e_ms"]),
                     "tokens_per_s": g["output_tokens_per_s"], "output_tokens": g["output_tokens"]["total"] / g["requests"],
                     "prompt_tokens": g["prompt_tokens"]["mean"], "requests": g["requests"]}


def server_counters(address):
    """llama-server's own decode and prefill counters (its --metrics endpoint)."""
    status, _, body = http(address, "GET", "/metrics")
    if status != 200:
        raise RuntimeError(f"llama-server /metrics answered {status}")
    values = parse_metrics(body.decode())
    return {key: values.get(f"llamacpp:{key}", 0.0) for key in
            ("tokens_predicted_total", "tokens_predicted_seconds_total", "prompt_tokens_total", "prompt_seconds_total")}


def with_server_view(address, measure):
    """Runs one client's measurement and adds what llama-server itself timed meanwhile: its
    milliseconds per generated token, so a client's ITL can be set against the server's own."""
    before = server_counters(address)
    command, figures = measure()
    after = server_counters(address)
    tokens = after["tokens_predicted_total"] - before["tokens_predicted_total"]
    seconds = after["tokens_predicted_seconds_total"] - before["tokens_predicted_seconds_total"]
    figures["server_ms_per_token"] = seconds / tokens * 1000 if tokens else float("nan")
    figures["itl_over_server"] = figures["tbt_mean"] / figures["server_ms_per_token"]
    return command, figures


FIGURES = (("ttft_mean", "TTFT mean (ms)"), ("ttft_p50", "TTFT P50 (ms)"), ("tbt_mean", "ITL/TPOT mean (ms)"),
           ("tbt_p50", "ITL/TPOT P50 (ms)"), ("latency_p50", "latency P50 (ms)"), ("tokens_per_s", "output tokens/s"),
           ("server_ms_per_token", "llama-server's own ms/token"), ("itl_over_server", "ITL / server ms/token"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--infermark", default=os.path.join(ROOT, "build", "release", "infermark"))
    parser.add_argument("--models", default=os.path.join(ROOT, "models"))
    parser.add_argument("--model", default="llama-small")
    parser.add_argument("--llama-server", default=os.path.join(ROOT, "third_party", "llama.cpp", "install", "bin",
                                                               "llama-server"))
    parser.add_argument("--aiperf-venv", default=os.path.join(ROOT, "third_party", "aiperf-venv"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=24, help="measured requests per figure, each client")
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--prompt-words", type=int, default=64)
    parser.add_argument("--output-tokens", type=int, default=32)
    parser.add_argument("--server-threads", type=int, default=1)
    parser.add_argument("--server-cpus", default="1", help="CPUs for llama-server (taskset list)")
    parser.add_argument("--client-cpus", default="0", help="CPUs for the clients (taskset list)")
    args = parser.parse_args()
    global SERVER_CPU, CLIENT_CPUS
    SERVER_CPU, CLIENT_CPUS = args.server_cpus, args.client_cpus

    work = tempfile.mkdtemp(prefix="llm-load-fidelity-")
    prompts = os.path.join(work, "prompts.jsonl")
    write_prompts(prompts, 64, args.prompt_words)
    tokenizer = os.path.join(work, "tokenizer")
    make_tokenizer(args.aiperf_venv, tokenizer)
    aiperf_version = run([os.path.join(args.aiperf_venv, "bin", "python"), "-c",
                          "import importlib.metadata as m; print(m.version('aiperf'))"]).strip()
    llama_version = open(os.path.join(ROOT, "third_party", "llama.cpp", "VERSION")).read().strip()
    model = os.path.join(args.models, f"{args.model}.gguf")
    rows, commands = [], {}
    for concurrency in args.concurrency:
        server, address, server_command = start_llama_server(args.llama_server, model, concurrency, args.server_threads,
                                                             os.path.join(work, f"llama-server-c{concurrency}.log"))
        commands["llama-server"] = server_command
        try:
            for r in range(args.rounds):
                sides = [("aiperf", lambda: aiperf(args.aiperf_venv, tokenizer, address, args.model, prompts,
                                                   args.requests, args.warmup, concurrency, args.output_tokens, work)),
                         ("infermark load", lambda: infermark_load(args.infermark, address, args.model, prompts,
                                                                   args.requests, args.warmup, concurrency,
                                                                   args.output_tokens, work))]
                if r % 2:
                    sides.reverse()
                for client, measure in sides:
                    command, figures = with_server_view(address, measure)
                    commands[client] = command
                    rows.append((concurrency, r + 1, client, figures))
        finally:
            server.terminate()
            server.wait(30)

    print(f"### infermark load vs aiperf {aiperf_version} on llama-server (llama.cpp {llama_version}), "
          f"{args.model}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("| concurrency | round | client | " + " | ".join(label for _, label in FIGURES) + " | prompt / output tokens per request |")
    print("|---:|---:|---|" + "---:|" * (len(FIGURES) + 1))
    for concurrency, r, client, f in rows:
        print(f"| {concurrency} | {r} | {client} | " + " | ".join(f"{f[k]:,.3f}" if k == "itl_over_server" else f"{f[k]:,.1f}" for k, _ in FIGURES) +
              f" | {f['prompt_tokens']:.1f} / {f['output_tokens']:.1f} |")
    print("\nMedian over rounds of infermark load / aiperf:\n")
    print("| concurrency | " + " | ".join(label for _, label in FIGURES) + " |")
    print("|---:|" + "---:|" * len(FIGURES))
    for concurrency in args.concurrency:
        ratios = []
        for key, _ in FIGURES:
            per_round = [mine[key] / theirs[key]
                         for (c1, r1, k1, mine) in rows for (c2, r2, k2, theirs) in rows
                         if c1 == c2 == concurrency and r1 == r2 and k1 == "infermark load" and k2 == "aiperf"]
            ratios.append(statistics.median(per_round))
        print(f"| {concurrency} | " + " | ".join(f"{x:.3f}" for x in ratios) + " |")
    print("\nCommands (WORK is a temporary folder; ADDRESS the server's):\n\n```")
    for name, command in commands.items():
        text = shlex.join(command).replace(work, "WORK").replace(ROOT + "/", "").replace(address, "ADDRESS")
        print(text)
    print("```")


if __name__ == "__main__":
    main()
