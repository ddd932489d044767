"""Triton's perf_analyzer (from the tritonclient 2.51.0 wheel) runs a short concurrency sweep
against `infermark serve` over HTTP and over gRPC: it needs the model config, statistics and
binary (HTTP) or raw (gRPC) tensors to work, and its server-side breakdown comes from infermark's
statistics (/v2/models/{m}/stats, the ModelStatistics call).

Usage: serve_perf_analyzer_test.py INFERMARK MODELS_DIR VENV
"""

import glob
import os
import re
import subprocess
import sys
import tempfile
import unittest

from serve_support import start_grpc_server, stop_server
import unittest_main

INFERMARK, MODELS, VENV = sys.argv[1], sys.argv[2], sys.argv[3]


def start_server(*flags):
    """(process, HTTP address, gRPC address)."""
    return start_grpc_server(INFERMARK, ["--model", os.path.join(MODELS, "tiny_cnn.onnx"), "-b", "onnxruntime", "--port", "0",
                                         "--grpc-port", "0", "--io-threads", "2", *flags,
                                         "--out", tempfile.mkdtemp(prefix="serve-test-results-")])


def perf_analyzer_environment():
    environment = dict(os.environ)
    cudart = glob.glob(os.path.join(VENV, "lib", "python3*", "site-packages", "nvidia", "cuda_runtime", "lib"))
    environment["LD_LIBRARY_PATH"] = os.pathsep.join(cudart + [environment.get("LD_LIBRARY_PATH", "")])
    return environment


class PerfAnalyzerAgainstServe(unittest.TestCase):
    def sweep(self, protocol):
        process, http_address, grpc_address = start_server("--max-batch", "8", "--batch-delay-us", "500")
        try:
            run = subprocess.run(
                [os.path.join(VENV, "bin", "perf_analyzer"), "-m", "tiny_cnn", "-i", protocol,
                 "-u", grpc_address if protocol == "grpc" else http_address,
                 "--concurrency-range", "1:4:3", "--measurement-interval", "1000", "--stability-percentage", "100",
                 "--max-trials", "10"],  # more windows when a loaded machine is unsteady; stability is not what is tested
                capture_output=True, text=True, timeout=300, env=perf_analyzer_environment())
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            rows = re.findall(r"Concurrency: (\d+), throughput: ([0-9.]+) infer/sec", run.stdout)
            self.assertEqual([int(c) for c, _ in rows], [1, 4], run.stdout)
            self.assertTrue(all(float(t) > 0 for _, t in rows))
            # The server side of its report comes from our statistics; at concurrency 4 some
            # requests shared a batch (fewer executions than inferences).
            counts = re.findall(r"Inference count: (\d+)\s+Execution count: (\d+)", run.stdout)
            self.assertEqual(len(counts), 2, run.stdout)
            inferences, executions = map(int, counts[-1])
            self.assertLess(executions, inferences, run.stdout)
        finally:
            stop_server(process)

    def test_concurrency_sweep_with_dynamic_batching_over_http(self):
        self.sweep("http")

    def test_concurrency_sweep_with_dynamic_batching_over_grpc(self):
        self.sweep("grpc")


if __name__ == "__main__":
    unittest_main.main()
