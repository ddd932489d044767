"""`infermark serve` over KServe v2 gRPC, driven by Triton's official client (tritonclient.grpc,
which sends raw tensor bytes) and by the protocol's own stubs (typed tensor contents). Outputs are
checked against ONNX Runtime's Python package on the same inputs; routing by the x-model-variant
metadata key and by version is checked in /metrics.

Usage: serve_grpc_test.py INFERMARK MODELS_DIR
"""

import os
import queue
import sys
import tempfile
import unittest

import grpc
import numpy as np
import onnxruntime
import tritonclient.grpc as triton_grpc
from tritonclient.grpc import model_config_pb2, service_pb2, service_pb2_grpc
from tritonclient.utils import InferenceServerException

from serve_support import metric_values, start_grpc_server, stop_server
import unittest_main

INFERMARK, MODELS = sys.argv[1], sys.argv[2]
MODEL_FILE = os.path.join(MODELS, "tiny_cnn.onnx")


class ServeOverGrpc(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process, cls.http_address, cls.grpc_address = start_grpc_server(
            INFERMARK, ["--model", MODEL_FILE, "-b", "onnxruntime,openvino", "--max-batch", "8", "--batch-delay-us", "2000",
                        "--port", "0", "--grpc-port", "0", "--io-threads", "2",
                        "--out", tempfile.mkdtemp(prefix="serve-test-results-")])
        cls.client = triton_grpc.InferenceServerClient(cls.grpc_address)
        cls.reference = onnxruntime.InferenceSession(MODEL_FILE, providers=["CPUExecutionProvider"])
        cls.rng = np.random.default_rng(17)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        code = stop_server(cls.process)  # SIGTERM: both fronts drain, then a clean exit
        if code != 0:
            raise AssertionError(f"infermark serve exited with {code} after SIGTERM")

    def expected(self, x):
        return self.reference.run(None, {"input": x})[0]

    def infer(self, x, name="input", **kwargs):
        tensor = triton_grpc.InferInput(name, list(x.shape), "FP32")
        tensor.set_data_from_numpy(x)
        return self.client.infer("tiny_cnn", [tensor], **kwargs)

    def refusal(self, call):
        with self.assertRaises(InferenceServerException) as caught:
            call()
        return caught.exception

    def routed(self, variant, by):
        series = metric_values(self.http_address, "infermark_routed_total")
        return sum(value for name, value in series.items() if f'variant="{variant}"' in name and f'by="{by}"' in name)

    def test_health_and_metadata(self):
        self.assertTrue(self.client.is_server_live())
        self.assertTrue(self.client.is_server_ready())
        self.assertTrue(self.client.is_model_ready("tiny_cnn"))
        self.assertTrue(self.client.is_model_ready("tiny_cnn", "openvino"))  # a version names a variant
        server = self.client.get_server_metadata()
        self.assertEqual(server.name, "infermark")
        self.assertIn("statistics", server.extensions)
        metadata = self.client.get_model_metadata("tiny_cnn")
        self.assertEqual(metadata.name, "tiny_cnn")
        self.assertEqual(list(metadata.versions), ["1"])
        self.assertEqual((metadata.inputs[0].name, metadata.inputs[0].datatype), ("input", "FP32"))
        self.assertEqual(list(metadata.inputs[0].shape), [-1, 3, 32, 32])
        self.assertEqual(metadata.outputs[0].name, "logits")
        index = self.client.get_model_repository_index()
        self.assertEqual([(m.name, m.state) for m in index.models], [("tiny_cnn", "READY")])

    def test_model_config(self):
        config = self.client.get_model_config("tiny_cnn").config
        self.assertEqual(config.name, "tiny_cnn")
        self.assertEqual(config.max_batch_size, 8)
        self.assertEqual(list(config.input[0].dims), [3, 32, 32])  # Triton leaves the batch dimension out
        self.assertEqual(config.input[0].data_type, model_config_pb2.TYPE_FP32)
        self.assertEqual(config.output[0].name, "logits")
        self.assertEqual(config.dynamic_batching.max_queue_delay_microseconds, 2000)
        self.assertEqual(config.instance_group[0].kind, model_config_pb2.ModelInstanceGroup.KIND_CPU)
        self.assertEqual(config.instance_group[0].count, 1)
        as_json = self.client.get_model_config("tiny_cnn", as_json=True)["config"]
        self.assertEqual(as_json["input"][0]["data_type"], "TYPE_FP32")

    def test_infer_on_each_variant_matches_onnxruntime(self):
        x = self.rng.random((3, 3, 32, 32), dtype=np.float32)
        for variant in ("onnxruntime", "openvino"):
            before = self.routed(variant, "header")
            wanted = triton_grpc.InferRequestedOutput("logits")
            result = self.infer(x, outputs=[wanted], headers={"x-model-variant": variant}, request_id="r-" + variant)
            np.testing.assert_allclose(result.as_numpy("logits"), self.expected(x), rtol=1e-3, atol=1e-4)
            response = result.get_response()
            self.assertEqual((response.model_name, response.model_version, response.id), ("tiny_cnn", "1", "r-" + variant))
            self.assertEqual(list(response.outputs[0].shape), [3, 10])
            self.assertEqual(self.routed(variant, "header"), before + 1)
        # A version naming a variant; no outputs asked for: every output.
        before = self.routed("openvino", "version")
        result = self.infer(x, model_version="openvino")
        np.testing.assert_allclose(result.as_numpy("logits"), self.expected(x), rtol=1e-3, atol=1e-4)
        self.assertEqual(self.routed("openvino", "version"), before + 1)
        statistics = self.client.get_inference_statistics("tiny_cnn", as_json=True)["model_stats"][0]
        self.assertGreaterEqual(int(statistics["inference_count"]), 9)
        self.assertGreater(int(statistics["inference_stats"]["success"]["count"]), 0)
        everything = self.client.get_inference_statistics()  # no name: every model
        self.assertEqual([s.name for s in everything.model_stats], ["tiny_cnn"])

    def counts(self):
        """(executions, inferences) of tiny_cnn from the statistics extension."""
        statistics = self.client.get_inference_statistics("tiny_cnn").model_stats[0]
        return statistics.execution_count, statistics.inference_count

    def test_concurrent_requests_all_answered(self):
        # Every request its own input, checked against ONNX Runtime on that input alone: a row
        # handed to the wrong request in a dynamic batch fails here.
        inputs = [self.rng.random((1, 3, 32, 32), dtype=np.float32) for _ in range(48)]
        executions_before, inferences_before = self.counts()
        answers = queue.Queue()
        for k, x in enumerate(inputs):
            tensor = triton_grpc.InferInput("input", list(x.shape), "FP32")
            tensor.set_data_from_numpy(x)
            self.client.async_infer("tiny_cnn", [tensor], lambda result, error, k=k: answers.put((k, result, error)))
        for _ in inputs:
            k, result, error = answers.get(timeout=60)
            self.assertIsNone(error)
            np.testing.assert_allclose(result.as_numpy("logits"), self.expected(inputs[k]), rtol=1e-3, atol=1e-4,
                                       err_msg=f"request {k}")
        # All in flight at once with a 2 ms batching window: requests shared executions.
        executions, inferences = self.counts()
        self.assertEqual(inferences - inferences_before, len(inputs))
        self.assertLess(executions - executions_before, inferences - inferences_before)

    def test_typed_contents_through_the_protocol_stubs(self):
        x = self.rng.random((2, 3, 32, 32), dtype=np.float32)
        request = service_pb2.ModelInferRequest(model_name="tiny_cnn", id="typed")
        tensor = request.inputs.add(name="input", datatype="FP32", shape=list(x.shape))
        tensor.contents.fp32_contents.extend(x.flatten().tolist())
        with grpc.insecure_channel(self.grpc_address) as channel:
            stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
            response, call = stub.ModelInfer.with_call(request, metadata=[("x-model-variant", "openvino")], timeout=60)
            self.assertIn(("x-model-variant", "openvino"), call.initial_metadata())
            logits = np.frombuffer(response.raw_output_contents[0], dtype=np.float32).reshape(list(response.outputs[0].shape))
            np.testing.assert_allclose(logits, self.expected(x), rtol=1e-3, atol=1e-4)
            self.assertEqual(response.id, "typed")
            del tensor.contents.fp32_contents[1:]
            with self.assertRaises(grpc.RpcError) as caught:
                stub.ModelInfer(request, timeout=60)
            self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("input 'input'.contents.fp32_contents: 1 values for shape 2x3x32x32", caught.exception.details())

    def test_errors_carry_the_http_apis_messages(self):
        x = self.rng.random((1, 3, 32, 32), dtype=np.float32)
        error = self.refusal(lambda: self.client.get_model_metadata("nope"))
        self.assertEqual(error.status(), "StatusCode.NOT_FOUND")
        self.assertIn("unknown model 'nope' (served: tiny_cnn)", error.message())
        error = self.refusal(lambda: self.client.infer("nope", [triton_grpc.InferInput("input", [1], "FP32")]))
        self.assertEqual(error.status(), "StatusCode.NOT_FOUND")
        error = self.refusal(lambda: self.infer(x, name="wrong"))
        self.assertEqual(error.status(), "StatusCode.INVALID_ARGUMENT")
        self.assertIn("input 'wrong': the model has no such input (inputs: input)", error.message())
        error = self.refusal(lambda: self.infer(x, headers={"x-model-variant": "nosuch"}))
        self.assertIn("x-model-variant: model 'tiny_cnn' has no variant 'nosuch' (variants: onnxruntime, openvino)",
                      error.message())
        error = self.refusal(lambda: self.infer(x, model_version="7"))
        self.assertEqual(error.status(), "StatusCode.NOT_FOUND")
        self.assertIn("has no version '7'", error.message())
        error = self.refusal(lambda: self.infer(self.rng.random((9, 3, 32, 32), dtype=np.float32)))
        self.assertIn("batch of 9 rows exceeds max_batch_size 8", error.message())
        error = self.refusal(lambda: self.infer(x, outputs=[triton_grpc.InferRequestedOutput("probs")]))
        self.assertIn("output 'probs': the model has no such output (outputs: logits)", error.message())
        error = self.refusal(lambda: self.client.get_model_config("tiny_cnn", model_version="7"))
        self.assertEqual(error.status(), "StatusCode.NOT_FOUND")


class GrpcPortChoices(unittest.TestCase):
    def test_off_and_busy(self):
        flags = ["--model", MODEL_FILE, "-b", "onnxruntime", "--port", "0", "--out", tempfile.mkdtemp(prefix="serve-test-results-")]
        process, _, grpc_address = start_grpc_server(INFERMARK, [*flags, "--no-grpc"])
        try:
            self.assertIsNone(grpc_address)
        finally:
            self.assertEqual(stop_server(process), 0)
        process, _, grpc_address = start_grpc_server(INFERMARK, [*flags, "--grpc-port", "0"])
        try:  # a second server on the same gRPC port exits naming it
            with self.assertRaises(RuntimeError) as caught:
                start_grpc_server(INFERMARK, [*flags, "--grpc-port", grpc_address.rsplit(":", 1)[1]], timeout=60)
            self.assertIn("gRPC: cannot listen on", str(caught.exception))
        finally:
            self.assertEqual(stop_server(process), 0)


if __name__ == "__main__":
    unittest_main.main()
