"""TFLite models for the tflite backend, each with a manifest beside it (models/<name>.json).

- tiny (default, seconds): models/tiny_cnn_tflite.tflite, the test network tiny_cnn.onnx carried
  over op by op into TFLite's own flatbuffer schema (the generated schema classes ai-edge-litert
  ships), with the very same weights. Its input stays NCHW (a TRANSPOSE op leads), so ONNX Runtime
  and TFLite can be fed one tensor and their outputs compared; the export checks exactly that.
  Padding is an explicit PAD op: TFLite's SAME padding splits odd padding unlike ONNX at stride 2.
- resnet50 (optional): models/resnet50_keras.tflite, Keras' ResNet50 (random weights, seed 7)
  converted by TensorFlow's own TFLiteConverter. tensorflow-cpu is large, so scripts/setup installs
  it only on request into a venv of its own, passed here as --tensorflow-python (the conversion
  runs there; this script, the manifest and the check run in .venv). Its weights are not
  torchvision's: compare its timings with resnet50.onnx, not its outputs.
"""
import argparse
import importlib.metadata
import json
import pathlib
import subprocess

import numpy as np

SEED = 7


def _manifest(path: pathlib.Path, name: str, weights: str, producer: dict, inputs, outputs) -> None:
    """zoo_common's manifest layout for a .tflite file (neither torch nor an ONNX opset wrote it)."""
    from zoo_common import _manifest as manifest_fields  # imports torch, which the TensorFlow venv lacks

    manifest = manifest_fields(name=name, task="image-classification", weights=weights, producer=producer,
                               files={"tflite": path}, inputs=inputs, outputs=outputs)
    path.with_suffix(".json").write_text(json.dumps(manifest, indent=2) + "\n")


def _litert_interpreter(path: pathlib.Path):
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path))
    interpreter.allocate_tensors()
    return interpreter


def _check_against_onnxruntime(tflite: pathlib.Path, onnx_path: pathlib.Path) -> None:
    """The carried-over model must compute what ONNX Runtime computes from the ONNX original."""
    import onnxruntime

    x = np.random.default_rng(SEED).standard_normal((1, 3, 32, 32), dtype=np.float32)
    interpreter = _litert_interpreter(tflite)
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    actual = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    expected = onnxruntime.InferenceSession(str(onnx_path)).run(None, {"input": x})[0]
    error = float(np.abs(actual - expected).max())
    if error > 1e-4:
        raise SystemExit(f"export_tflite: {tflite} differs from {onnx_path} by {error} (max abs)")
    print(f"{tflite.name}: LiteRT agrees with ONNX Runtime on {onnx_path.name} (max abs difference {error:.2e})")


class TfliteGraph:
    """Builds a single-subgraph TFLite model with the schema's object API."""

    def __init__(self):
        from ai_edge_litert import schema_py_generated as fb
        self.fb = fb
        self.tensors, self.buffers, self.operators, self.opcodes = [], [fb.BufferT()], [], []

    def tensor(self, name: str, shape, data: np.ndarray | None = None) -> int:
        """A float32 activation (data None) or a constant holding `data` (float32 or int32)."""
        t = self.fb.TensorT()
        t.name, t.shape = name, list(shape)
        kind = data.dtype if data is not None else np.dtype(np.float32)
        t.type = {np.dtype(np.float32): self.fb.TensorType.FLOAT32, np.dtype(np.int32): self.fb.TensorType.INT32}[kind]
        t.buffer = 0
        if data is None:
            t.shapeSignature = [-1] + list(shape[1:])  # activations: any batch, like tiny_cnn.onnx
        else:
            buffer = self.fb.BufferT()
            buffer.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), dtype=np.uint8)
            self.buffers.append(buffer)
            t.buffer = len(self.buffers) - 1
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(self, code: int, inputs, outputs, options_type=0, options=None) -> None:
        if code not in self.opcodes:
            self.opcodes.append(code)
        op = self.fb.OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = self.opcodes.index(code), list(inputs), list(outputs)
        op.builtinOptionsType, op.builtinOptions = options_type, options
        self.operators.append(op)

    def write(self, path: pathlib.Path, inputs, outputs) -> None:
        fb = self.fb
        subgraph = fb.SubGraphT()
        subgraph.tensors, subgraph.operators = self.tensors, self.operators
        subgraph.inputs, subgraph.outputs, subgraph.name = list(inputs), list(outputs), "main"
        model = fb.ModelT()
        model.version, model.description = 3, "infermark tools/zoo/export_tflite.py"
        model.subgraphs, model.buffers = [subgraph], self.buffers
        model.operatorCodes = []
        for code in self.opcodes:
            opcode = fb.OperatorCodeT()
            opcode.builtinCode, opcode.deprecatedBuiltinCode, opcode.version = code, min(code, 127), 1
            model.operatorCodes.append(opcode)
        from ai_edge_litert.tools import flatbuffer_utils
        flatbuffer_utils.write_model(model, str(path))


def _onnx_to_tflite(onnx_path: pathlib.Path, out: pathlib.Path) -> None:
    """Carries tiny_cnn's ops (Conv, Relu, GlobalAveragePool, Flatten, Gemm) over to TFLite ops."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path))
    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    g = TfliteGraph()
    fb, ops = g.fb, g.fb.BuiltinOperator
    graph_input = model.graph.input[0]
    _, c, h, w = [d.dim_value for d in graph_input.type.tensor_type.shape.dim]
    x = g.tensor(graph_input.name, [1, c, h, w])
    first_input, shape = x, [1, h, w, c]
    nhwc = g.tensor("nchw_to_nhwc", shape)
    g.op(ops.TRANSPOSE, [x, g.tensor("perm", [4], np.array([0, 2, 3, 1], np.int32))], [nhwc],
         fb.BuiltinOptions.TransposeOptions, fb.TransposeOptionsT())
    x = nhwc
    nodes = list(model.graph.node)
    i = 0
    while i < len(nodes):
        node = nodes[i]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "Conv":
            top, left, bottom, right = attrs["pads"]
            padded = g.tensor(node.name + "/pad", [1, shape[1] + top + bottom, shape[2] + left + right, shape[3]])
            paddings = np.array([[0, 0], [top, bottom], [left, right], [0, 0]], np.int32)
            g.op(ops.PAD, [x, g.tensor(node.name + "/paddings", [4, 2], paddings)], [padded],
                 fb.BuiltinOptions.PadOptions, fb.PadOptionsT())
            kernel = weights[node.input[1]].transpose(0, 2, 3, 1)  # OIHW -> OHWI
            sh, sw = attrs["strides"]
            shape = [1, (shape[1] + top + bottom - kernel.shape[1]) // sh + 1,
                     (shape[2] + left + right - kernel.shape[2]) // sw + 1, kernel.shape[0]]
            fused_relu = i + 1 < len(nodes) and nodes[i + 1].op_type == "Relu"
            options = fb.Conv2DOptionsT()
            options.padding, options.strideH, options.strideW = fb.Padding.VALID, sh, sw
            options.fusedActivationFunction = fb.ActivationFunctionType.RELU if fused_relu else fb.ActivationFunctionType.NONE
            y = g.tensor(node.output[0], shape)
            g.op(ops.CONV_2D, [padded, g.tensor(node.input[1], kernel.shape, kernel),
                               g.tensor(node.input[2], [kernel.shape[0]], weights[node.input[2]])], [y],
                 fb.BuiltinOptions.Conv2DOptions, options)
            i += 2 if fused_relu else 1
        elif node.op_type == "GlobalAveragePool" and nodes[i + 1].op_type == "Flatten":
            shape = [1, shape[3]]
            y = g.tensor(nodes[i + 1].output[0], shape)
            options = fb.ReducerOptionsT()
            options.keepDims = False
            g.op(ops.MEAN, [x, g.tensor(node.name + "/axes", [2], np.array([1, 2], np.int32))], [y],
                 fb.BuiltinOptions.ReducerOptions, options)
            i += 2
        elif node.op_type == "Gemm" and attrs.get("transB") == 1:
            kernel = weights[node.input[1]]
            shape = [1, kernel.shape[0]]
            y = g.tensor(node.output[0], shape)
            g.op(ops.FULLY_CONNECTED, [x, g.tensor(node.input[1], kernel.shape, kernel),
                                       g.tensor(node.input[2], [kernel.shape[0]], weights[node.input[2]])], [y],
                 fb.BuiltinOptions.FullyConnectedOptions, fb.FullyConnectedOptionsT())
            i += 1
        else:
            raise SystemExit(f"export_tflite: {onnx_path}: op {node.op_type} ({node.name}) is not carried over")
        x = y
    g.write(out, [first_input], [x])


def export_tiny(models: pathlib.Path) -> None:
    source = models / "tiny_cnn.onnx"
    out = models / "tiny_cnn_tflite.tflite"
    _onnx_to_tflite(source, out)
    _check_against_onnxruntime(out, source)
    _manifest(out, "tiny_cnn_tflite", f"tiny_cnn.onnx's (random, seed {SEED}), carried over unchanged",
              {"ai_edge_litert_version": importlib.metadata.version("ai-edge-litert")},
              [("input", "float32", ["batch", 3, 32, 32])], [("logits", "float32", ["batch", 10])])


def convert_keras_resnet50(out: pathlib.Path) -> None:
    """Runs in the TensorFlow venv: Keras ResNet50 through TFLiteConverter into `out`."""
    import tensorflow as tf

    tf.keras.utils.set_random_seed(SEED)
    model = tf.keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3), classes=1000)
    out.write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    (out.parent / (out.stem + ".tensorflow-version")).write_text(tf.__version__)


def export_resnet50(models: pathlib.Path, tensorflow_python: pathlib.Path) -> None:
    out = models / "resnet50_keras.tflite"
    subprocess.run([str(tensorflow_python), __file__, "--convert-keras-resnet50", str(out)], check=True)
    version_file = out.parent / (out.stem + ".tensorflow-version")
    tensorflow_version = version_file.read_text()
    version_file.unlink()
    interpreter = _litert_interpreter(out)  # the converter names the tensors

    def spec(detail):
        return detail["name"], np.dtype(detail["dtype"]).name, [int(n) for n in detail["shape"]]

    _manifest(out, "resnet50_keras", f"random (Keras ResNet50, seed {SEED})", {"tensorflow_version": tensorflow_version},
              [spec(d) for d in interpreter.get_input_details()], [spec(d) for d in interpreter.get_output_details()])
    print(f"{out.name}: converted by TensorFlow {tensorflow_version}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, help="models folder (tiny reads tiny_cnn.onnx there)")
    parser.add_argument("--model", choices=["tiny", "resnet50"], default="tiny")
    parser.add_argument("--tensorflow-python", type=pathlib.Path, help="python of a venv with tensorflow-cpu (resnet50)")
    parser.add_argument("--convert-keras-resnet50", type=pathlib.Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.convert_keras_resnet50:
        convert_keras_resnet50(args.convert_keras_resnet50)
    elif args.out is None:
        parser.error("--out is required")
    elif args.model == "tiny":
        export_tiny(args.out)
    elif args.tensorflow_python is None:
        parser.error("--model resnet50 needs --tensorflow-python")
    else:
        export_resnet50(args.out, args.tensorflow_python)


if __name__ == "__main__":
    main()
