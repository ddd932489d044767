"""A Triton Python-backend model (`model.py`) that runs an ONNX model with onnxruntime, one
request per call: how a Triton without its ONNX Runtime backend serves ONNX. tools/peers/
triton_vs_serve.py copies it into a model repository as MODEL/1/model.py; the model's config.pbtxt
names the ONNX file and the intra-op threads in its `parameters`."""

import json

import onnxruntime
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        parameters = {key: value["string_value"] for key, value in config["parameters"].items()}
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = int(parameters["intra_op_threads"])
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = onnxruntime.InferenceSession(parameters["onnx_file"], options,
                                                    providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.outputs = [o.name for o in self.session.get_outputs()]

    def execute(self, requests):
        responses = []
        for request in requests:
            feed = {name: pb_utils.get_input_tensor_by_name(request, name).as_numpy() for name in self.inputs}
            results = self.session.run(self.outputs, feed)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor(name, value)
                                                         for name, value in zip(self.outputs, results)]))
        return responses
