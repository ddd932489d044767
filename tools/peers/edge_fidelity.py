"""Fidelity of infermark's edge backends (ncnn, MNN) against each framework's own API, on the same
model, input bytes, threads and fp32 options, sides in a rotated order every round (rounds.py).
Neither source infermark builds from carries the framework's benchmark program (ncnn's sdist has
no benchncnn; mnn-sys vendors no tools), so the peers are plain timed loops over its own API:

- ncnn: `ncnn C loop` (ncnn_c_timed_loop.py: ctypes over the very libncnn.so infermark loads, so the
  ratio is what the harness adds or hides) and `ncnn Python loop` (PyPI's ncnn module of the same
  version, its own build), each run one extractor made, fed and extracted, as benchncnn times it;
- MNN: `MNN C++ loop` (mnn_timed_loop.cpp, compiled here against the very libMNN.so infermark
  loads) and `MNN Python loop` (PyPI's MNN module of the same version, its own build), each an
  Interpreter, one CPU session at Precision_High, each timed run the input copied in (the session
  reuses its input's memory during an inference, as infermark's backend does) and runSession;
- `infermark <framework>`: `infermark run -b <framework> --threads T --warmup W --runs R --input NAME=INPUT.npy`.

  .venv/bin/python tools/peers/edge_fidelity.py --framework ncnn|mnn [--model M] [--rounds 5] [--threads 2]
Prints each round, then each side's P50 and mean (median and range over rounds) and the ratios
infermark / peer (median and range of the per-round ratios).
"""
import argparse
import importlib.metadata
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from rounds import DEFAULT_ROUNDS, run_rounds, spread  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv/bin/python"
PEERS = {"ncnn": ["ncnn C loop", "ncnn Python loop"], "mnn": ["MNN C++ loop", "MNN Python loop"]}
MNN_DIR = ROOT / "third_party/mnn/install"


def mnn_loop_binary(folder: pathlib.Path) -> pathlib.Path:
    """mnn_timed_loop.cpp built against third_party/mnn's libMNN.so, as the backend is (-O3)."""
    binary = folder / "mnn_timed_loop"
    subprocess.run(["g++", "-std=c++20", "-O3", "-DNDEBUG", f"-I{MNN_DIR}/include", str(ROOT / "tools/peers/mnn_timed_loop.cpp"),
                    "-o", str(binary), f"-L{MNN_DIR}/lib", "-lMNN", f"-Wl,-rpath,{MNN_DIR}/lib"], check=True)
    return binary
DEFAULT_MODEL = {"ncnn": "models/efficientnet_lite0.ncnn.param", "mnn": "models/efficientnet_lite0.mnn"}
NCNN_LOOP = """
import json, statistics, time, numpy as np, ncnn
net = ncnn.Net()
net.opt.num_threads = {threads}
net.opt.use_vulkan_compute = False
net.opt.use_fp16_packed = net.opt.use_fp16_storage = net.opt.use_fp16_arithmetic = net.opt.use_bf16_storage = False
assert net.load_param({model!r}) == 0 and net.load_model({model!r}[:-len('.param')] + '.bin') == 0
mat = ncnn.Mat(np.load({value!r})[0].astype(np.float32)).clone()
def once():
    started = time.perf_counter()
    ex = net.create_extractor(); ex.input("in0", mat); rc, out = ex.extract("out0")
    return (time.perf_counter() - started) * 1e3
"""
MNN_LOOP = """
import json, statistics, time, numpy as np, MNN
value = np.load({value!r}).astype(np.float32)
interpreter = MNN.Interpreter({model!r})
session = interpreter.createSession({{"backend": "CPU", "precision": "high", "numThread": {threads}}})
tensor = interpreter.getSessionInput(session, {input!r})
interpreter.resizeTensor(tensor, value.shape)
interpreter.resizeSession(session)
host = MNN.Tensor(value.shape, MNN.Halide_Type_Float, value, MNN.Tensor_DimensionType_Caffe)
def once():
    started = time.perf_counter()
    tensor.copyFrom(host)
    interpreter.runSession(session)
    return (time.perf_counter() - started) * 1e3
"""
TIMED = """
for _ in range({warmup}): once()
times = [once() for _ in range({runs})]
print(json.dumps({{"p50_ms": statistics.median(times), "mean_ms": statistics.fmean(times)}}))
"""


def python_loop(framework: str, model: pathlib.Path, value: pathlib.Path, input_name: str, threads: int, warmup: int,
                runs: int) -> tuple:
    """(P50 ms, mean ms) of the framework's PyPI module in a timed loop, in a child process of its own."""
    code = (NCNN_LOOP if framework == "ncnn" else MNN_LOOP).format(model=str(model), value=str(value), threads=threads,
                                                                  input=input_name)
    code += TIMED.format(warmup=warmup, runs=runs)
    done = subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures["p50_ms"], figures["mean_ms"]


def manifest_of(model: pathlib.Path) -> dict:
    name = model.name
    stem = name[: -len(".ncnn.param")] if name.endswith(".ncnn.param") else model.stem
    return json.loads(model.with_name(stem + ".json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--framework", choices=sorted(PEERS), required=True)
    parser.add_argument("--model", type=pathlib.Path, help="default: EfficientNet-Lite0 in the framework's format")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--infermark", default=str(ROOT / "build/release/infermark"))
    args = parser.parse_args()
    framework = args.framework
    model = args.model or ROOT / DEFAULT_MODEL[framework]
    spec = manifest_of(model)["inputs"][0]
    shape = [1 if isinstance(d, str) else d for d in spec["shape"]]
    ours = f"infermark {framework}"
    sides = PEERS[framework] + [ours]

    with tempfile.TemporaryDirectory() as scratch:
        out = pathlib.Path(scratch)
        value = out / "input.npy"
        np.save(value, np.random.default_rng(7).standard_normal(shape, dtype=np.float32))
        commands = {
            "ncnn C loop": [str(PYTHON), str(ROOT / "tools/peers/ncnn_c_timed_loop.py"), str(model), str(value),
                            "--threads", str(args.threads), "--warmup", str(args.warmup), "--runs", str(args.runs)],
            ours: [args.infermark, "run", str(model), "-b", framework, "--threads", str(args.threads),
                   "--warmup", str(args.warmup), "--runs", str(args.runs), "--input", f"{spec['name']}={value}",
                   "--out", str(out / "infermark")],
        }

        if framework == "mnn":
            raw = out / "input.raw"
            np.load(value).astype(np.float32).tofile(raw)
            commands["MNN C++ loop"] = [str(mnn_loop_binary(out)), str(model), spec["name"], str(raw), *map(str, shape),
                                        str(args.threads), str(args.warmup), str(args.runs)]

        def measure(side):
            if side.endswith("Python loop"):
                return python_loop(framework, model, value, spec["name"], args.threads, args.warmup, args.runs)
            if side in ("ncnn C loop", "MNN C++ loop"):
                done = subprocess.run(commands[side], capture_output=True, text=True, check=True)
                figures = json.loads(done.stdout.strip().splitlines()[-1])  # MNN prints its CPU features first
                return figures["p50_ms"], figures["mean_ms"]
            started = time.time()
            subprocess.run(commands[side], capture_output=True, text=True, check=True)
            result = max((json.loads(p.read_text()) for p in (out / "infermark").glob("*/*.json")
                          if p.stat().st_mtime >= started - 1), key=lambda r: r["started_at"])
            settings = {s["key"]: s for s in result["settings"]["effective"]}
            if settings["intra_op_threads"]["effective"] != str(args.threads) or settings["precision"]["effective"] != "fp32":
                sys.exit(f"infermark ran {settings['intra_op_threads']} / {settings['precision']}")
            return result["latency_ms"]["percentiles"]["p50"]["value"], result["latency_ms"]["mean"]

        rounds = run_rounds(sides, args.rounds, measure, lambda f: f"P50 {f[0]:.2f} ms, mean {f[1]:.2f} ms")
        print(f"model {model.name}, batch 1, {args.threads} threads, {args.warmup} warm-up + {args.runs} timed runs, "
              f"{args.rounds} rounds; {framework} {importlib.metadata.version('ncnn' if framework == 'ncnn' else 'MNN')} "
              "(the PyPI module's version; infermark's library is built from the same release)")
        print("\n| side | P50 ms, median (range) | mean ms, median (range) |\n|---|---:|---:|")
        for side in sides:
            print(f"| {side} | {spread([r[side][0] for r in rounds], 2)} | {spread([r[side][1] for r in rounds], 2)} |")
        print("\n| infermark / peer | P50 ratio, median (range) | mean ratio, median (range) |\n|---|---:|---:|")
        for peer in PEERS[framework]:
            print(f"| {ours} / {peer} | {spread([r[ours][0] / r[peer][0] for r in rounds])} | "
                  f"{spread([r[ours][1] / r[peer][1] for r in rounds])} |")
        print("\ncommands:\n" + "\n".join(f"  {side}: {' '.join(c).replace(str(ROOT) + '/', '').replace(scratch, '$OUT')}"
                                           for side, c in commands.items() if side in sides))


if __name__ == "__main__":
    main()
