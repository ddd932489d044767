"""Peer for infermark's ONNX Runtime numbers: a plain timed loop over ORT's own Python API with
the same session options infermark uses (intra-op threads, sequential execution, all graph
optimisations, spinning on) and the same input (an .npy file, or seeded random values), bound once with IoBinding."""
import argparse
import json
import time

import numpy as np
import onnxruntime as ort


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--input", help=".npy file for the first input (default: seeded random values)")
    args = parser.parse_args()

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    spec = session.get_inputs()[0]
    shape = [1 if not isinstance(d, int) else d for d in spec.shape]
    data = np.load(args.input) if args.input else np.random.default_rng(42).standard_normal(shape, dtype=np.float32)
    binding = session.io_binding()
    binding.bind_cpu_input(spec.name, data)
    for output in session.get_outputs():
        binding.bind_output(output.name)
    for _ in range(args.warmup):
        session.run_with_iobinding(binding)
    latencies = []
    for _ in range(args.runs):
        start = time.perf_counter()
        session.run_with_iobinding(binding)
        latencies.append((time.perf_counter() - start) * 1e3)
    latencies.sort()
    figures = {"ort_version": ort.__version__, "runs": args.runs, "mean_ms": sum(latencies) / len(latencies),
               "p50_ms": latencies[(len(latencies) + 1) // 2 - 1], "throughput": 1e3 * len(latencies) / sum(latencies)}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
