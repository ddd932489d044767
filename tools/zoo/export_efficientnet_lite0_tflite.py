"""EfficientNet-Lite0 (pretrained, the zoo's efficientnet-lite0 weights) as TFLite, converted by
PyPI onnx2tf from the same FP32 ONNX export, FP32 and onnx2tf's FP16 (FP16 weights, FP32 compute).

onnx2tf (TensorFlow 2.19 underneath; scripts/setup installs it on request into
third_party/onnx2tf-venv) converts with the input fixed at [1, 3, 224, 224] (with a dynamic batch
it transposes a residual Add wrongly and fails) and writes an NHWC model with TensorFlow's tensor
names. This script then edits the flatbuffer so that the file takes what the other formats take:
a leading TRANSPOSE from an NCHW `input` [batch, 3, 224, 224], the output named `logits`, and a
dynamic batch in the declared shapes (the graph runs any batch: the interpreter resizes it); the
signature defs, which name the old tensors, are dropped. onnx2tf looks in its working folder for
sample images (otherwise it downloads them): 20 opencv-doc photos are written there.

The file is kept only if LiteRT's output agrees with ONNX Runtime's on the FP32 ONNX on the
labelled photos and 16 other opencv-doc photos: the same top-1 on every photo and a max abs
difference of the logits below 1e-3 (FP32) or 0.1 (FP16). The manifest records both figures.
"""
import argparse
import importlib.metadata
import json
import os
import pathlib
import subprocess
import tempfile

import numpy as np
import torch

from export_efficientnet_lite0 import component
from zoo_common import _manifest, export_onnx
from zoo_images import labelled_images, photo_feeds, unlabelled_photos
from zoo_variants import manifest_output_kinds, run_onnx

STEM = "efficientnet_lite0_tflite"
ONNX2TF_FILES = {"fp32": "efficientnet_lite0_float32.tflite", "fp16": "efficientnet_lite0_float16.tflite"}
TOLERANCE = {"fp32": 1e-3, "fp16": 0.1}


def sample_images(folder: pathlib.Path) -> None:
    """onnx2tf's sample input file (20 RGB images, 128x128, [0, 1]) from opencv-doc photos."""
    from PIL import Image

    photos = unlabelled_photos()[:20]
    images = [np.asarray(Image.open(p).convert("RGB").resize((128, 128), Image.BILINEAR), dtype=np.float32) / 255
              for p in photos]
    np.save(folder / "calibration_image_sample_data_20x128x128x3_float32.npy", np.stack(images))


def convert(onnx2tf: pathlib.Path, source: pathlib.Path, work: pathlib.Path) -> pathlib.Path:
    """Runs onnx2tf on a copy of the ONNX file (its simplifier rewrites the file it reads)."""
    sample_images(work)
    env = dict(os.environ, PATH=f"{onnx2tf.parent}{os.pathsep}{os.environ.get('PATH', '')}")  # its onnxsim
    result = subprocess.run([str(onnx2tf), "-i", str(source), "-o", str(work / "converted"),
                             "-ois", "input:1,3,224,224"], cwd=work, env=env, capture_output=True, text=True)
    if result.returncode != 0 or not (work / "converted").is_dir():
        raise SystemExit(f"onnx2tf failed (exit {result.returncode}): {result.stdout[-2000:]}{result.stderr[-2000:]}")
    return work / "converted"


def nchw_dynamic_batch(source: pathlib.Path, target: pathlib.Path) -> None:
    """The converted model with an NCHW `input` (a leading TRANSPOSE to NHWC), the output named
    `logits`, and -1 as the batch of both in the declared shapes."""
    from ai_edge_litert import schema_py_generated as fb
    from ai_edge_litert.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model(str(source))
    if len(model.subgraphs) != 1 or len(model.subgraphs[0].inputs) != 1 or len(model.subgraphs[0].outputs) != 1:
        raise SystemExit(f"{source}: expected one subgraph with one input and one output")
    graph = model.subgraphs[0]
    nhwc = graph.tensors[graph.inputs[0]]
    if list(nhwc.shape) != [1, 224, 224, 3]:
        raise SystemExit(f"{source}: input shape {list(nhwc.shape)}, expected [1, 224, 224, 3]")
    nhwc.shapeSignature = [-1, 224, 224, 3]
    output = graph.tensors[graph.outputs[0]]
    output.name, output.shapeSignature = "logits", [-1, 1000]

    perm_buffer = fb.BufferT()
    perm_buffer.data = np.frombuffer(np.array([0, 2, 3, 1], np.int32).tobytes(), dtype=np.uint8)
    model.buffers.append(perm_buffer)
    perm = fb.TensorT()
    perm.name, perm.shape, perm.type, perm.buffer = "input_nchw_to_nhwc", [4], fb.TensorType.INT32, len(model.buffers) - 1
    empty = fb.BufferT()
    model.buffers.append(empty)
    nchw = fb.TensorT()
    nchw.name, nchw.shape, nchw.shapeSignature = "input", [1, 3, 224, 224], [-1, 3, 224, 224]
    nchw.type, nchw.buffer = fb.TensorType.FLOAT32, len(model.buffers) - 1
    graph.tensors += [perm, nchw]

    codes = [c.builtinCode for c in model.operatorCodes]
    if fb.BuiltinOperator.TRANSPOSE not in codes:
        code = fb.OperatorCodeT()
        code.builtinCode = code.deprecatedBuiltinCode = fb.BuiltinOperator.TRANSPOSE
        code.version = 1
        model.operatorCodes.append(code)
        codes.append(fb.BuiltinOperator.TRANSPOSE)
    transpose = fb.OperatorT()
    transpose.opcodeIndex = codes.index(fb.BuiltinOperator.TRANSPOSE)
    transpose.inputs, transpose.outputs = [len(graph.tensors) - 1, len(graph.tensors) - 2], [graph.inputs[0]]
    transpose.builtinOptionsType, transpose.builtinOptions = fb.BuiltinOptions.TransposeOptions, fb.TransposeOptionsT()
    graph.operators.insert(0, transpose)
    graph.inputs = [len(graph.tensors) - 1]
    model.signatureDefs = []
    flatbuffer_utils.write_model(model, str(target))


def run_litert(path: pathlib.Path, x: np.ndarray) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path))
    index = interpreter.get_input_details()[0]["index"]
    interpreter.resize_tensor_input(index, list(x.shape))
    interpreter.allocate_tensors()
    interpreter.set_tensor(index, x)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])


def agreement(path: pathlib.Path, onnx_path: pathlib.Path, precision: str) -> dict:
    """LiteRT on `path` against ONNX Runtime on the FP32 ONNX: labelled photos, then 16 others."""
    labelled, labels, _ = labelled_images()
    others = np.concatenate([feed["input"] for feed in photo_feeds(16, 3)])
    figures = {}
    for name, x in [("labelled", labelled), ("other", others)]:
        actual = run_litert(path, x)
        expected = run_onnx(onnx_path, [{"input": x}])[0][0]
        figures[name] = {"photos": len(x), "top1_agreement": float(np.mean(actual.argmax(1) == expected.argmax(1))),
                         "max_abs_difference": float(np.abs(actual - expected).max())}
        if name == "labelled":
            figures[name]["top1_vs_labels"] = float(np.mean(actual.argmax(1) == np.array(labels)))
    for name, f in figures.items():
        if f["top1_agreement"] < 1 or f["max_abs_difference"] > TOLERANCE[precision]:
            raise SystemExit(f"{path.name}: disagrees with ONNX Runtime on the {name} photos: {f}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder")
    parser.add_argument("--formats", nargs="+", default=["tflite"], choices=["tflite"])
    parser.add_argument("--precisions", nargs="+", default=["fp32", "fp16"], choices=sorted(ONNX2TF_FILES))
    parser.add_argument("--onnx2tf", type=pathlib.Path, required=True, help="onnx2tf's command (its venv's bin/onnx2tf)")
    args = parser.parse_args()
    args.onnx2tf = args.onnx2tf.absolute()
    if not args.onnx2tf.exists():
        raise SystemExit(f"{args.onnx2tf}: not found (INFERMARK_ONNX2TF=1 scripts/setup installs onnx2tf)")
    args.out.mkdir(parents=True, exist_ok=True)
    venv_python = args.onnx2tf.parent / "python"
    versions = subprocess.run([str(venv_python), "-c", "import importlib.metadata as m; "
                               "print(m.version('onnx2tf'), m.version('tensorflow'))"],
                              capture_output=True, text=True, check=True).stdout.split()
    with tempfile.TemporaryDirectory() as scratch:
        work = pathlib.Path(scratch)
        c = component(work)
        onnx_path = export_onnx(c.torch_model, torch.zeros(1, 3, 224, 224), work / "efficientnet_lite0.onnx",
                                c.inputs, c.outputs)
        source = work / "source.onnx"
        source.write_bytes(onnx_path.read_bytes())
        converted = convert(args.onnx2tf, source, work)
        for precision in args.precisions:
            name = STEM if precision == "fp32" else f"{STEM}_{precision}"
            target = args.out / f"{name}.tflite"
            nchw_dynamic_batch(converted / ONNX2TF_FILES[precision].replace("efficientnet_lite0", "source"), target)
            figures = agreement(target, onnx_path, precision)
            print(f"{name}: {figures}")
            manifest = _manifest(
                name=name, task=c.task, weights=c.weights, files={"tflite": target},
                inputs=[("input", "float32", ["batch", 3, 224, 224])], outputs=[("logits", "float32", ["batch", 1000])],
                dim_ranges=c.dim_ranges,
                producer={"onnx2tf_version": versions[0], "tensorflow_version": versions[1],
                          "ai_edge_litert_version": importlib.metadata.version("ai-edge-litert")})
            manifest["outputs"][0]["kind"] = manifest_output_kinds(c)["logits"]  # class_scores, as the ONNX file's
            manifest.update({**c.extra, "precision": precision, "family": "efficientnet-lite0",
                             "conversion": {"from": "the FP32 ONNX export (opset 17) of the same weights",
                                            "tool": f"onnx2tf {versions[0]} -ois input:1,3,224,224 ({ONNX2TF_FILES[precision]})",
                                            "edits": "leading TRANSPOSE from NCHW input, output named logits, dynamic batch",
                                            "agreement_with_onnxruntime_fp32": figures}})
            (args.out / f"{name}.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main()
