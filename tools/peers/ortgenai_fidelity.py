"""Fidelity check for the ortgenai backend: infermark's TTFT, time per output token and output
tokens/s on an ONNX Runtime GenAI model folder against ONNX Runtime GenAI's own Python API doing
the same work in a timed loop: one request at a time, a generator of batch 1 per request sized
prompt + output (max_length = min_length, so the end token cannot cut a request short, as
infermark's backend sets it), the prompt appended, then one generate_next_token per output token.
TTFT is append_tokens plus the first generate_next_token; TPOT the rest divided by output - 1.
Same model folder, threads, prompt and output lengths; the prompt tokens are drawn from the model's
ordinary vocabulary on both sides. The two sides' order rotates every round (rounds.py).

Runs in third_party/llm-venv (the Python binding of the same onnxruntime-genai version):
  third_party/llm-venv/bin/python tools/peers/ortgenai_fidelity.py models/smollm2-135m_int4.genai \
      [--rounds 5] [--threads 2] [--prompt-tokens 128] [--output-tokens 64] [--requests 8]
"""
import argparse
import glob
import json
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time

import onnxruntime_genai as og

from rounds import DEFAULT_ROUNDS, run_rounds, spread

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIGURES = ("ttft_ms", "tpot_ms", "output_tokens_per_s")


def python_loop(model_dir: pathlib.Path, threads: int, prompt_tokens: int, output_tokens: int, requests: int,
                warmup: int) -> dict:
    config = og.Config(str(model_dir))
    config.clear_providers()
    config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": threads}}}}))
    model = og.Model(config)
    vocabulary = json.loads((model_dir / "genai_config.json").read_text())["model"]["vocab_size"]
    draw = random.Random(7)
    ttft, tpot, wall, produced = [], [], 0.0, 0
    for index in range(warmup + requests):
        prompt = [draw.randrange(100, vocabulary) for _ in range(prompt_tokens)]
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=prompt_tokens + output_tokens, min_length=prompt_tokens + output_tokens,
                                  do_sample=False, batch_size=1)
        started = time.perf_counter()
        generator = og.Generator(model, params)
        generator.append_tokens(prompt)
        generator.generate_next_token()
        first = time.perf_counter()
        for _ in range(output_tokens - 1):
            generator.generate_next_token()
        ended = time.perf_counter()
        del generator
        if index < warmup:
            continue
        ttft.append((first - started) * 1e3)
        tpot.append((ended - first) * 1e3 / (output_tokens - 1))
        wall += ended - started
        produced += output_tokens
    return {"ttft_ms": statistics.mean(ttft), "tpot_ms": statistics.mean(tpot), "output_tokens_per_s": produced / wall}


def infermark(binary: pathlib.Path, model_dir: pathlib.Path, threads: int, prompt_tokens: int, output_tokens: int,
              requests: int, warmup: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([str(binary), "run", str(model_dir), "-b", "ortgenai", "--threads", str(threads),
                        "--prompt-tokens", str(prompt_tokens), "--output-tokens", str(output_tokens),
                        "--runs", str(requests), "--warmup", str(warmup), "--out", out],
                       check=True, stdout=subprocess.DEVNULL)
        result = json.loads(pathlib.Path(sorted(glob.glob(out + "/*/*.json"))[-1]).read_text())
    generation = result["generation"]
    return {"ttft_ms": generation["ttft_ms"]["mean"], "tpot_ms": generation["tpot_ms"]["mean"],
            "output_tokens_per_s": generation["output_tokens_per_s"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=pathlib.Path)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-tokens", type=int, default=128)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--infermark", type=pathlib.Path, default=ROOT / "build" / "release" / "infermark")
    args = parser.parse_args()
    work = (args.threads, args.prompt_tokens, args.output_tokens, args.requests, args.warmup)
    sides = {"onnxruntime-genai python": lambda: python_loop(args.model, *work),
             "infermark": lambda: infermark(args.infermark, args.model, *work)}
    print(f"onnxruntime-genai {og.__version__}, {args.model.name}, {args.threads} threads, prompt {args.prompt_tokens}, "
          f"output {args.output_tokens}, {args.requests} requests (+{args.warmup} warm-up) per side per round", flush=True)
    results = run_rounds(list(sides), args.rounds, lambda side: sides[side](),
                         describe=lambda f: ", ".join(f"{k} {f[k]:.2f}" for k in FIGURES))
    for figure in FIGURES:
        ratios = [r["infermark"][figure] / r["onnxruntime-genai python"][figure] for r in results]
        print(f"{figure}: infermark / onnxruntime-genai python = {spread(ratios)} (median, range over {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
