"""A real Prometheus scrapes `infermark serve`: Debian's prometheus binary with a 1 s scrape
interval targets the server, inference traffic goes to both variants, and the P99 latency per
variant (the dashboard's query over infermark_request_duration_seconds_bucket) comes back from
Prometheus' HTTP API as a finite positive number, with up == 1 for the job.

Usage: serve_prometheus_test.py INFERMARK MODELS_DIR
"""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

import numpy as np

from serve_support import free_port, http, infer_body, start_server, stop_server, wait_until
import unittest_main

INFERMARK, MODELS = sys.argv[1], sys.argv[2]
MODEL_FILE = os.path.join(MODELS, "tiny_cnn.onnx")
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
JOB = "infermark-serve"
P99_BY_VARIANT = ('histogram_quantile(0.99, sum by (le, variant) '
                  '(rate(infermark_request_duration_seconds_bucket{phase="total"}[1m])))')

PROMETHEUS_YML = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: {job}
    metrics_path: /metrics
    static_configs:
      - targets: ["{target}"]
"""


class PrometheusScrapesServe(unittest.TestCase):
    def setUp(self):
        # Cleanups run even when setUp fails half way, so neither process outlives the test.
        self.workdir = tempfile.mkdtemp(prefix="infermark-prometheus-")
        self.addCleanup(shutil.rmtree, self.workdir, ignore_errors=True)
        self.server, self.address = start_server(
            INFERMARK, ["--model", MODEL_FILE, "-b", "onnxruntime,openvino", "--weights", "90,10", "--max-batch", "8",
                        "--batch-delay-us", "2000", "--port", "0", "--io-threads", "2"], timeout=60)
        self.addCleanup(self.kill, self.server)
        config = os.path.join(self.workdir, "prometheus.yml")
        with open(config, "w") as f:
            f.write(PROMETHEUS_YML.format(job=JOB, target=self.address))
        checked = subprocess.run(["promtool", "check", "config", config], capture_output=True, text=True)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        self.prometheus_address = f"127.0.0.1:{free_port()}"
        self.prometheus_log = open(os.path.join(self.workdir, "prometheus.log"), "w+")
        self.addCleanup(self.prometheus_log.close)
        self.prometheus = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={os.path.join(self.workdir, 'data')}",
             f"--web.listen-address={self.prometheus_address}", "--log.level=warn"],
            stdout=self.prometheus_log, stderr=subprocess.STDOUT)
        self.addCleanup(self.kill, self.prometheus)

    @staticmethod
    def kill(process):
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout:
            process.stdout.close()

    def prometheus_log_text(self):
        self.prometheus_log.flush()
        self.prometheus_log.seek(0)
        return self.prometheus_log.read()

    def query(self, promql):
        """The instant vector of a PromQL query as [(labels, value)]; [] while Prometheus is not ready."""
        status, _, body = http(self.prometheus_address, "GET", "/api/v1/query?" + urllib.parse.urlencode({"query": promql}),
                               timeout=5)
        if status != 200:
            return []
        answer = json.loads(body)
        self.assertEqual(answer["status"], "success", answer)
        return [(sample["metric"], float(sample["value"][1])) for sample in answer["data"]["result"]]

    def test_p99_per_variant_from_prometheus(self):
        self.assertIsNone(self.prometheus.poll(), self.prometheus_log_text())
        wait_until(lambda: http(self.prometheus_address, "GET", "/-/ready", timeout=2)[0] == 200, 20,
                   "Prometheus ready")
        # One scrape before the traffic, so rate() sees the counters grow from their zeros.
        up = wait_until(lambda: self.query(f'up{{job="{JOB}"}}'), 20, f"a scrape of job {JOB}")
        self.assertEqual([value for _, value in up], [1.0], self.prometheus_log_text())

        x = np.random.default_rng(3).random((1, 3, 32, 32), dtype=np.float32)
        body = infer_body(x)
        served = {}
        deadline = time.monotonic() + 4  # traffic over several scrapes
        while time.monotonic() < deadline:
            for headers in ({}, {"X-Model-Variant": "openvino"}):
                status, reply_headers, text = http(self.address, "POST", "/v2/models/tiny_cnn/infer", body, headers)
                self.assertEqual(status, 200, text)
                served[reply_headers["X-Model-Variant"]] = served.get(reply_headers["X-Model-Variant"], 0) + 1
            time.sleep(0.02)
        self.assertIn("onnxruntime", served)  # 90% of the requests without a header
        self.assertIn("openvino", served)

        def p99_per_variant():
            result = {labels.get("variant"): value for labels, value in self.query(P99_BY_VARIANT)}
            finite = {variant: value for variant, value in result.items() if math.isfinite(value) and value > 0}
            return finite if set(finite) >= {"onnxruntime", "openvino"} else None

        p99 = wait_until(p99_per_variant, 20, "a finite P99 per variant from Prometheus")
        for variant in ("onnxruntime", "openvino"):
            self.assertLess(p99[variant], 10.0, p99)  # seconds: a tiny model, well inside the buckets
        # up is still 1 after the traffic, and the server's own counters reached Prometheus.
        self.assertEqual([value for _, value in self.query(f'up{{job="{JOB}"}}')], [1.0])
        success = wait_until(
            lambda: {labels["variant"]: value for labels, value in
                     self.query(f'sum by (variant) (nv_inference_request_success{{job="{JOB}"}})')
                     if value > 0} or None, 10, "nv_inference_request_success in Prometheus")
        self.assertEqual(set(success), {"onnxruntime", "openvino"})
        self.assertEqual(stop_server(self.server), 0)


if __name__ == "__main__":
    unittest_main.main()
