"""Fidelity of infermark's edge backends (ncnn, MNN, ExecuTorch, Paddle Inference) against each framework's own API, on the same
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
- ExecuTorch: `ExecuTorch C++ loop` (executorch_timed_loop.cpp, compiled here against the very
  libraries infermark loads, the executorch wheel's, driven as its executor_runner does) and
  `ExecuTorch Python loop` (the same wheel's Python runtime, `executorch.runtime`, its own build of
  the runtime, in third_party/llm-venv), each timed run the input set and the method executed;
- Paddle Inference: `Paddle C++ loop` (paddle_timed_loop.cpp, compiled here against the very
  libpaddle.so infermark loads, through the same declarations) and `Paddle Python loop` (the same
  wheel's `paddle.inference` module in third_party/paddle-venv), each CPU with oneDNN, each timed
  run the input reshaped, copied in and the predictor run;
- `infermark <framework>`: `infermark run -b <framework> --threads T --warmup W --runs R --input NAME=INPUT.npy`.

  .venv/bin/python tools/peers/edge_fidelity.py --framework ncnn|mnn|executorch|paddle [--model M] [--rounds 5] [--threads 2]
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
LLM_PYTHON = ROOT / "third_party/llm-venv/bin/python"  # PyTorch 2.x and the executorch wheel
PEERS = {"ncnn": ["ncnn C loop", "ncnn Python loop"], "mnn": ["MNN C++ loop", "MNN Python loop"],
         "executorch": ["ExecuTorch C++ loop", "ExecuTorch Python loop"], "paddle": ["Paddle C++ loop", "Paddle Python loop"]}
PADDLE_PYTHON = ROOT / "third_party/paddle-venv/bin/python"
PADDLE_BASE = next((ROOT / "third_party/paddle-venv/lib").glob("python3.*/site-packages/paddle/base"), None)
MNN_DIR = ROOT / "third_party/mnn/install"
EXECUTORCH_DIR = ROOT / "third_party/executorch"
# The C++ loops: source, and the compiler arguments that build it against the backend's own libraries.
LOOPS = {
    "mnn": ("mnn_timed_loop", [f"-I{MNN_DIR}/include", f"-L{MNN_DIR}/lib", "-lMNN", f"-Wl,-rpath,{MNN_DIR}/lib"]),
    "executorch": ("executorch_timed_loop", [
        f"-I{ROOT / 'src'}", f"-isystem{EXECUTORCH_DIR}/include",
        f"-isystem{EXECUTORCH_DIR}/include/executorch/runtime/core/portable_type/c10",
        "-DC10_USING_CUSTOM_GENERATED_MACROS", "-DET_EVENT_TRACER_ENABLED", "-DET_USE_THREADPOOL", "-Wl,--no-as-needed",
        *(f"{EXECUTORCH_DIR}/lib/lib{lib}.so" for lib in ("executorch", "executorch_threadpool", "executorch_backend_xnnpack",
                                                           "executorch_kernels_optimized", "executorch_kernels_quantized")),
        f"-Wl,-rpath,{EXECUTORCH_DIR}/lib"]),
    "paddle": ("paddle_timed_loop", [f"-I{ROOT / 'src'}", f"{PADDLE_BASE}/libpaddle.so", "-Wl,--no-as-needed", "-lpython3.11",
                                     f"-Wl,-rpath,{PADDLE_BASE}"]),
}


def loop_binary(framework: str, folder: pathlib.Path) -> pathlib.Path:
    """The framework's C++ loop built against the library the backend loads, as the backend is (-O3)."""
    name, flags = LOOPS[framework]
    binary = folder / name
    subprocess.run(["g++", "-std=c++20", "-O3", "-DNDEBUG", str(ROOT / "tools/peers" / f"{name}.cpp"), "-o", str(binary), *flags],
                   check=True)
    return binary
DEFAULT_MODEL = {"ncnn": "models/efficientnet_lite0.ncnn.param", "mnn": "models/efficientnet_lite0.mnn",
                 "executorch": "models/efficientnet_lite0.pte", "paddle": "models/efficientnet_lite0.paddle"}
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
PADDLE_LOOP = """
import json, statistics, time, numpy as np, paddle.inference as pi
config = pi.Config({model!r} + "/model.json", {model!r} + "/model.pdiparams")
config.disable_gpu(); config.enable_mkldnn(); config.set_cpu_math_library_num_threads({threads}); config.disable_glog_info()
config.delete_pass("operator_reshape_onednn_fuse_pass")  # as infermark's backend: it breaks EfficientNet in 3.3.1
predictor = pi.create_predictor(config)
handle = predictor.get_input_handle(predictor.get_input_names()[0])
value = np.load({value!r}).astype(np.float32)
def once():
    started = time.perf_counter()
    handle.reshape(value.shape); handle.copy_from_cpu(value); predictor.run()
    return (time.perf_counter() - started) * 1e3
"""
EXECUTORCH_LOOP = """
import json, statistics, time, numpy as np, torch
from executorch.extension.pybindings import portable_lib
from executorch.runtime import Runtime
portable_lib._unsafe_reset_threadpool({threads})
assert portable_lib._threadpool_get_thread_count() == {threads}
method = Runtime.get().load_program({model!r}).load_method("forward")
value = torch.from_numpy(np.load({value!r}).astype(np.float32))
def once():
    started = time.perf_counter()
    method.execute([value])
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
    loop = {"ncnn": NCNN_LOOP, "mnn": MNN_LOOP, "executorch": EXECUTORCH_LOOP, "paddle": PADDLE_LOOP}[framework]
    code = loop.format(model=str(model), value=str(value), threads=threads, input=input_name)
    code += TIMED.format(warmup=warmup, runs=runs)
    python = {"executorch": LLM_PYTHON, "paddle": PADDLE_PYTHON}.get(framework, PYTHON)
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures["p50_ms"], figures["mean_ms"]


VERSION = {
    "ncnn": lambda: f"{importlib.metadata.version('ncnn')} (the PyPI module's version; infermark's library is built from the same release)",
    "mnn": lambda: f"{importlib.metadata.version('MNN')} (the PyPI module's version; infermark's library is built from the same release)",
    "executorch": lambda: f"{(EXECUTORCH_DIR / 'VERSION').read_text().strip()} (the wheel both sides load)",
    "paddle": lambda: f"{(ROOT / 'third_party/paddle-venv/SOURCE').read_text().split()[0]} (the wheel both sides load)",
}


def manifest_of(model: pathlib.Path) -> dict:
    name = model.name
    stem = name[: -len(".ncnn.param")] if name.endswith(".ncnn.param") else model.stem  # x.paddle/ -> x
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

        raw = out / "input.raw"
        np.load(value).astype(np.float32).tofile(raw)
        if framework == "mnn":
            commands["MNN C++ loop"] = [str(loop_binary(framework, out)), str(model), spec["name"], str(raw), *map(str, shape),
                                        str(args.threads), str(args.warmup), str(args.runs)]
        if framework in ("executorch", "paddle"):
            commands[PEERS[framework][0]] = [str(loop_binary(framework, out)), str(model), str(raw), *map(str, shape),
                                               str(args.threads), str(args.warmup), str(args.runs)]

        def measure(side):
            if side.endswith("Python loop"):
                return python_loop(framework, model, value, spec["name"], args.threads, args.warmup, args.runs)
            if side in ("ncnn C loop", "MNN C++ loop", "ExecuTorch C++ loop", "Paddle C++ loop"):
                done = subprocess.run(commands[side], capture_output=True, text=True, check=True)
                figures = json.loads(done.stdout.strip().splitlines()[-1])  # MNN prints its CPU features first
                return figures["p50_ms"], figures["mean_ms"]
            started = time.time()
            subprocess.run(commands[side], capture_output=True, text=True, check=True)
            result = max((json.loads(p.read_text()) for p in (out / "infermark").glob("*/*.json")
                          if p.stat().st_mtime >= started - 1), key=lambda r: r["started_at"])
            settings = {s["key"]: s for s in result["settings"]["effective"]}
            if settings["intra_op_threads"]["effective"] != str(args.threads) or \
                    settings["precision"]["effective"] not in ("fp32", "as the program's weights"):
                sys.exit(f"infermark ran {settings['intra_op_threads']} / {settings['precision']}")
            return result["latency_ms"]["percentiles"]["p50"]["value"], result["latency_ms"]["mean"]

        rounds = run_rounds(sides, args.rounds, measure, lambda f: f"P50 {f[0]:.2f} ms, mean {f[1]:.2f} ms")
        print(f"model {model.name}, batch 1, {args.threads} threads, {args.warmup} warm-up + {args.runs} timed runs, "
              f"{args.rounds} rounds; {framework} {VERSION[framework]()}")
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
