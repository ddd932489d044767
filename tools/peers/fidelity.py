"""Fidelity of infermark's OpenVINO and ONNX Runtime numbers against each framework's own tool, on
the same model, input bytes, threads and mode, sides in a rotated order every round (rounds.py).

Sides (each runs WARMUP untimed then RUNS timed inferences of one batch-1 input):
- `benchmark_app` (OpenVINO's tool, from the same wheel): sync API, one stream, same threads (its UI
  refuses -nthreads with a hint; infermark's LATENCY hint resolves to one stream, as its result records);
- `infermark run -b openvino`;
- `ort_timed_loop.py`: a plain timed loop over ONNX Runtime's Python API, same version and options;
- `infermark run -b onnxruntime`.
All four read the same input: one .npy of seeded standard-normal values (benchmark_app and the ORT loop
load it with -i / --input, infermark with --input NAME=FILE).

  .venv/bin/python tools/peers/fidelity.py [--model models/resnet50.onnx] [--rounds 5] [--threads 2] [--runs 200]
Prints each round, then a Markdown table: median and range over the rounds of each side's P50 and mean,
and the ratio infermark / the framework's tool per round (median and range).
"""
import argparse
import glob
import json
import os
import pathlib
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rounds import DEFAULT_ROUNDS, run_rounds, spread  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAIRS = [("infermark openvino", "benchmark_app"), ("infermark onnxruntime", "ORT Python loop")]


def shown(command, scratch, infermark=None):
    words = [("infermark" if infermark and str(part) == infermark else str(part)) for part in command]
    return " ".join(shlex.quote(w.replace(str(ROOT) + "/", "").replace(str(scratch), "$OUT")) for w in words)


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{command[0]} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done.stdout + done.stderr


class Sides:
    def __init__(self, args, scratch, input_name, input_file, shape):
        self.args, self.scratch, self.input_name, self.input_file, self.shape = args, scratch, input_name, input_file, shape
        self.commands = {}

    def measure(self, side):
        """(P50 ms, mean ms) of one run of `side`."""
        a = self.args
        if side == "benchmark_app":
            command = [str(ROOT / ".venv/bin/benchmark_app"), "-m", a.model, "-d", "CPU", "-api", "sync", "-hint", "none",
                       "-nstreams", "1", "-nthreads", str(a.threads), "-ip", "f32", "-shape", "[" + ",".join(map(str, self.shape)) + "]",
                       "-i", str(self.input_file), "-niter", str(a.runs), "-infer_precision", "f32"]
            text = run(command)
            figures = [float(re.search(key + r"\s*:\s*([\d.]+)", text).group(1)) for key in ("Median", "Average")]
            if "Warming up" not in text and "First inference took" not in text:
                sys.exit("benchmark_app printed no first-inference (warm-up) line:\n" + text[-2000:])
        elif side == "ORT Python loop":
            command = [str(ROOT / ".venv/bin/python"), str(ROOT / "tools/peers/ort_timed_loop.py"), a.model,
                       "--threads", str(a.threads), "--warmup", str(a.warmup), "--runs", str(a.runs),
                       "--input", str(self.input_file)]
            result = json.loads(run(command).strip().splitlines()[-1])
            figures = [result["p50_ms"], result["mean_ms"]]
        else:
            backend = side.split()[-1]
            folder = self.scratch / backend
            command = [a.infermark, "run", a.model, "-b", backend, "--threads", str(a.threads),
                       "--warmup", str(a.warmup), "--runs", str(a.runs), "--input", f"{self.input_name}={self.input_file}",
                       "--out", str(folder)]
            run(command)
            result = json.load(open(sorted(glob.glob(str(folder / "*" / "*.json")))[-1]))
            figures = [result["latency_ms"]["percentiles"]["p50"]["value"], result["latency_ms"]["mean"]]
            shutil.rmtree(folder)
        self.commands[side] = shown(command, self.scratch, a.infermark)
        return tuple(figures)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(ROOT / "models/resnet50.onnx"))
    parser.add_argument("--infermark", default=str(ROOT / "build/release/infermark"))
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()

    import onnxruntime as ort
    import openvino
    spec = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"]).get_inputs()[0]
    shape = [d if isinstance(d, int) and d > 0 else 1 for d in spec.shape]
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = pathlib.Path(scratch_name)
        input_file = scratch / f"{spec.name}.npy"
        np.save(input_file, np.random.default_rng(42).standard_normal(shape, dtype=np.float32))
        sides = Sides(args, scratch, spec.name, input_file, shape)
        names = ["benchmark_app", "infermark openvino", "ORT Python loop", "infermark onnxruntime"]
        rows = run_rounds(names, args.rounds, sides.measure, describe=lambda f: f"P50 {f[0]:.2f} ms")

    print(f"### Fidelity: {pathlib.Path(args.model).name}, batch 1, {args.threads} threads "
          f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores)\n")
    print(f"{args.rounds} rounds, sides in a rotated order each round; each side {args.warmup} warm-up and {args.runs} "
          f"timed runs on the same input (seeded standard-normal .npy). OpenVINO {openvino.__version__}, "
          f"ONNX Runtime {ort.__version__} (Python) and infermark's own ONNX Runtime.\n")
    print("| round | " + " | ".join(f"{n} P50 ms" for n in names) + " |\n|---:|" + "---:|" * len(names))
    for i, row in enumerate(rows, 1):
        print(f"| {i} | " + " | ".join(f"{row[n][0]:.2f}" for n in names) + " |")
    print("\n| infermark side | peer | P50 ratio, median (range) | mean ratio, median (range) | "
          "median P50 ms (infermark / peer) |\n|---|---|---|---|---|")
    for ours, theirs in PAIRS:
        p50 = [row[ours][0] / row[theirs][0] for row in rows]
        mean = [row[ours][1] / row[theirs][1] for row in rows]
        print(f"| {ours} | {theirs} | {spread(p50)} | {spread(mean)} | "
              f"{statistics.median(r[ours][0] for r in rows):.2f} / {statistics.median(r[theirs][0] for r in rows):.2f} |")
    print("\nCommands ($OUT: the script's temporary folder):\n\n```")
    for name in names:
        print(sides.commands[name])
    print("```")


if __name__ == "__main__":
    main()
