"""`infermark load` against other projects' KServe v2 servers on loopback, each serving tiny_cnn
through ONNX Runtime: Triton 2.51 (HTTP with the binary tensor extension, and gRPC; ramp and pulse;
a report table with the remote Triton cell beside an in-process ONNX Runtime cell), MLServer (no
binary extension: JSON chosen from its metadata; gRPC) and KServe's ModelServer (nulls in its
answers, chunked binary responses). Request counts are cross-checked with each server's own metrics
where it has request counters.

Usage: load_peers_test.py INFERMARK MODELS_DIR THIRD_PARTY_DIR
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest
import urllib.request

from peer_servers import peer_venv, start_peer
from serve_support import parse_metrics
import unittest_main

INFERMARK, MODELS, THIRD_PARTY = sys.argv[1], sys.argv[2], sys.argv[3]
TINY = os.path.join(MODELS, "tiny_cnn.onnx")


def load(*args, out=None, expect_code=0):
    """Runs `infermark load ARGS`; returns the results it wrote (one per concurrency level)."""
    out = out or tempfile.mkdtemp(prefix="load-peers-")
    done = subprocess.run([INFERMARK, "load", *args, "--out", out], capture_output=True, text=True, timeout=300)
    if expect_code is not None and done.returncode != expect_code:
        raise AssertionError(f"infermark load {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    results = []
    for path in sorted(glob.glob(os.path.join(out, "*", "*.json"))):
        with open(path) as f:
            results.append(json.load(f))
    return results


def counter(metrics_url, name, model="tiny_cnn"):
    """The sum of a counter's series for `model` in a Prometheus exposition."""
    with urllib.request.urlopen(metrics_url, timeout=30) as response:
        text = response.read().decode()
    return sum(value for series, value in parse_metrics(text).items()
               if series.split("{", 1)[0] == name and f'"{model}"' in series)


class PeerCase(unittest.TestCase):
    kind = None

    @classmethod
    def setUpClass(cls):
        cls.peer = start_peer(cls.kind, peer_venv(THIRD_PARTY, cls.kind), TINY)
        cls.url = f"http://{cls.peer.http_address}"

    @classmethod
    def tearDownClass(cls):
        cls.peer.stop()

    def assert_ok(self, result, count):
        self.assertEqual(result["status"], "ok", result.get("error"))
        self.assertEqual(result["latency_ms"]["count"], count)
        self.assertEqual(result["remote"]["errors"]["total"], 0, result["remote"]["errors"])
        self.assertEqual(result["backend"]["name"], "remote")


class LoadTriton(PeerCase):
    kind = "triton"

    def test_http_binary_and_grpc_counted_by_triton(self):
        before = counter(self.peer.metrics_url, "nv_inference_request_success")
        (binary,) = load(self.url, "--model", "tiny_cnn", "--runs", "100", "--warmup", "5", "--concurrency", "2")
        self.assert_ok(binary, 100)
        self.assertEqual(binary["backend"]["framework"], "triton")
        self.assertEqual(binary["remote"]["tensors"], "binary tensor extension (the server lists binary_tensor_data)")
        (grpc,) = load(self.peer.grpc_address, "--protocol", "kserve-grpc", "--model", "tiny_cnn", "--runs", "100",
                       "--warmup", "5", "--concurrency", "2")
        self.assert_ok(grpc, 100)
        self.assertEqual(grpc["backend"]["framework"], "triton")
        self.assertEqual(counter(self.peer.metrics_url, "nv_inference_request_success") - before, 210)

    def test_ramp_and_pulse(self):
        (ramp,) = load(self.url, "--model", "tiny_cnn", "--scenario", "ramp", "--ramp-by", "rate", "--ramp-step", "50",
                       "--ramp-steps", "2", "--step-duration", "1", "--scrape", self.peer.metrics_url,
                       "--scrape-interval-s", "0.5")
        self.assertEqual(ramp["status"], "ok", ramp.get("error"))
        self.assertEqual(len(ramp["phases"]), 2)
        # Triton's own queue/compute split per request, from nv_inference_* over the measurement.
        self.assertGreater(ramp["remote"]["scrape"]["kserve_split"]["compute_us_per_request"], 0)
        (pulse,) = load(self.peer.grpc_address, "--protocol", "kserve-grpc", "--model", "tiny_cnn", "--scenario",
                        "pulse", "--capacity-probe", "1", "--pulse-times", "1,1,1", "--concurrency", "2")
        self.assertEqual(pulse["status"], "ok", pulse.get("error"))
        self.assertIn("pulse", pulse["analysis"])

    def test_report_puts_remote_triton_beside_in_process_onnxruntime(self):
        out = tempfile.mkdtemp(prefix="load-peers-report-")
        load(self.url, "--model", "tiny_cnn", "--runs", "50", out=out)
        subprocess.run([INFERMARK, "run", TINY, "-b", "onnxruntime", "--runs", "50", "--out", out], check=True,
                       capture_output=True, timeout=300)
        report = subprocess.run([INFERMARK, "report", out, "--md"], check=True, capture_output=True, text=True).stdout
        table = next(p for p in report.split("## tiny_cnn", 1)[1].split("\n\n") if p.startswith("|"))  # the model's first table
        self.assertIn("| remote triton ", table)
        self.assertIn("| onnxruntime ", table)


class LoadMLServer(PeerCase):
    kind = "mlserver"

    def test_json_chosen_from_metadata_and_grpc(self):
        before = counter(self.peer.metrics_url, "model_infer_request_success_total")
        (result,) = load(self.url, "--model", "tiny_cnn", "--runs", "60", "--warmup", "5", "--concurrency", "2")
        self.assert_ok(result, 60)
        self.assertEqual(result["backend"]["framework"], "mlserver")
        self.assertEqual(result["remote"]["tensors"], "JSON (the server does not list the binary_tensor_data extension)")
        (grpc,) = load(self.peer.grpc_address, "--protocol", "kserve-grpc", "--model", "tiny_cnn", "--runs", "60",
                       "--warmup", "5")
        self.assert_ok(grpc, 60)
        self.assertEqual(counter(self.peer.metrics_url, "model_infer_request_success_total") - before, 130)

    def test_ramp_and_pulse(self):
        (ramp,) = load(self.url, "--model", "tiny_cnn", "--scenario", "ramp", "--ramp-by", "rate", "--ramp-step", "40",
                       "--ramp-steps", "2", "--step-duration", "1")
        self.assertEqual(ramp["status"], "ok", ramp.get("error"))
        self.assertEqual(len(ramp["phases"]), 2)
        self.assertEqual(ramp["remote"]["errors"]["total"], 0, ramp["remote"]["errors"])
        (pulse,) = load(self.url, "--model", "tiny_cnn", "--scenario", "pulse", "--capacity-probe", "1",
                        "--pulse-times", "1,1,1", "--concurrency", "2")
        self.assertEqual(pulse["status"], "ok", pulse.get("error"))
        self.assertIn("pulse", pulse["analysis"])

    def test_forced_binary_fails_with_the_status_counted(self):
        # MLServer answers the binary tensor extension with 500: every request is an error by status.
        (result,) = load(self.url, "--model", "tiny_cnn", "--runs", "10", "--warmup", "0", "--tensors", "binary",
                         expect_code=1)
        self.assertEqual(result["status"], "failed")
        self.assertEqual(result["remote"]["errors"]["http_status"], {"500": 10})


class LoadKServe(PeerCase):
    kind = "kserve"

    def test_json_binary_and_grpc(self):
        (result,) = load(self.url, "--model", "tiny_cnn", "--scenario", "server", "--qps", "100", "--duration", "1",
                         "--arrivals", "constant")
        self.assert_ok(result, 100)
        self.assertEqual(result["backend"]["framework"], "kserve")
        self.assertIn("JSON", result["remote"]["tensors"])
        # KServe takes binary tensors although it does not list the extension; its binary answers are chunked.
        (binary,) = load(self.url, "--model", "tiny_cnn", "--runs", "40", "--warmup", "2", "--tensors", "binary")
        self.assert_ok(binary, 40)
        (grpc,) = load(self.peer.grpc_address, "--protocol", "kserve-grpc", "--model", "tiny_cnn", "--runs", "40",
                       "--warmup", "2", "--concurrency", "2")
        self.assert_ok(grpc, 40)


if __name__ == "__main__":
    unittest_main.main()
