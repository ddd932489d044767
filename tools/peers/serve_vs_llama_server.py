"""`infermark serve` against llama-server on the same GGUF, slots, context and threads, measured by
the same client (`infermark load --protocol openai`, streamed chat completions, ignore_eos so every
request generates --output-tokens) at several concurrency levels, each engine's prompt cache on and
off. Sides rotate one place per round (tools/peers/rounds.py); each side starts its server, runs
every concurrency level, and stops it, so no side inherits another's warm server.

Prints, per concurrency level and cache setting, the output tokens/s, TTFT P50 and TPOT P50 of each
engine per round and the ratio infermark serve / llama-server (throughput: above 1 is faster; TTFT
and TPOT: below 1 is faster), with the median and range over the rounds.

Usage: serve_vs_llama_server.py [--rounds N] [--concurrency 1 4 16] [--model models/smollm2-135m_q8_0.gguf]
                                [--prompt-tokens 64] [--output-tokens 32] [--threads 2] [--cache on off]
                                [--serve-opt KEY=VALUE ...]
(after scripts/setup: build/release/infermark, llama-server and the zoo's SmolLM2 GGUF).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

from rounds import DEFAULT_ROUNDS, run_rounds, spread

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INFERMARK = os.path.join(ROOT, "build", "release", "infermark")
LLAMA_SERVER = os.path.join(ROOT, "third_party", "llama.cpp", "install", "bin", "llama-server")
PORT = 18093


def wait_up(url, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url}: no answer in {seconds} s")


def server_command(engine, cache, args, out):
    """The server of one side: the same slots, context per sequence and threads for both engines."""
    if engine == "serve":
        return [INFERMARK, "serve", "--model", args.model, "-b", "llamacpp", "--threads", str(args.threads),
                "--slots", str(max(args.concurrency)), "--ctx", str(args.ctx), "--opt", f"prefix_cache={cache}",
                *[a for opt in args.serve_opt for a in ("--opt", opt)],
                "--port", str(PORT), "--no-grpc", "--out", os.path.join(out, "serve-results")], "/v2/health/ready"
    # llama-server's -c is the whole KV cache, shared by its -np slots.
    return [LLAMA_SERVER, "-m", args.model, "-t", str(args.threads), "-np", str(max(args.concurrency)),
            "-c", str(args.ctx * max(args.concurrency)), "--port", str(PORT)], "/health"


def measure(side, args, out, counter):
    engine, cache = side.split("-")
    command, health = server_command(engine, cache, args, out)
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    figures = {}
    try:
        wait_up(f"http://127.0.0.1:{PORT}{health}")
        for concurrency in args.concurrency:
            counter[0] += 1
            folder = os.path.join(out, f"{side}-c{concurrency}-{counter[0]}")
            extra = ["--body-field", "cache_prompt=false"] if engine == "llama" and cache == "off" else []
            requests = max(8, 2 * concurrency)
            subprocess.run([INFERMARK, "load", f"http://127.0.0.1:{PORT}", "--protocol", "openai", "--model", args.model_name,
                            "--prompt-tokens", str(args.prompt_tokens), "--output-tokens", str(args.output_tokens),
                            "--concurrency", str(concurrency), "--runs", str(requests), "--warmup", str(min(concurrency, 4)),
                            "--seed", "7", *extra, "--out", folder], check=True, stdout=subprocess.DEVNULL)
            (path,) = glob.glob(os.path.join(folder, "*", "*.json"))
            result = json.load(open(path))
            if result["status"] != "ok":
                raise RuntimeError(f"{side} C={concurrency}: {result['status']}: {result.get('error')}")
            g = result["generation"]
            p50 = lambda s: s["percentiles"]["p50"]["value"]  # noqa: E731
            figures[concurrency] = {"tok_s": g["output_tokens_per_s"], "ttft": p50(g["ttft_ms"]), "tpot": p50(g["tpot_ms"])}
    finally:
        server.terminate()
        server.wait(timeout=60)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--model", default=os.path.join(ROOT, "models", "smollm2-135m_q8_0.gguf"))
    parser.add_argument("--prompt-tokens", type=int, default=64)
    parser.add_argument("--output-tokens", type=int, default=32)
    parser.add_argument("--ctx", type=int, default=256, help="context per sequence")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", nargs="+", choices=["on", "off"], default=["on", "off"], help="prompt cache settings to run")
    parser.add_argument("--serve-opt", action="append", default=[], metavar="KEY=VALUE",
                        help="one more --opt for infermark serve's llama.cpp engine (repeatable)")
    args = parser.parse_args()
    args.model_name = os.path.splitext(os.path.basename(args.model))[0]
    sides = [f"{engine}-{cache}" for cache in args.cache for engine in ("serve", "llama")]
    with tempfile.TemporaryDirectory(prefix="serve-vs-llama-") as out:
        counter = [0]
        describe = lambda f: " ".join(f"C={c}:{v['tok_s']:.0f}tok/s" for c, v in f.items())  # noqa: E731
        rounds = run_rounds(sides, args.rounds, lambda side: measure(side, args, out, counter), describe)
    print(f"# {args.model_name}, prompt {args.prompt_tokens} + output {args.output_tokens} tokens, {args.threads} threads, "
          f"{max(args.concurrency)} slots of {args.ctx} tokens, {args.rounds} rounds, sides rotated")
    print("| cache | C | metric | infermark serve (median) | llama-server (median) | serve / llama per round | median (range) |")
    print("|---|---|---|---|---|---|---|")
    for cache in args.cache:
        for c in args.concurrency:
            for metric, name in (("tok_s", "output tok/s"), ("ttft", "TTFT P50 ms"), ("tpot", "TPOT P50 ms")):
                serve = [r[f"serve-{cache}"][c][metric] for r in rounds]
                llama = [r[f"llama-{cache}"][c][metric] for r in rounds]
                ratios = [s / l for s, l in zip(serve, llama)]
                med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
                print(f"| {cache} | {c} | {name} | {med(serve):.2f} | {med(llama):.2f} | "
                      f"{', '.join(f'{x:.2f}' for x in ratios)} | {spread(ratios, 2)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
