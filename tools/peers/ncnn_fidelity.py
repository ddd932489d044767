"""Fidelity of infermark's ncnn backend against ncnn's own API, on the same model, input bytes,
threads and fp32 options, sides in a rotated order every round (rounds.py). The sdist infermark
builds ncnn from carries no benchncnn, so the peers are plain timed loops over ncnn's own API:

- `ncnn C loop` (ncnn_c_timed_loop.py): ctypes over the very libncnn.so infermark loads, so the
  ratio is what the harness adds or hides;
- `ncnn Python loop`: PyPI's ncnn module of the same version (its own build of ncnn, wheels' flags),
  the same extractor-per-run loop;
- `infermark ncnn`: `infermark run -b ncnn --threads T --warmup W --runs R --input input=INPUT.npy`.

  .venv/bin/python tools/peers/ncnn_fidelity.py [--model models/efficientnet_lite0.ncnn.param] [--rounds 5] [--threads 2]
Prints each round, then each side's P50 and mean (median and range over rounds) and the ratios
infermark / peer (median and range of the per-round ratios).
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from rounds import DEFAULT_ROUNDS, run_rounds, spread  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv/bin/python"
SIDES = ["ncnn C loop", "ncnn Python loop", "infermark ncnn"]


def python_loop(model: pathlib.Path, value: np.ndarray, threads: int, warmup: int, runs: int) -> tuple:
    """(P50 ms, mean ms) of PyPI's ncnn module in the C loop's loop, in a child process of its own."""
    code = f"""
import json, statistics, time, numpy as np, ncnn
net = ncnn.Net()
net.opt.num_threads = {threads}
net.opt.use_vulkan_compute = False
net.opt.use_fp16_packed = net.opt.use_fp16_storage = net.opt.use_fp16_arithmetic = net.opt.use_bf16_storage = False
assert net.load_param({str(model)!r}) == 0 and net.load_model({str(model)[:-len('.param')] + '.bin'!r}) == 0
mat = ncnn.Mat(np.load({str(value)!r})[0].astype(np.float32)).clone()
def once():
    started = time.perf_counter()
    ex = net.create_extractor(); ex.input("in0", mat); rc, out = ex.extract("out0")
    return (time.perf_counter() - started) * 1e3
for _ in range({warmup}): once()
times = [once() for _ in range({runs})]
print(json.dumps({{"p50_ms": statistics.median(times), "mean_ms": statistics.fmean(times)}}))
"""
    done = subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout)
    return figures["p50_ms"], figures["mean_ms"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=pathlib.Path, default=ROOT / "models/efficientnet_lite0.ncnn.param")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--infermark", default=str(ROOT / "build/release/infermark"))
    args = parser.parse_args()
    manifest = json.loads(args.model.with_name(args.model.name[: -len(".ncnn.param")] + ".json").read_text())
    spec = manifest["inputs"][0]
    shape = [1 if isinstance(d, str) else d for d in spec["shape"]]

    with tempfile.TemporaryDirectory() as scratch:
        out = pathlib.Path(scratch)
        value = out / "input.npy"
        np.save(value, np.random.default_rng(7).standard_normal(shape, dtype=np.float32))
        commands = {
            "ncnn C loop": [str(PYTHON), str(ROOT / "tools/peers/ncnn_c_timed_loop.py"), str(args.model), str(value),
                            "--threads", str(args.threads), "--warmup", str(args.warmup), "--runs", str(args.runs)],
            "infermark ncnn": [args.infermark, "run", str(args.model), "-b", "ncnn", "--threads", str(args.threads),
                               "--warmup", str(args.warmup), "--runs", str(args.runs), "--input", f"{spec['name']}={value}",
                               "--out", str(out / "infermark")],
        }

        def measure(side):
            if side == "ncnn Python loop":
                return python_loop(args.model, value, args.threads, args.warmup, args.runs)
            if side == "ncnn C loop":
                figures = json.loads(subprocess.run(commands[side], capture_output=True, text=True, check=True).stdout)
                return figures["p50_ms"], figures["mean_ms"]
            started = time.time()
            subprocess.run(commands[side], capture_output=True, text=True, check=True)
            result = max((json.loads(p.read_text()) for p in (out / "infermark").glob("*/*.json")
                          if p.stat().st_mtime >= started - 1), key=lambda r: r["started_at"])
            settings = {s["key"]: s for s in result["settings"]["effective"]}
            if settings["intra_op_threads"]["effective"] != str(args.threads) or settings["precision"]["effective"] != "fp32":
                sys.exit(f"infermark ran {settings['intra_op_threads']} / {settings['precision']}")
            return result["latency_ms"]["percentiles"]["p50"]["value"], result["latency_ms"]["mean"]

        rounds = run_rounds(SIDES, args.rounds, measure, lambda f: f"P50 {f[0]:.2f} ms, mean {f[1]:.2f} ms")
        print(f"model {args.model.name}, batch 1, {args.threads} threads, {args.warmup} warm-up + {args.runs} timed runs, "
              f"{args.rounds} rounds; ncnn {json.loads(subprocess.run(commands['ncnn C loop'][:2] + [str(args.model), str(value), '--runs', '1', '--warmup', '0'], capture_output=True, text=True).stdout)['version']}")
        print("\n| side | P50 ms, median (range) | mean ms, median (range) |\n|---|---:|---:|")
        for side in SIDES:
            print(f"| {side} | {spread([r[side][0] for r in rounds], 2)} | {spread([r[side][1] for r in rounds], 2)} |")
        print("\n| infermark / peer | P50 ratio, median (range) | mean ratio, median (range) |\n|---|---:|---:|")
        for peer in SIDES[:2]:
            print(f"| infermark ncnn / {peer} | {spread([r['infermark ncnn'][0] / r[peer][0] for r in rounds])} | "
                  f"{spread([r['infermark ncnn'][1] / r[peer][1] for r in rounds])} |")
        print("\ncommands:\n" + "\n".join(f"  {side}: {' '.join(c).replace(str(ROOT) + '/', '').replace(scratch, '$OUT')}"
                                           for side, c in commands.items()))


if __name__ == "__main__":
    main()
