"""`infermark serve` driven by real clients: Triton's official Python client (HTTP, JSON and
binary tensors), plain HTTP for headers, malformed requests and oversized bodies, promtool for
the /metrics exposition, and SIGTERM for the graceful drain. Outputs are checked against ONNX
Runtime's Python package on the same inputs.

Usage: serve_clients_test.py INFERMARK MODELS_DIR
"""

import concurrent.futures
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import onnxruntime
import tritonclient.http as triton_http

from serve_support import (http, infer_body, metric_total, metric_values, output_of, start_server as start_infermark,
                           stop_server, wait_until)
import unittest_main

INFERMARK, MODELS = sys.argv[1], sys.argv[2]
MODEL_FILE = os.path.join(MODELS, "tiny_cnn.onnx")
RESULTS = tempfile.mkdtemp(prefix="serve-test-results-")  # where servers write their per-variant results


def start_server(*extra, model_flags=("--model", MODEL_FILE, "-b", "onnxruntime,openvino", "--weights", "90,10",
                                      "--max-batch", "8", "--batch-delay-us", "5000")):
    process, address = start_infermark(
        INFERMARK, [*model_flags, "--port", "0", "--io-threads", "2", *(extra if "--out" in extra else (*extra, "--out", RESULTS))])
    ServeLimitsAndShutdown.started.append(process)
    return process, address


class ServeWithRealClients(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process, cls.address = start_server()
        cls.client = triton_http.InferenceServerClient(cls.address, concurrency=16)
        cls.reference = onnxruntime.InferenceSession(MODEL_FILE, providers=["CPUExecutionProvider"])
        cls.rng = np.random.default_rng(7)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        if cls.process.poll() is None:
            cls.process.send_signal(signal.SIGTERM)
            cls.process.wait(timeout=60)

    def expected(self, x):
        return self.reference.run(None, {"input": x})[0]

    def test_metadata_and_config_through_tritonclient(self):
        self.assertTrue(self.client.is_server_live())
        self.assertTrue(self.client.is_server_ready())
        self.assertTrue(self.client.is_model_ready("tiny_cnn"))
        metadata = self.client.get_model_metadata("tiny_cnn")
        self.assertEqual(metadata["inputs"][0]["name"], "input")
        self.assertEqual(metadata["inputs"][0]["shape"], [-1, 3, 32, 32])
        config = self.client.get_model_config("tiny_cnn")
        self.assertEqual(config["max_batch_size"], 8)
        self.assertEqual(config["input"][0]["dims"], [3, 32, 32])  # Triton leaves the batch dimension out

    def test_infer_json_and_binary_match_onnxruntime(self):
        x = self.rng.random((3, 3, 32, 32), dtype=np.float32)
        for binary in (False, True):
            for variant in ("onnxruntime", "openvino"):
                tensor = triton_http.InferInput("input", list(x.shape), "FP32")
                tensor.set_data_from_numpy(x, binary_data=binary)
                wanted = triton_http.InferRequestedOutput("logits", binary_data=binary)
                result = self.client.infer("tiny_cnn", [tensor], outputs=[wanted], headers={"X-Model-Variant": variant})
                np.testing.assert_allclose(result.as_numpy("logits"), self.expected(x), rtol=1e-3, atol=1e-4)
        statistics = self.client.get_inference_statistics("tiny_cnn")["model_stats"][0]
        self.assertGreaterEqual(statistics["inference_count"], 12)

    def test_variant_header_names_the_variant_that_served(self):
        x = self.rng.random((1, 3, 32, 32), dtype=np.float32)
        status, headers, _ = http(self.address, "POST", "/v2/models/tiny_cnn/infer", infer_body(x),
                                  {"X-Model-Variant": "openvino"})
        self.assertEqual((status, headers.get("X-Model-Variant")), (200, "openvino"))
        status, _, body = http(self.address, "POST", "/v2/models/tiny_cnn/versions/openvino/infer", infer_body(x))
        self.assertEqual(status, 200, body)
        status, _, body = http(self.address, "POST", "/v2/models/tiny_cnn/infer", infer_body(x), {"X-Model-Variant": "nope"})
        self.assertEqual(status, 400)
        self.assertIn("no variant 'nope'", json.loads(body)["error"])

    def test_weighted_split_and_sticky_keys_show_in_metrics(self):
        # Every request its own input, checked against ONNX Runtime on that input alone: a row
        # handed to the wrong request in a dynamic batch fails here.
        inputs = [self.rng.random((1, 3, 32, 32), dtype=np.float32) for _ in range(400)]
        before = metric_values(self.address, "infermark_routed_total")
        batching_before = metric_total(self.address, "nv_inference_exec_count"), metric_total(self.address, "nv_inference_count")
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda x: http(self.address, "POST", "/v2/models/tiny_cnn/infer", infer_body(x)), inputs))
        self.assertEqual({status for status, _, _ in answers}, {200})
        for k, (x, (_, headers, body)) in enumerate(zip(inputs, answers)):
            np.testing.assert_allclose(output_of(body, "logits"), self.expected(x), rtol=1e-3, atol=1e-4,
                                       err_msg=f"request {k} (variant {headers.get('X-Model-Variant')})")
        # 16 clients at once with a 5 ms batching window: batches of several requests ran.
        executions = metric_total(self.address, "nv_inference_exec_count") - batching_before[0]
        inferences = metric_total(self.address, "nv_inference_count") - batching_before[1]
        self.assertEqual(inferences, 400)
        self.assertLess(executions, inferences)
        after = metric_values(self.address, "infermark_routed_total")
        routed = {variant: after.get(f'infermark_routed_total{{by="weighted",model="tiny_cnn",variant="{variant}"}}', 0) -
                  before.get(f'infermark_routed_total{{by="weighted",model="tiny_cnn",variant="{variant}"}}', 0)
                  for variant in ("onnxruntime", "openvino")}
        self.assertEqual(sum(routed.values()), 400)
        self.assertGreater(routed["openvino"], 400 * 0.03)  # 10% expected; a 400-draw split stays well inside these
        self.assertLess(routed["openvino"], 400 * 0.20)
        body = infer_body(inputs[0])
        served = {http(self.address, "POST", "/v2/models/tiny_cnn/infer", body, {"X-Request-Key": "user-42"})[1]
                  ["X-Model-Variant"] for _ in range(20)}
        self.assertEqual(len(served), 1)

    def test_bad_requests_get_clear_errors_and_the_server_stays_up(self):
        x = self.rng.random((1, 3, 32, 32), dtype=np.float32)
        cases = [
            (infer_body(x, name="wrong"), 400, "input 'wrong'"),
            (infer_body(x.astype(np.float64), datatype="FP64"), 400, "datatype FP64, the model expects FP32"),
            (infer_body(self.rng.random((1, 3, 32, 31), dtype=np.float32)), 400, "dimension 3"),
            (infer_body(self.rng.random((9, 3, 32, 32), dtype=np.float32)), 400, "exceeds max_batch_size 8"),
            (b'{"inputs": [', 400, "not a JSON object"),
        ]
        for body, status, message in cases:
            got, _, text = http(self.address, "POST", "/v2/models/tiny_cnn/infer", body)
            self.assertEqual(got, status, text)
            self.assertIn(message, json.loads(text)["error"])
        header = b'{"inputs":[{"name":"input","shape":[1,3,32,32],"datatype":"FP32","parameters":{"binary_data_size":12288}}]}'
        got, _, text = http(self.address, "POST", "/v2/models/tiny_cnn/infer", header + b"\0" * 100,
                            {"Inference-Header-Content-Length": str(len(header))})
        self.assertEqual(got, 400)
        self.assertIn("binary data ends after 100 of 12288 bytes", json.loads(text)["error"])
        self.assertEqual(http(self.address, "GET", "/v2/models/nope")[0], 404)
        self.assertEqual(http(self.address, "GET", "/v2/models/tiny_cnn/infer")[0], 405)
        with socket.create_connection(tuple(self.address.split(":"))) as raw:
            raw.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            self.assertIn(b" 400 ", raw.recv(4096))
        with socket.create_connection(tuple(self.address.split(":"))) as raw:  # a client that leaves mid-body
            raw.sendall(b"POST /v2/models/tiny_cnn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"inputs\"")
        self.assertTrue(self.client.is_server_live())

    def test_head_answers_like_get_without_a_body(self):
        import http.client
        host, port = self.address.split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            connection.request("GET", "/metrics")
            length = len(connection.getresponse().read())
            connection.request("HEAD", "/metrics")
            head = connection.getresponse()
            self.assertEqual(head.status, 200)
            self.assertEqual(head.read(), b"")
            self.assertGreater(int(head.getheader("Content-Length")), length // 2)
            connection.request("GET", "/v2")  # the same keep-alive connection is still in step
            self.assertEqual(json.loads(connection.getresponse().read())["name"], "infermark")
        finally:
            connection.close()

    def test_slow_clients_do_not_hold_up_others(self):
        # Clients that send half a request and stall: coroutines wait on them, no thread does.
        stalled = []
        for _ in range(40):
            raw = socket.create_connection(tuple(self.address.split(":")))
            raw.sendall(b"POST /v2/models/tiny_cnn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n{\"in")
            stalled.append(raw)
        try:
            x = self.rng.random((1, 3, 32, 32), dtype=np.float32)
            for _ in range(5):
                status, _, _ = http(self.address, "POST", "/v2/models/tiny_cnn/infer", infer_body(x), timeout=10)
                self.assertEqual(status, 200)
        finally:
            for raw in stalled:
                raw.close()

    def test_metrics_pass_promtool(self):
        _, _, text = http(self.address, "GET", "/metrics")
        checked = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
        output = (checked.stdout + checked.stderr).decode()
        # 0: clean. 3: lint warnings only; those allowed are Triton's own names, kept so Triton
        # dashboards work (nv_inference_count has no _total suffix in Triton either).
        self.assertIn(checked.returncode, (0, 3), output)
        for line in output.splitlines():
            self.assertTrue(line.startswith("nv_inference_"), line)
        for name in ("infermark_request_duration_seconds_bucket", "infermark_batch_size_bucket",
                     "process_resident_memory_bytes", "nv_inference_queue_duration_us"):
            self.assertIn(name, text.decode())


class ServeLimitsAndShutdown(unittest.TestCase):
    started = []  # every server process, so none outlives the test run

    @classmethod
    def tearDownClass(cls):
        for process in cls.started:
            if process.poll() is None:
                process.kill()
            process.wait()
            process.stdout.close()

    def test_oversized_body_is_413(self):
        process, address = start_server("--max-body-mb", "1")
        try:
            status, _, body = http(address, "POST", "/v2/models/tiny_cnn/infer", b" " * (2 << 20))
            self.assertEqual(status, 413)
            self.assertIn("limit of 1048576 bytes", json.loads(body)["error"])
            self.assertEqual(http(address, "GET", "/v2/health/live")[0], 200)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)

    def test_sigterm_drains_requests_in_flight_and_writes_ab_results(self):
        results = tempfile.mkdtemp(prefix="serve-results-")
        process, address = start_server("--out", results)
        x = np.random.default_rng(1).random((1, 3, 32, 32), dtype=np.float32)
        body = infer_body(x)
        for variant in ("onnxruntime", "openvino"):  # both variants serve traffic before the signal
            for _ in range(30):
                self.assertEqual(http(address, "POST", "/v2/models/tiny_cnn/infer", body, {"X-Model-Variant": variant})[0], 200)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(http, address, "POST", "/v2/models/tiny_cnn/infer", body) for _ in range(8)]
            time.sleep(0.002)  # requests on their way or in the 5 ms batching window
            process.send_signal(signal.SIGTERM)
            statuses = [future.result()[0] for future in futures]
        process.wait(timeout=60)
        output = process.stdout.read()
        self.assertEqual(process.returncode, 0, output)
        self.assertIn("0 requests still in flight", output)
        # Each request either completed or was refused cleanly (503, or no connection once the listener closed).
        for status in statuses:
            self.assertIn(status, (200, 503, 0))
        self.assertIn(200, statuses)
        # Each variant's served latencies became a result file; `infermark report` compares them.
        folders = glob.glob(os.path.join(results, "*-serve*"))
        self.assertEqual(len(folders), 1, output)
        self.assertEqual(sorted(os.listdir(folders[0])), ["tiny_cnn-onnxruntime.json", "tiny_cnn-openvino.json"])
        with open(os.path.join(folders[0], "tiny_cnn-openvino.json")) as f:
            result = json.load(f)
        self.assertEqual(result["scenario"]["name"], "serve")
        self.assertGreaterEqual(result["scenario"]["timed_runs"], 30)
        report = subprocess.run([INFERMARK, "report", folders[0]], capture_output=True, text=True, timeout=120)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("A/B on live traffic (against the control 'onnxruntime'", report.stdout)
        self.assertRegex(report.stdout, r"\| openvino \|\s+\d+ \|")
        shutil.rmtree(results)


class ServeShadowComparison(unittest.TestCase):
    def test_mirrored_requests_are_compared_by_shape_in_metrics_and_the_report(self):
        results = tempfile.mkdtemp(prefix="serve-shadow-")
        config = os.path.join(results, "models.yaml")
        with open(config, "w") as f:
            f.write(f"""models:
  - name: tiny_cnn
    file: {os.path.abspath(MODEL_FILE)}
    variants:
      - {{name: primary, backend: onnxruntime, weight: 1, shadow: {{to: candidate, share: 1}}}}
      - {{name: candidate, backend: openvino, weight: 0}}
""")
        process, address = start_server("--out", results, model_flags=("--config", config))
        try:
            rng = np.random.default_rng(11)
            for size in (32, 32, 32, 32, 32):
                x = rng.random((1, 3, size, size), dtype=np.float32)
                self.assertEqual(http(address, "POST", "/v2/models/tiny_cnn/infer", infer_body(x))[0], 200)
            series = 'infermark_shadow_comparisons_total{model="tiny_cnn",shadow="candidate",shape="1x3x32x32",variant="primary"}'
            wait_until(lambda: metric_values(address, "infermark_shadow_comparisons_total").get(series) == 5, 30,
                       "five shadow comparisons in /metrics")
        finally:
            self.assertEqual(stop_server(process), 0)
        folder = glob.glob(os.path.join(results, "*-serve*"))[0]
        report = subprocess.run([INFERMARK, "report", folder], capture_output=True, text=True, timeout=120)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertRegex(report.stdout, r"Shadow: 'primary' mirrored to 'candidate': 1x3x32x32: \d+ of 5 disagreed")
        shutil.rmtree(results)


class ServeOverloadAndFailures(unittest.TestCase):
    @classmethod
    def tearDownClass(cls):
        ServeLimitsAndShutdown.tearDownClass()

    def test_full_queue_answers_429_with_retry_after(self):
        # ResNet-50 takes tens of ms per image here: 12 clients against a queue of 1 must overflow it.
        process, address = start_server(model_flags=("--model", os.path.join(MODELS, "resnet50.onnx"), "-b", "onnxruntime",
                                                     "--max-queue", "1"))
        try:
            x = np.random.default_rng(3).random((1, 3, 224, 224), dtype=np.float32)
            body = json.dumps({"inputs": [{"name": "input", "shape": [1, 3, 224, 224], "datatype": "FP32",
                                           "parameters": {"binary_data_size": x.nbytes}}]}).encode()
            headers = {"Inference-Header-Content-Length": str(len(body))}
            with concurrent.futures.ThreadPoolExecutor(12) as pool:
                answers = list(pool.map(lambda _: http(address, "POST", "/v2/models/resnet50/infer", body + x.tobytes(), headers),
                                        range(24)))
            statuses = [status for status, _, _ in answers]
            self.assertIn(200, statuses)
            self.assertIn(429, statuses)
            self.assertEqual(set(statuses), {200, 429})
            refused = next(answer for answer in answers if answer[0] == 429)
            self.assertEqual(refused[1].get("Retry-After"), "1")
            self.assertIn("queue is full", json.loads(refused[2])["error"])
            rejections = metric_values(address, "infermark_rejections_total")
            self.assertEqual(sum(rejections.values()), statuses.count(429))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)

    def test_fast_unbatched_model_runs_inline_unless_told_not_to(self):
        reference = onnxruntime.InferenceSession(MODEL_FILE, providers=["CPUExecutionProvider"])
        x = np.random.default_rng(5).random((1, 3, 32, 32), dtype=np.float32)
        inline_cell = 'infermark_inline_executions_total{model="tiny_cnn",variant="onnxruntime",version="1"}'
        # A threshold no machine misses (100 ms), then the workers only: the same answers either way.
        for threshold, expected_inline in (("100000", 12), ("0", 0)):
            process, address = start_server(model_flags=("--model", MODEL_FILE, "-b", "onnxruntime",
                                                         "--inline-below-us", threshold))
            try:
                client = triton_http.InferenceServerClient(address)
                for _ in range(12):  # one at a time: the instance is idle and nothing is queued
                    request = triton_http.InferInput("input", list(x.shape), "FP32")
                    request.set_data_from_numpy(x, binary_data=True)
                    output = client.infer("tiny_cnn", [request]).as_numpy("logits")
                    np.testing.assert_allclose(output, reference.run(None, {"input": x})[0], rtol=1e-4, atol=1e-5)
                client.close()
                self.assertEqual(metric_values(address, "infermark_inline_executions_total")[inline_cell], expected_inline)
                self.assertEqual(metric_values(address, "nv_inference_exec_count")[inline_cell.replace(
                    "infermark_inline_executions_total", "nv_inference_exec_count")], 12)
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)

    def test_failing_variant_opens_its_circuit_breaker(self):
        # An embedding lookup: ids outside its 10 rows pass the shape and dtype checks but make
        # ONNX Runtime's Gather fail, a real failure inside the framework.
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        table = numpy_helper.from_array(np.arange(40, dtype=np.float32).reshape(10, 4), "table")
        graph = helper.make_graph([helper.make_node("Gather", ["table", "ids"], ["rows"], axis=0)], "lookup",
                                  [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", 2])],
                                  [helper.make_tensor_value_info("rows", TensorProto.FLOAT, ["batch", 2, 4])], [table])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        model_file = os.path.join(tempfile.mkdtemp(prefix="lookup-"), "lookup.onnx")
        onnx.save(model, model_file)
        process, address = start_server(model_flags=("--model", model_file, "-b", "onnxruntime"))
        ids = lambda value: json.dumps({"inputs": [{"name": "ids", "shape": [1, 2], "datatype": "INT64",
                                                     "data": [1, value]}]}).encode()
        try:
            bad = ids(200)
            statuses = [http(address, "POST", "/v2/models/lookup/infer", bad)[0] for _ in range(8)]
            self.assertEqual(statuses[:5], [500] * 5)  # five failures in a row trip the breaker...
            self.assertEqual(set(statuses[5:]), {503})  # ...which then refuses at once
            status, headers, text = http(address, "POST", "/v2/models/lookup/infer", bad)
            self.assertEqual(status, 503)
            self.assertIn("circuit breaker is open", json.loads(text)["error"])
            self.assertIn("Retry-After", headers)
            self.assertEqual(metric_values(address, "infermark_circuit_breaker_open")
                             ['infermark_circuit_breaker_open{model="lookup",variant="onnxruntime",version="1"}'], 1)
            # After the cooldown a trial request goes through; a good one closes the breaker again.
            time.sleep(1.2)
            self.assertEqual(http(address, "POST", "/v2/models/lookup/infer", ids(3))[0], 200)
            self.assertEqual(http(address, "POST", "/v2/models/lookup/infer", ids(4))[0], 200)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


if __name__ == "__main__":
    unittest_main.main()
