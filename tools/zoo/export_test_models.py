"""Small ONNX models the test suite runs on real frameworks (seconds, not minutes).

- tiny_cnn.onnx / tiny_cnn.pt: conv + BN + ReLU + pool + linear classifier, dynamic batch,
  3x32x32 input, in ONNX and TorchScript (same weights, so the two can be cross-checked).
- tiny_cnn_dynamic_hw.onnx / .pt: the same network with dynamic height and width, which the harness
  cannot feed without an explicit --shape (or --shape-range, drawn per query).
- tiny_cnn_fp16.onnx: tiny_cnn with every tensor in FP16, inputs and outputs included.
- tiny_cnn_int8.onnx: tiny_cnn statically quantised to INT8 (QDQ) by ONNX Runtime's quantisation
  tool, calibrated on seeded random inputs.
- tiny_cnn_future_version.pt: tiny_cnn.pt with its archive's format version raised to 99, as a
  PyTorch newer than the installed LibTorch would write it (the bad-input test of the backend).
"""
import argparse
import pathlib
import zipfile

import numpy as np
import onnx
import torch
from onnxconverter_common import float16
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from zoo_common import export_onnx, export_torchscript, realistic_init, write_manifest


class TinyCnn(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 16, 3, padding=1, stride=2), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        self.classifier = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.classifier(self.features(x))


class SeededImages(CalibrationDataReader):
    """A few seeded random batches for static quantisation's calibration."""

    def __init__(self, count: int = 16) -> None:
        rng = np.random.default_rng(7)
        self._batches = iter([{"input": rng.standard_normal((1, 3, 32, 32), dtype=np.float32)} for _ in range(count)])

    def get_next(self):
        return next(self._batches, None)


def quantize_int8(fp32: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    quantize_static(str(fp32), str(out), SeededImages(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    return out


def convert_fp16(fp32: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    onnx.save(float16.convert_float_to_float16(onnx.load(str(fp32)), keep_io_types=False), str(out))
    return out


def with_format_version(source: pathlib.Path, target: pathlib.Path, version: int) -> pathlib.Path:
    """A copy of a TorchScript archive whose `version` record says `version`."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            zout.writestr(item, f"{version}\n".encode() if item.filename.endswith("/version") else data)
    return target


def tiny_edge(onnx_file: pathlib.Path, out: pathlib.Path, inputs: list, outputs: list) -> dict:
    """tiny_cnn as ncnn files (pnnx), as MNN (its converter) and as a Paddle inference folder
    (X2Paddle), each checked against ONNX Runtime on 8 seeded random inputs: format -> (path, check)."""
    import numpy as np

    import zoo_mnn
    import zoo_ncnn
    import zoo_paddle
    from zoo_variants import agreement, run_onnx

    random = np.random.default_rng(7)
    feeds = [{"input": random.standard_normal((1, 3, 32, 32), dtype=np.float32)} for _ in range(8)]
    reference = run_onnx(onnx_file, feeds)
    score = lambda ref, var: [{"output": "logits", **agreement([r[0] for r in ref], [v[0] for v in var], "scores")}]  # noqa: E731
    converted = {}
    for fmt, module, name in (("ncnn", zoo_ncnn, "tiny_cnn.ncnn.param"), ("mnn", zoo_mnn, "tiny_cnn.mnn"),
                              ("paddle", zoo_paddle, "tiny_cnn.paddle")):
        converted[fmt] = (out / name, module.checked_conversion(onnx_file, out / name, inputs, outputs, feeds, reference, score))
    return converted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()

    torch.manual_seed(7)
    model = TinyCnn()
    realistic_init(model, 7)
    model.eval()
    example = torch.randn(1, 3, 32, 32)
    outputs = [("logits", "float32", ["batch", 10])]

    fixed = [("input", "float32", ["batch", 3, 32, 32])]
    path = export_onnx(model, example, args.out / "tiny_cnn.onnx", fixed, outputs)
    scripted = export_torchscript(model, example, args.out / "tiny_cnn.pt")
    edge = tiny_edge(path, args.out, fixed, outputs)
    write_manifest(args.out / "tiny_cnn.json", name="tiny_cnn", task="image-classification",
                   files={"onnx": path, "torchscript": scripted, **{fmt: file for fmt, (file, _) in edge.items()}},
                   inputs=fixed, outputs=outputs, weights="random (seed 7)",
                   extra={f"{fmt}_conversion": check for fmt, (_, check) in edge.items()})
    future = with_format_version(scripted, args.out / "tiny_cnn_future_version.pt", 99)
    write_manifest(args.out / "tiny_cnn_future_version.json", name="tiny_cnn_future_version", task="image-classification",
                   files={"torchscript": future}, inputs=fixed, outputs=outputs,
                   weights="tiny_cnn.pt with the archive format version set to 99")

    fp16 = convert_fp16(path, args.out / "tiny_cnn_fp16.onnx")
    write_manifest(args.out / "tiny_cnn_fp16.json", name="tiny_cnn_fp16", task="image-classification",
                   files={"onnx": fp16}, inputs=[("input", "float16", ["batch", 3, 32, 32])],
                   outputs=[("logits", "float16", ["batch", 10])], weights="tiny_cnn (seed 7) converted to FP16")

    int8 = quantize_int8(path, args.out / "tiny_cnn_int8.onnx")
    write_manifest(args.out / "tiny_cnn_int8.json", name="tiny_cnn_int8", task="image-classification",
                   files={"onnx": int8}, inputs=fixed, outputs=outputs,
                   weights="tiny_cnn (seed 7) quantised to INT8 QDQ, calibrated on 16 seeded random inputs")

    dynamic = [("input", "float32", ["batch", 3, "height", "width"])]
    path = export_onnx(model, example, args.out / "tiny_cnn_dynamic_hw.onnx", dynamic, outputs)
    # TorchScript runs any height and width; the manifest tells LibTorch they are dynamic.
    scripted = export_torchscript(model, example, args.out / "tiny_cnn_dynamic_hw.pt")
    write_manifest(args.out / "tiny_cnn_dynamic_hw.json", name="tiny_cnn_dynamic_hw",
                   task="image-classification", files={"onnx": path, "torchscript": scripted}, inputs=dynamic,
                   outputs=outputs, weights="random (seed 7)")


if __name__ == "__main__":
    main()
