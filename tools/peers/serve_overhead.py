"""What `infermark serve` costs on top of the model, measured as ratios in one run, the sides'
order rotated every round (tools/peers/rounds.py; the machines are shared and noisy):

1. HTTP layer: requests/s of `wrk` on /v2/health/ready against `infermark serve` and against the
   minimal Beast server (bench/http_reference_server.cpp), same io threads.
2. Server overhead: P50 of one tiny ONNX model through `infermark serve` + a keep-alive HTTP client
   (wrk with the same binary-tensor request, and Triton's perf_analyzer, concurrency 1) minus its
   P50 in process (`infermark run`, single-stream), both with ONNX Runtime on 1 thread and the same
   input bytes (one seeded random tensor: an .npy for run, the request body for wrk, an input-data
   folder for perf_analyzer); beside it the HTTP floor: wrk's P50 for the same request bytes against
   the minimal Beast server (built as serve is, one io_context per io thread).
3. Dynamic batching: ResNet-50 at concurrency 16 (perf_analyzer) with batching on and off.

Usage: serve_overhead.py BUILD_DIR MODELS_DIR VENV [--rounds N (5)] [--parts http overhead batching] [--skip-batching]
                         [--cpu-idle default|poll]
Prints a Markdown table per part, with the commands it ran.

--cpu-idle poll holds /dev/cpu_dma_latency at 0 for the whole run (Linux PM QoS, as tuned's
latency-performance profile does), so no CPU enters an idle state deeper than polling, for every
side alike. Without it, a client and server that wait on each other at concurrency 1 let their
CPUs idle between requests, and on a VM each wake-up costs tens of µs that the in-process loop,
which never waits, does not pay. The default is what a user's host does, so it is the headline
(docs/serving.md has both).
"""

import argparse
import contextlib
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rounds import DEFAULT_ROUNDS, run_rounds, spread  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "e2e"))
from serve_support import free_port, start_server, stop_server  # noqa: E402


def run(command, env=None, timeout=900):
    print("$ " + " ".join(command), file=sys.stderr)
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


@contextlib.contextmanager
def cpu_idle(mode):
    """Holds /dev/cpu_dma_latency at 0 while the block runs (mode "poll"); says what it applied."""
    if mode != "poll":
        print("CPU idle states: the system's default (no PM QoS request)")
        yield
        return
    try:
        fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    except OSError as e:
        print(f"CPU idle states: --cpu-idle poll NOT applied ({e}); the system's default")
        yield
        return
    try:
        os.write(fd, (0).to_bytes(4, sys.byteorder, signed=True))
        print("CPU idle states: polling only (/dev/cpu_dma_latency held at 0 for every side)")
        yield
    finally:
        os.close(fd)


def wrk_rps(port, seconds):
    out = run(["wrk", "-t2", "-c32", f"-d{seconds}s", f"http://127.0.0.1:{port}/v2/health/ready"])
    return float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))


def perf_analyzer(venv, address, model, concurrency, seconds, shape=None, input_data=None):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "nvidia", "cuda_runtime", "lib")))
    command = [os.path.join(venv, "bin", "perf_analyzer"), "-m", model, "-u", address, "-i", "http",
               "--concurrency-range", str(concurrency), "--measurement-interval", str(seconds * 1000),
               "--stability-percentage", "1000", "--max-trials", "3", "--percentile", "99"]
    if shape:  # unbatched models declare a dynamic dimension 0: perf_analyzer needs the full shape
        command += ["--shape", shape]
    if input_data:  # a folder with one raw file per input, named after it
        command += ["--input-data", input_data]
    out = run(command, env=env)
    throughput = float(re.search(r"Throughput: ([0-9.]+) infer/sec", out).group(1))
    p50 = float(re.search(r"p50 latency: (\d+) usec", out).group(1))
    p99 = float(re.search(r"p99 latency: (\d+) usec", out).group(1))
    return throughput, p50, p99


def http_layer(build, models, rounds):
    reference = subprocess.Popen([os.path.join(build, "bench", "infermark_http_reference_server"), str(free_port()), "2"],
                                 stdout=subprocess.PIPE, text=True)
    reference_port = int(re.search(r":(\d+)", reference.stdout.readline()).group(1))
    served, address = start_server(os.path.join(build, "infermark"),
                                   ["--model", os.path.join(models, "tiny_cnn.onnx"), "-b", "onnxruntime", "--port", "0",
                                    "--io-threads", "2", "--out", tempfile.mkdtemp()])
    ports = {"infermark serve": address.split(":")[1], "minimal Beast server": reference_port}
    try:
        measured = run_rounds(list(ports), rounds, lambda side: wrk_rps(ports[side], 5),
                              describe=lambda rps: f"{rps:,.0f} req/s", label="HTTP layer ")
        ratios = [(m["infermark serve"], m["minimal Beast server"], m["infermark serve"] / m["minimal Beast server"])
                  for m in measured]
    finally:
        stop_server(served)
        reference.terminate()
        reference.wait()
    print("\n### HTTP layer: wrk -t2 -c32 -d5s on /v2/health/ready (2 io threads each)\n")
    print("| round | infermark serve req/s | minimal Beast server req/s | ratio |\n|---:|---:|---:|---:|")
    for i, (ours, theirs, ratio) in enumerate(ratios, 1):
        print(f"| {i} | {ours:,.0f} | {theirs:,.0f} | {ratio:.3f} |")
    print(f"\nratio, median (range) over {rounds} rounds: {spread(r for _, _, r in ratios)}")


def wrk_infer_p50(address, model, tensor, seconds):
    """P50 in µs of wrk (one connection, keep-alive) POSTing one binary-tensor request of `tensor`."""
    header = json.dumps({"inputs": [{"name": "input", "shape": list(tensor.shape), "datatype": "FP32",
                                     "parameters": {"binary_data_size": tensor.nbytes}}]}).encode()
    body = tempfile.NamedTemporaryFile(suffix=".bin", delete=False)
    body.write(header + tensor.astype("<f4").tobytes())
    body.close()
    env = dict(os.environ, INFER_BODY=body.name, INFER_PATH=f"/v2/models/{model}/infer",
               INFER_HEADER_LENGTH=str(len(header)))
    out = run(["wrk", "-t1", "-c1", f"-d{seconds}s", "--latency", "-s", os.path.join(os.path.dirname(__file__), "serve_infer.lua"),
               f"http://{address}"], env=env)
    os.unlink(body.name)
    if "Non-2xx" in out:
        raise RuntimeError("wrk got errors:\n" + out)
    value, unit = re.search(r"50%\s+([0-9.]+)(us|ms)", out).groups()
    return float(value) * (1000 if unit == "ms" else 1)


def in_process_p50(build, models, input_npy):
    out_dir = tempfile.mkdtemp()
    run([os.path.join(build, "infermark"), "run", os.path.join(models, "tiny_cnn.onnx"), "-b", "onnxruntime", "--threads",
         "1", "--runs", "3000", "--warmup", "200", "--input", f"input={input_npy}", "--out", out_dir])
    result = json.load(open(glob.glob(os.path.join(out_dir, "*", "*.json"))[0]))
    return result["latency_ms"]["percentiles"]["p50"]["value"] * 1000


def server_overhead(build, models, venv, rounds):
    served, address = start_server(os.path.join(build, "infermark"),
                                   ["--model", os.path.join(models, "tiny_cnn.onnx"), "-b", "onnxruntime", "--threads", "1",
                                    "--port", "0", "--io-threads", "2", "--out", tempfile.mkdtemp()])
    reference = subprocess.Popen([os.path.join(build, "bench", "infermark_http_reference_server"), str(free_port()), "2"],
                                 stdout=subprocess.PIPE, text=True)
    floor_address = "127.0.0.1:" + re.search(r":(\d+)", reference.stdout.readline()).group(1)
    # One input for every side: run reads the .npy, wrk sends its bytes, perf_analyzer reads the folder.
    tensor = np.random.default_rng(7).standard_normal((1, 3, 32, 32), dtype=np.float32)
    inputs = tempfile.mkdtemp()
    np.save(os.path.join(inputs, "input.npy"), tensor)
    os.makedirs(os.path.join(inputs, "raw"))
    tensor.astype("<f4").tofile(os.path.join(inputs, "raw", "input"))
    measure = {
        "in process": lambda: in_process_p50(build, models, os.path.join(inputs, "input.npy")),
        "served (wrk)": lambda: wrk_infer_p50(address, "tiny_cnn", tensor, 5),
        "HTTP floor (wrk)": lambda: wrk_infer_p50(floor_address, "tiny_cnn", tensor, 5),
        "served (perf_analyzer)": lambda: perf_analyzer(venv, address, "tiny_cnn", 1, 5, shape="input:1,3,32,32",
                                                        input_data=os.path.join(inputs, "raw"))[1],
    }
    try:
        measured = run_rounds(list(measure), rounds, lambda side: measure[side](), describe=lambda us: f"P50 {us:.0f} µs",
                              label="server overhead ")
        rows = [(m["in process"], m["served (wrk)"], m["HTTP floor (wrk)"], m["served (perf_analyzer)"]) for m in measured]
    finally:
        stop_server(served)
        reference.terminate()
        reference.wait()
    print("\n### Server overhead: tiny_cnn, ONNX Runtime, 1 thread, batch 1, binary tensors over HTTP keep-alive\n")
    print("| round | in process P50 µs (infermark run) | served P50 µs, wrk c=1 | overhead µs | "
          "HTTP floor P50 µs (minimal Beast server, same request) | overhead above the floor µs | "
          "served P50 µs, perf_analyzer c=1 | overhead µs, perf_analyzer |\n|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, (local, lean, floor, triton_client) in enumerate(rows, 1):
        print(f"| {i} | {local:.0f} | {lean:.0f} | {lean - local:.0f} | {floor:.0f} | {lean - local - floor:.0f} | "
              f"{triton_client:.0f} | {triton_client - local:.0f} |")
    print(f"\nover {len(rows)} rounds, median (range) in µs: overhead measured by wrk "
          f"{spread((lean - local for local, lean, _, _ in rows), 0)}; by perf_analyzer "
          f"{spread((pa - local for local, _, _, pa in rows), 0)}; wrk's overhead above the HTTP floor "
          f"{spread((lean - local - floor for local, lean, floor, _ in rows), 0)}")


def batching(build, models, venv, rounds):
    def serve(*flags):
        return start_server(os.path.join(build, "infermark"),
                            ["--model", os.path.join(models, "resnet50.onnx"), "-b", "onnxruntime", "--port", "0",
                             "--io-threads", "2", "--max-queue", "64", "--out", tempfile.mkdtemp(), *flags])
    settings = {"off": (), "on (max 8, 2 ms)": ("--max-batch", "8", "--batch-delay-us", "2000")}

    def measure(label):
        process, address = serve(*settings[label])
        try:
            return perf_analyzer(venv, address, "resnet50", 16, 20, shape=None if settings[label] else "input:1,3,224,224")
        finally:
            stop_server(process)
    measured = run_rounds(list(settings), rounds, measure, describe=lambda f: f"{f[0]:.1f} img/s", label="batching ")
    print("\n### Dynamic batching: ResNet-50, ONNX Runtime, perf_analyzer concurrency 16\n")
    print("| round | batching | images/s | P50 ms | P99 ms |\n|---:|---|---:|---:|---:|")
    for i, m in enumerate(measured, 1):
        for label, (throughput, p50, p99) in m.items():
            print(f"| {i} | {label} | {throughput:.1f} | {p50 / 1000:.1f} | {p99 / 1000:.1f} |")
    print(f"\nimages/s, batching on / off, median (range): "
          f"{spread(m['on (max 8, 2 ms)'][0] / m['off'][0] for m in measured)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("models")
    parser.add_argument("venv")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--skip-batching", action="store_true", help="same as --parts http overhead")
    parser.add_argument("--parts", nargs="+", choices=["http", "overhead", "batching"],
                        default=["http", "overhead", "batching"], help="which measurements to run (default: all three)")
    parser.add_argument("--cpu-idle", choices=["default", "poll"], default="default")
    args = parser.parse_args()
    print(f"# infermark serve overhead ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores)")
    with cpu_idle(args.cpu_idle):
        if "http" in args.parts:
            http_layer(args.build, args.models, args.rounds)
        if "overhead" in args.parts:
            server_overhead(args.build, args.models, args.venv, args.rounds)
        if "batching" in args.parts and not args.skip_batching:
            batching(args.build, args.models, args.venv, args.rounds)


if __name__ == "__main__":
    main()
