"""Fidelity of infermark's tflite backend against LiteRT's own benchmark tool.

Runs, on the same .tflite model and thread count, alternating the order of the sides every round:
- `litert-benchmark` (ai-edge-litert's CLI, tools/benchmark_litert_model.py: CompiledModel on the
  CPU accelerator, XNNPACK, --num_threads), its median and mean per run;
- `tflite_c_timed_loop.py`, a plain ctypes loop over the same C library infermark's runtime=c loads,
  which tells the harness's share apart from the difference between the two TfLite builds;
- with --other-library LIB: the same loop over another TfLite C library (side `c-loop-other`), e.g.
  litert-lm-api 0.17.1's TfLite 2.22.0, the release line ai-edge-litert 2.3.0 was built from;
- `infermark run -b tflite --opt runtime=litert` (side `litert-api`: LiteRT's C API, a CompiledModel
  on the very libLiteRt.so litert-benchmark runs, threads through the same CPU options);
- `infermark run -b tflite --opt runtime=c` (TfLite's C API, XNNPACK delegate),
each with the same warm-up and run counts, and prints per-round ratios and their median.

Without --model it builds a convolution stack (random weights, seed 7, about 0.5 GFLOP, a few to
tens of ms a run) with export_tflite.py's schema writer, since litert-benchmark rounds to 0.01 ms
and tiny_cnn_tflite runs in microseconds.
  .venv/bin/python tools/peers/tflite_fidelity.py --rounds 5 --threads 1 2 [--other-library LIB] [--sides ...]
"""
import argparse
import importlib.metadata
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "zoo"))
SEED = 7
SIDES = ["litert", "litert-api", "c-loop", "c"]
RUNTIME_OF_SIDE = {"litert-api": "litert", "c": "c"}  # infermark's sides


def build_convnet(path: pathlib.Path) -> None:
    """Six 3x3 convolutions (32 to 256 channels, 112x112 NHWC input), a mean and a dense layer."""
    from export_tflite import TfliteGraph

    rng = np.random.default_rng(SEED)
    g = TfliteGraph()
    fb, ops = g.fb, g.fb.BuiltinOperator
    size, channels = 112, 3
    x = first = g.tensor("input", [1, size, size, channels])
    for i, (out_channels, stride) in enumerate([(32, 2), (64, 1), (64, 2), (128, 1), (128, 2), (256, 1)]):
        kernel = rng.normal(0, (2 / (9 * channels)) ** 0.5, (out_channels, 3, 3, channels)).astype(np.float32)
        size //= stride
        y = g.tensor(f"conv{i}", [1, size, size, out_channels])
        options = fb.Conv2DOptionsT()
        options.padding, options.strideH, options.strideW = fb.Padding.SAME, stride, stride
        options.fusedActivationFunction = fb.ActivationFunctionType.RELU
        g.op(ops.CONV_2D, [x, g.tensor(f"conv{i}/kernel", kernel.shape, kernel),
                           g.tensor(f"conv{i}/bias", [out_channels], np.zeros(out_channels, np.float32))], [y],
             fb.BuiltinOptions.Conv2DOptions, options)
        x, channels = y, out_channels
    pooled = g.tensor("pooled", [1, channels])
    options = fb.ReducerOptionsT()
    options.keepDims = False
    g.op(ops.MEAN, [x, g.tensor("axes", [2], np.array([1, 2], np.int32))], [pooled], fb.BuiltinOptions.ReducerOptions, options)
    dense = rng.normal(0, 0.05, (1000, channels)).astype(np.float32)
    logits = g.tensor("logits", [1, 1000])
    g.op(ops.FULLY_CONNECTED, [pooled, g.tensor("dense/kernel", dense.shape, dense),
                               g.tensor("dense/bias", [1000], np.zeros(1000, np.float32))], [logits],
         fb.BuiltinOptions.FullyConnectedOptions, fb.FullyConnectedOptionsT())
    g.write(path, [first], [logits])


def litert_benchmark(model, threads, warmup, runs, out):
    """(command, median ms, mean ms) of one litert-benchmark run."""
    result = out / "litert.json"
    command = [str(ROOT / ".venv/bin/litert-benchmark"), f"--model={model}", f"--num_threads={threads}",
               f"--warmup_runs={warmup}", f"--num_runs={runs}", f"--result_json={result}"]
    subprocess.run(command, check=True, capture_output=True)
    latency = json.loads(result.read_text())["latency"]
    return command, latency["median_ms"], latency["avg_ms"]


def c_loop(model, threads, warmup, runs, library=None):
    """(command, P50 ms, mean ms) of tflite_c_timed_loop.py on `library` (default: runtime=c's)."""
    command = [str(ROOT / ".venv/bin/python"), str(ROOT / "tools/peers/tflite_c_timed_loop.py"), str(model),
               "--threads", str(threads), "--warmup", str(warmup), "--runs", str(runs)]
    command += ["--library", str(library)] if library else []
    figures = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    return command, figures["p50_ms"], figures["mean_ms"]


INFERMARK = str(ROOT / "build/release/infermark")  # the default of --infermark


def infermark(binary, model, threads, warmup, runs, runtime, out):
    """(command, P50 ms, mean ms, settings) of one `infermark run -b tflite` of `binary`."""
    folder = out / f"infermark-{runtime}"
    command = [binary, "run", str(model), "-b", "tflite", "--threads", str(threads),
               "--warmup", str(warmup), "--runs", str(runs), "--opt", f"runtime={runtime}", "--out", str(folder)]
    subprocess.run(command, check=True, capture_output=True)
    result = json.loads(sorted(folder.glob("*/*.json"))[-1].read_text())
    settings = {s["key"]: s["effective"] for s in result["settings"]["effective"]}
    latency = result["latency_ms"]
    return command, latency["percentiles"]["p50"]["value"], latency["mean"], settings


def shown(command, binary=INFERMARK):
    return " ".join("infermark" if str(part) == binary else str(part).replace(str(ROOT) + "/", "") for part in command)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=pathlib.Path, help=".tflite model (default: the convolution stack built here)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--other-library", type=pathlib.Path, help="another TfLite C library for a c-loop-other side")
    parser.add_argument("--sides", nargs="+", choices=SIDES, default=SIDES, help="sides to run (litert always runs)")
    parser.add_argument("--infermark", default=INFERMARK, help="the infermark binary (default: build/release's)")
    args = parser.parse_args()
    sides = ["litert"] + [side for side in args.sides if side != "litert"] + (["c-loop-other"] if args.other_library else [])

    with tempfile.TemporaryDirectory() as scratch:
        out = pathlib.Path(scratch)
        model = args.model
        if model is None:
            model = out / "convnet_tflite.tflite"
            build_convnet(model)
        library = (ROOT / "third_party/tflite-c/SOURCE").read_text().split()[0]
        print(f"model {model.name}; litert-benchmark from ai-edge-litert {importlib.metadata.version('ai-edge-litert')}; "
              f"infermark tflite runtime=c: TfLite {(ROOT / 'third_party/tflite-c/VERSION').read_text().strip()} ({library})")
        if args.other_library:
            print(f"c-loop-other: {shown([args.other_library])}")
        for threads in args.threads:
            rows, shown_commands = [], {}
            for round_index in range(args.rounds):
                order = sides[round_index % len(sides):] + sides[:round_index % len(sides)]  # each side leads in turn
                figures = {}
                for side in order:
                    if side == "litert":
                        command, p50, mean = litert_benchmark(model, threads, args.warmup, args.runs, out)
                    elif side == "c-loop":
                        command, p50, mean = c_loop(model, threads, args.warmup, args.runs)
                    elif side == "c-loop-other":
                        command, p50, mean = c_loop(model, threads, args.warmup, args.runs, args.other_library)
                    else:
                        command, p50, mean, settings = infermark(args.infermark, model, threads, args.warmup,
                                                                 args.runs, RUNTIME_OF_SIDE[side], out)
                        if settings["intra_op_threads"] != str(threads) or not settings["xnnpack"].startswith("on"):
                            sys.exit(f"runtime={side} ran {settings}, not {threads} thread(s) with XNNPACK")
                    figures[side] = (p50, mean)
                    shown_commands[side] = shown(command, args.infermark).replace(str(out) + "/", "$OUT/")
                rows.append(figures)
                print(f"  t{threads} round {round_index + 1} ({' → '.join(order)}): P50 ms "
                      + ", ".join(f"{side} {figures[side][0]:.3f}" for side in sides), flush=True)
            print(f"\nthreads {threads}, {args.rounds} rounds of {args.runs} runs (after {args.warmup} warm-up):")
            for side, command in shown_commands.items():
                print(f"  {side}: {command}")
            # On a shared machine other work slows a side in some rounds: the best (lowest) P50 of each
            # side over the rounds is its least disturbed figure, and their ratio a second estimate.
            best_litert = min(r["litert"][0] for r in rows)
            print("| side | median P50 ms | median mean ms | P50 ratio to litert-benchmark (median of rounds, range) "
                  "| best P50 ms | best / best of litert-benchmark |")
            print("|---|---:|---:|---|---:|---:|")
            for side in sides:
                p50 = statistics.median(r[side][0] for r in rows)
                mean = statistics.median(r[side][1] for r in rows)
                ratios = [r[side][0] / r["litert"][0] for r in rows]
                ratio = "1 (reference)" if side == "litert" else \
                    f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})"
                best = min(r[side][0] for r in rows)
                print(f"| {side} | {p50:.3f} | {mean:.3f} | {ratio} | {best:.3f} | {best / best_litert:.3f} |")
            for side, peer in [("c", "c-loop"), ("litert-api", "c")]:
                if side not in sides or peer not in sides:
                    continue
                ratios = [r[side][0] / r[peer][0] for r in rows]
                print(f"{side} / {peer} P50: {statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})")
            print()


if __name__ == "__main__":
    main()
