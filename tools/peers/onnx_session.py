"""What the ONNX peer servers (tools/peers/*_onnx_server.py) share: an ONNX Runtime session set up as
`infermark serve -b onnxruntime --threads N` sets its own up, the KServe v2 datatypes and shapes of
its inputs and outputs, and the check of a request input against them."""

import onnxruntime

DATATYPES = {"tensor(float)": "FP32", "tensor(double)": "FP64", "tensor(float16)": "FP16",
             "tensor(int64)": "INT64", "tensor(int32)": "INT32", "tensor(int16)": "INT16",
             "tensor(int8)": "INT8", "tensor(uint8)": "UINT8", "tensor(bool)": "BOOL"}


def open_session(path, threads):
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def shape(arg):
    """An ONNX input's or output's shape with -1 for every dynamic dimension."""
    return [d if isinstance(d, int) and d > 0 else -1 for d in arg.shape]


def input_problem(model, expected_inputs, name, datatype, got_shape):
    """Why a request input does not fit the model (a message naming the field), or None."""
    expected = expected_inputs.get(name)
    if expected is None:
        return f"unexpected input '{name}' for model '{model}', expected {sorted(expected_inputs)}"
    if datatype != DATATYPES[expected.type]:
        return f"input '{name}' has datatype {datatype}, expected {DATATYPES[expected.type]}"
    want, got = shape(expected), list(got_shape)
    if len(got) != len(want) or any(w not in (-1, s) for w, s in zip(want, got)):
        return f"input '{name}' has shape {got}, expected {want}"
    return None
