"""Fidelity of `infermark load` against Triton's perf_analyzer: the same Triton model, the same
concurrency, the two clients alternated round by round (the machines are shared and noisy).

Triton 2.51 (the tritonserver PyTriton bundles, third_party/pytriton-venv from
`scripts/setup`) serves models/MODEL.onnx (tiny_cnn by default; --model resnet50
for a server-bound case) from a Python-backend model.py
calling onnxruntime (tools/peers/triton_vs_serve.py sets it up). perf_analyzer (.venv's tritonclient
2.51.0 wheel) and `infermark load --scenario concurrency` each drive it over HTTP with binary tensors
for the same time; the table gives throughput, P50 and P99 of each and their ratios.

Usage: load_fidelity.py [--infermark PATH] [--models DIR] [--pytriton-venv DIR] [--venv DIR]
                        [--model NAME] [--rounds N] [--seconds S] [--concurrency C ...]
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import triton_vs_serve as triton  # noqa: E402


def infermark_load(infermark, address, concurrency, seconds, out):
    command = [infermark, "load", f"http://{address}", "--model", triton.MODEL, "--scenario", "concurrency",
               "--concurrency", str(concurrency), "--runs", "0", "--max-duration", str(seconds), "--warmup", "20",
               "--out", out]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"infermark load failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    path = sorted(glob.glob(os.path.join(out, "*", "*.json")), key=os.path.getmtime)[-1]
    with open(path) as f:
        result = json.load(f)
    percentiles = result["latency_ms"]["percentiles"]
    return command, {"throughput": result["throughput"]["queries_per_s"], "p50": percentiles["p50"]["value"] * 1000,
                     "p99": percentiles["p99"]["value"] * 1000, "errors": result["remote"]["errors"]["total"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    triton.add_tool_arguments(parser)
    parser.add_argument("--model", default="tiny_cnn", help="a model of the zoo with one 1x3xHxW input named 'input'")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=6, help="measured seconds per figure, each client")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args()
    triton.MODEL = args.model  # the Triton repository, perf_analyzer and infermark load all name it
    model = os.path.join(args.models, f"{triton.MODEL}.onnx")
    import onnxruntime  # .venv's, only to read the input's shape for perf_analyzer
    dims = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).get_inputs()[0].shape
    shape = "input:" + ",".join(str(d) if isinstance(d, int) and d > 0 else "1" for d in dims)
    work = tempfile.mkdtemp(prefix="load-fidelity-")
    window_ms = args.seconds * 1000 // 3  # perf_analyzer merges three windows into one figure
    server, address, server_command = triton.start_triton_python_backend(args.pytriton_venv, model, work)
    rows = []
    try:
        triton.perf_analyzer(args.venv, address, max(args.concurrency), 1000, shape)  # warm-up, not recorded
        load_command = None
        for round_number in range(1, args.rounds + 1):
            for concurrency in args.concurrency:
                # Alternate which client goes first, so neither always meets a warmer server.
                order = ("perf_analyzer", "infermark load") if round_number % 2 else ("infermark load", "perf_analyzer")
                for client in order:
                    if client == "perf_analyzer":
                        figures = triton.perf_analyzer(args.venv, address, concurrency, window_ms, shape)
                    else:
                        load_command, figures = infermark_load(args.infermark, address, concurrency, args.seconds,
                                                               os.path.join(work, "results"))
                    rows.append({"client": client, "concurrency": concurrency, "round": round_number, **figures})
                    print(f"round {round_number} c={concurrency} {client}: {figures['throughput']:.0f}/s "
                          f"P50 {figures['p50']:.0f} µs P99 {figures['p99']:.0f} µs", file=sys.stderr)
        triton_version = json.loads(triton.http(address, "GET", "/v2")[2])["version"]
    finally:
        triton.stop_triton(server)

    print(f"### infermark load vs perf_analyzer on Triton, {args.model} ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} cores)\n")
    print("| concurrency | round | client | throughput (infer/s) | P50 (µs) | P99 (µs) |\n|---:|---:|---|---:|---:|---:|")
    for row in sorted(rows, key=lambda r: (r["concurrency"], r["round"], r["client"])):
        print(f"| {row['concurrency']} | {row['round']} | {row['client']} | {row['throughput']:,.1f} | {row['p50']:,.0f} | "
              f"{row['p99']:,.0f} |")

    def median(client, concurrency, key):
        return statistics.median(r[key] for r in rows if r["client"] == client and r["concurrency"] == concurrency)
    print("\n| concurrency | throughput, infermark / perf_analyzer | P50 ratio | P99 ratio |\n|---:|---:|---:|---:|")
    for concurrency in args.concurrency:
        ratio = {key: median("infermark load", concurrency, key) / median("perf_analyzer", concurrency, key)
                 for key in ("throughput", "p50", "p99")}
        print(f"| {concurrency} | {ratio['throughput']:.3f} | {ratio['p50']:.3f} | {ratio['p99']:.3f} |")
    ports = {"--http-port": "HTTP_PORT", "--grpc-port": "GRPC_PORT", "--metrics-port": "METRICS_PORT"}
    stand_ins = {work: "WORK", model: f"models/{triton.MODEL}.onnx", args.infermark: "infermark",
                 **{server_command[i + 1]: name for i, flag in enumerate(server_command[:-1]) for f, name in ports.items()
                    if flag == f}}
    print(f"\n(medians over {args.rounds} rounds)\n\nVersions: tritonserver {triton_version}, perf_analyzer from tritonclient "
          f"{triton.package_version(args.venv, 'tritonclient')}, onnxruntime "
          f"{triton.package_version(args.pytriton_venv, 'onnxruntime')} inside Triton.\n\nCommands:\n\n```")
    print(triton.shown(server_command, stand_ins))
    print(triton.shown(triton.perf_analyzer_command(args.venv, "HOST:PORT", "C", window_ms, shape), {args.venv: ".venv"}))
    print(triton.shown([c if c != f"http://{address}" else "http://HOST:PORT" for c in load_command], stand_ins))
    print("```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
