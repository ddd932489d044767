"""`infermark serve` beside Triton Inference Server on the same model, measured by the same client.

All serve models/tiny_cnn.onnx over KServe v2 HTTP with ONNX Runtime on 1 intra-op thread, one
model instance and no dynamic batching (one request per ONNX Runtime call):

- Triton 2.51 (the `tritonserver` PyTriton bundles; third_party/pytriton-venv, made by
  `scripts/setup`) with a Python-backend model, tools/peers/triton_onnx_model.py
  as `model.py`, calling onnxruntime. Each request crosses from the server to the backend's stub
  process (shared-memory IPC) and back.
- The same Triton started by PyTriton, the model a Python callable calling onnxruntime
  (tools/peers/pytriton_onnx_server.py): PyTriton's own `model.py` in the stub forwards each
  request to the process that holds the callable, a second hop.
- `infermark serve -b onnxruntime --threads 1`: ONNX Runtime's C++ API in the server process.

A production Triton would run the model in its ONNX Runtime backend, which no registry reachable
here offers: the Python backend is what this Triton can do.

Triton's perf_analyzer (from .venv's tritonclient wheel) drives each over HTTP with binary tensors
at each concurrency, the same input bytes for every side (one seeded random tensor, given to
perf_analyzer as an input-data folder), the sides' order rotated every round (A B C, B C A, C A B,
...: tools/peers/rounds.py; the machines are shared and noisy). All servers stay up the whole time;
one is measured at a time. Before measuring, the script checks that all return the same logits for
that input.

Usage: triton_vs_serve.py [--infermark PATH] [--models DIR] [--pytriton-venv DIR] [--venv DIR]
                          [--rounds N] [--interval-ms MS] [--concurrency C ...]
Prints Markdown tables with the versions and the exact commands it ran.
"""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rounds import DEFAULT_ROUNDS, run_rounds, spread  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from peer_servers import start_peer  # noqa: E402
from serve_support import free_port, http, infer_body, start_server, stop_server, wait_until  # noqa: E402

MODEL = "tiny_cnn"
TRITON_MODEL_PY = "Triton, Python backend (model.py)"
TRITON_PYTRITON = "Triton, PyTriton callable"
INFERMARK = "infermark serve"


def shown(command, replace=None):
    """A command as it would be typed from the repository's root: its paths relative to the root,
    other paths with the prefixes in `replace` ({prefix: stand-in}) replaced."""
    replace = replace or {}

    def word(part):
        for prefix, stand_in in replace.items():
            if part == prefix or part.startswith(prefix + os.sep):
                return stand_in + part[len(prefix):]
        if os.path.isabs(part) and part.startswith(ROOT + os.sep):
            return os.path.relpath(part, ROOT)
        return part
    return " ".join(shlex.quote(word(part)) for part in command)


def package_version(venv, package):
    return subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                           f"import importlib.metadata as m; print(m.version('{package}'))"],
                          capture_output=True, text=True, check=True).stdout.strip()


TRITON_TYPES = {"tensor(float)": "TYPE_FP32", "tensor(double)": "TYPE_FP64", "tensor(float16)": "TYPE_FP16",
                "tensor(int64)": "TYPE_INT64", "tensor(int32)": "TYPE_INT32", "tensor(int8)": "TYPE_INT8",
                "tensor(uint8)": "TYPE_UINT8", "tensor(bool)": "TYPE_BOOL"}


def python_backend_repository(model, directory):
    """A Triton model repository with MODEL/config.pbtxt (Python backend, no batching, one CPU instance)
    and MODEL/1/model.py (tools/peers/triton_onnx_model.py)."""
    import onnxruntime  # .venv's, only to read the model's inputs and outputs
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])

    def tensors(args):
        return ", ".join(f'{{ name: "{a.name}", data_type: {TRITON_TYPES[a.type]}, dims: '
                         f'[ {", ".join(str(d) if isinstance(d, int) and d > 0 else "-1" for d in a.shape)} ] }}'
                         for a in args)
    os.makedirs(os.path.join(directory, MODEL, "1"))
    shutil.copy(os.path.join(ROOT, "tools", "peers", "triton_onnx_model.py"),
                os.path.join(directory, MODEL, "1", "model.py"))
    with open(os.path.join(directory, MODEL, "config.pbtxt"), "w") as f:
        f.write(f'name: "{MODEL}"\nbackend: "python"\nmax_batch_size: 0\n'
                f"input [ {tensors(session.get_inputs())} ]\noutput [ {tensors(session.get_outputs())} ]\n"
                "instance_group [ { count: 1, kind: KIND_CPU } ]\n"
                f'parameters: {{ key: "onnx_file", value: {{ string_value: "{model}" }} }}\n'
                'parameters: { key: "intra_op_threads", value: { string_value: "1" } }\n')


def start_triton_python_backend(venv, model, work):
    """The tritonserver binary PyTriton bundles, on a repository with a Python-backend model.py; set up
    the way PyTriton sets it up: a copy of the server with the stub for this Python beside the Python
    backend, the venv's bin/ on PATH (the stub's interpreter finds the venv's packages through it) and
    the wheel's libraries on LD_LIBRARY_PATH. Returns (process, address, command)."""
    site = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))[0]
    python_version = os.path.basename(os.path.dirname(site))[len("python"):]
    server = os.path.join(work, "tritonserver")
    shutil.copytree(os.path.join(site, "pytriton", "tritonserver"), server,
                    ignore=shutil.ignore_patterns("python_backend_stubs"))
    shutil.copy(os.path.join(site, "pytriton", "tritonserver", "python_backend_stubs", python_version,
                             "triton_python_backend_stub"), os.path.join(server, "backends", "python"))
    repository = os.path.join(work, "model_repository")
    python_backend_repository(model, repository)
    http_port, grpc_port, metrics_port = free_port(), free_port(), free_port()
    command = [os.path.join(server, "bin", "tritonserver"), "--model-repository", repository,
               "--backend-directory", os.path.join(server, "backends"), "--cache-directory", os.path.join(server, "caches"),
               "--http-address", "127.0.0.1", "--http-port", str(http_port), "--grpc-address", "127.0.0.1",
               "--grpc-port", str(grpc_port), "--metrics-port", str(metrics_port), "--allow-gpu-metrics", "false",
               "--exit-timeout-secs", "10"]
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join([os.path.join(venv, "bin"), environment.get("PATH", "")])
    environment["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [os.path.join(site, "nvidia_pytriton.libs"),
                                                                   environment.get("LD_LIBRARY_PATH")]))
    log_path = os.path.join(work, "tritonserver.log")
    process = subprocess.Popen(command, stdout=open(log_path, "w"), stderr=subprocess.STDOUT, env=environment)
    address = f"127.0.0.1:{http_port}"

    def ready():
        if process.poll() is not None:
            raise RuntimeError(f"tritonserver exited with code {process.returncode}; see {log_path}")
        return http(address, "GET", f"/v2/models/{MODEL}/ready")[0] == 200
    try:
        wait_until(ready, 180, "tritonserver ready")
    except BaseException:
        stop_triton(process)
        raise
    return process, address, command


def stop_triton(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def the_input():
    """The one input every side gets (logits check and perf_analyzer alike)."""
    return np.random.default_rng(7).standard_normal((1, 3, 32, 32)).astype(np.float32)


def input_data_folder(work):
    """perf_analyzer's --input-data folder: one raw little-endian file per input, named after it."""
    folder = os.path.join(work, "input-data")
    os.makedirs(folder, exist_ok=True)
    the_input().astype("<f4").tofile(os.path.join(folder, "input"))
    return folder


def logits(address):
    image = the_input()
    status, _, body = http(address, "POST", f"/v2/models/{MODEL}/infer", infer_body(image))
    if status != 200:
        raise RuntimeError(f"infer on {address}: HTTP {status}: {body[:300]!r}")
    output = next(o for o in json.loads(body)["outputs"] if o["name"] == "logits")
    return np.array(output["data"], dtype=np.float32)


def perf_analyzer_command(venv, address, concurrency, interval_ms, shape="input:1,3,32,32", input_data=None):
    """Three windows, merged into one figure. --stability-percentage 1000 turns the stability check off:
    on a shared 2-core machine P99 moves by more than 2x between windows, and every window counts."""
    return [os.path.join(venv, "bin", "perf_analyzer"), "-m", MODEL, "-u", address, "-i", "http",
            "--concurrency-range", str(concurrency), "--measurement-interval", str(interval_ms),
            "--stability-percentage", "1000", "--max-trials", "3", "--percentile", "99",
            "--shape", shape] + (["--input-data", input_data] if input_data else [])


def cuda_runtime_lib(venv):
    """perf_analyzer links libcudart.so.12 even on CPU: the nvidia-cuda-runtime-cu12 wheel's lib/."""
    return glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "nvidia", "cuda_runtime", "lib"))


def perf_analyzer(venv, address, concurrency, interval_ms, shape="input:1,3,32,32", input_data=None):
    environment = dict(os.environ)
    environment["LD_LIBRARY_PATH"] = os.pathsep.join(cuda_runtime_lib(venv) + [environment.get("LD_LIBRARY_PATH", "")])
    command = perf_analyzer_command(venv, address, concurrency, interval_ms, shape, input_data)
    done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"perf_analyzer failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    out = done.stdout
    number = lambda pattern: float(re.search(pattern, out).group(1))  # noqa: E731
    return {"throughput": number(r"Throughput: ([0-9.]+) infer/sec"),
            "p50": number(r"p50 latency: (\d+) usec"), "p99": number(r"p99 latency: (\d+) usec"),
            "server_queue": number(r"queue (\d+) usec"), "server_compute": number(r"compute infer (\d+) usec"),
            "server_request": number(r"Avg request latency: (\d+) usec"), "requests": int(number(r"Request count: (\d+)"))}


def add_tool_arguments(parser):
    """Where infermark, the models, PyTriton's Triton and perf_analyzer are (shared with load_fidelity.py)."""
    parser.add_argument("--infermark", default=os.path.join(ROOT, "build", "release", "infermark"))
    parser.add_argument("--models", default=os.path.join(ROOT, "models"))
    parser.add_argument("--pytriton-venv", default=os.path.join(ROOT, "third_party", "pytriton-venv"))
    parser.add_argument("--venv", default=os.path.join(ROOT, ".venv"), help="venv with tritonclient's perf_analyzer")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_tool_arguments(parser)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--interval-ms", type=int, default=2000, help="perf_analyzer measurement window (3 per figure)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args()
    model = os.path.join(args.models, f"{MODEL}.onnx")
    work = tempfile.mkdtemp(prefix="triton-vs-serve-")

    serve_command = [args.infermark, "serve", "--model", model, "-b", "onnxruntime", "--threads", "1", "--port", "0",
                     "--io-threads", "2", "--out", os.path.join(work, "results")]
    processes = []  # (process, stop)
    try:
        backend, backend_address, backend_command = start_triton_python_backend(args.pytriton_venv, model, work)
        processes.append((backend, stop_triton))
        pytriton_peer = start_peer("triton", args.pytriton_venv, model)
        pytriton, pytriton_address, pytriton_command = pytriton_peer.process, pytriton_peer.http_address, pytriton_peer.command
        processes.append((pytriton, stop_triton))
        served, serve_address = start_server(args.infermark, serve_command[2:])
        processes.append((served, stop_server))
        sides = [(TRITON_MODEL_PY, backend_address), (TRITON_PYTRITON, pytriton_address), (INFERMARK, serve_address)]

        # Same model, same answers: the logits of one input agree.
        reference = logits(serve_address)
        difference = max(float(np.max(np.abs(logits(address) - reference))) for _, address in sides)
        if difference > 1e-4:
            raise RuntimeError(f"the servers disagree: max |logits difference| = {difference}")

        triton_version = json.loads(http(backend_address, "GET", "/v2")[2])["version"]
        serve_model = json.loads(http(serve_address, "GET", f"/v2/models/{MODEL}")[2])
        serve_ort = serve_model["parameters"]["variants"][0]["framework_version"]
        # infermark has no version of its own: the commit of the source tree holding the binary (a build may lag it).
        commit = subprocess.run(["git", "-C", os.path.dirname(os.path.realpath(args.infermark)), "rev-parse", "--short",
                                 "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown"

        input_data = input_data_folder(work)
        for _, address in sides:  # warm-up, not recorded
            perf_analyzer(args.venv, address, max(args.concurrency), 1000, input_data=input_data)

        rows = []
        addresses = dict(sides)
        for concurrency in args.concurrency:
            measured = run_rounds(
                [name for name, _ in sides], args.rounds,
                lambda name: perf_analyzer(args.venv, addresses[name], concurrency, args.interval_ms, input_data=input_data),
                describe=lambda f: f"{f['throughput']:.0f}/s P50 {f['p50']:.0f} µs P99 {f['p99']:.0f} µs",
                label=f"c={concurrency} ")
            rows += [{"server": name, "concurrency": concurrency, "round": i, **figures}
                     for i, m in enumerate(measured, 1) for name, figures in m.items()]
    finally:  # on failure WORK stays, with the servers' logs
        for process, stop in reversed(processes):
            stop(process)
    shutil.rmtree(work, ignore_errors=True)

    print(f"### infermark serve beside Triton ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} cores)\n")
    print(f"tiny_cnn (1x3x32x32 FP32), ONNX Runtime with 1 intra-op thread, one model instance, no dynamic "
          f"batching on any side; perf_analyzer over HTTP with binary tensors, {args.interval_ms} ms windows "
          f"(3 per figure), the same input bytes for every side, the sides' order rotated every round over "
          f"{args.rounds} rounds. All return the same logits "
          f"(max difference {difference:.1e}). Server queue and compute: perf_analyzer's server-side averages "
          f"(each server's statistics endpoint).\n")
    print("| server | concurrency | round | throughput (infer/s) | P50 (µs) | P99 (µs) | server queue (µs) | "
          "server compute (µs) |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    order = {name: i for i, (name, _) in enumerate(sides)}
    for row in sorted(rows, key=lambda r: (r["concurrency"], order[r["server"]], r["round"])):
        print(f"| {row['server']} | {row['concurrency']} | {row['round']} | {row['throughput']:,.0f} | {row['p50']:,.0f} | "
              f"{row['p99']:,.0f} | {row['server_queue']:,.0f} | {row['server_compute']:,.0f} |")

    def figure(server, concurrency, round_number, key):
        return next(r[key] for r in rows
                    if r["server"] == server and r["concurrency"] == concurrency and r["round"] == round_number)
    print("\n| concurrency | compared with | throughput, infermark / Triton | P50, infermark / Triton | "
          "P99, infermark / Triton |\n|---:|---|---:|---:|---:|")
    for concurrency in args.concurrency:
        for theirs, _ in sides[:2]:
            ratio = {key: spread((figure(INFERMARK, concurrency, n, key) / figure(theirs, concurrency, n, key)
                                  for n in range(1, args.rounds + 1)), 2)
                     for key in ("throughput", "p50", "p99")}
            print(f"| {concurrency} | {theirs} | {ratio['throughput']} | {ratio['p50']} | {ratio['p99']} |")
    print(f"\n(ratios within each round: median (range) over the rounds)\n\nVersions: tritonserver {triton_version} (its /v2 metadata), "
          f"nvidia-pytriton {package_version(args.pytriton_venv, 'nvidia-pytriton')}, onnxruntime "
          f"{package_version(args.pytriton_venv, 'onnxruntime')} (Python, inside Triton), infermark at {commit} "
          f"with ONNX Runtime {serve_ort} (C++ API), perf_analyzer from tritonclient "
          f"{package_version(args.venv, 'tritonclient')}.\n")
    def stand_ins(command):
        """{path or port: what the printed command shows instead}."""
        names = {"--http-port": "HTTP_PORT", "--grpc-port": "GRPC_PORT", "--metrics-port": "METRICS_PORT"}
        found = {command[i + 1]: names[flag] for i, flag in enumerate(command[:-1]) if flag in names}
        return {**found, work: "WORK", model: f"models/{MODEL}.onnx", args.infermark: "infermark"}
    venv = shown([args.pytriton_venv])
    site = glob.glob(os.path.join(args.pytriton_venv, "lib", "python3*", "site-packages"))[0]
    print("Commands (WORK: the script's temporary folder, with a copy of PyTriton's tritonserver/ and the "
          "model repository):\n\n```")
    print(f"PATH={venv}/bin:$PATH LD_LIBRARY_PATH={shown([site], {args.pytriton_venv: venv})}/nvidia_pytriton.libs "
          + shown(backend_command, stand_ins(backend_command)))
    print("LD_LIBRARY_PATH=\"the venv interpreter's LIBDIR\" " + shown(pytriton_command, stand_ins(pytriton_command)))
    print(shown(serve_command, stand_ins(serve_command)))
    print("LD_LIBRARY_PATH=" + ":".join(shown([d], {args.venv: ".venv"}) for d in cuda_runtime_lib(args.venv)) + " "
          + shown(perf_analyzer_command(args.venv, "HOST:PORT", "C", args.interval_ms, input_data=input_data),
                  {args.venv: ".venv", work: "WORK"}))
    print("```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
