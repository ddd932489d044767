"""OCR models with real, pretrained weights: PaddleOCR's PP-OCRv4 text detection (DB) and text
recognition (SVTR, CTC over 6625 symbols) as the PyPI package rapidocr-onnxruntime ships them,
for the pipeline study (detection -> recognition) and for measuring what FP16/INT8 cost on real
weights.

- ocr_det: x [batch, 3, height, width] (height and width multiples of 32), pixel values scaled to
  [-1, 1] -> probability map [batch, 1, height, width] (text where above 0.3).
- ocr_rec: x [batch, 3, 48, width] (a text line, height 48) -> softmax [batch, width/8, 6625]
  (greedy CTC decoding: arg-max per step); the character list is the ONNX metadata property
  'character'.

The package's files use opset 12; they are converted to opset 17 with onnx.version_converter and
the conversion is checked on the fixed inputs. Accuracy inputs are rendered text (pages for
detection, single lines for recognition), since the package ships no images.
"""
import pathlib

import numpy as np
import onnx
from onnx import version_converter

from zoo_common import ONNX_OPSET
from zoo_inputs import text_lines, text_pages
from zoo_packages import extract
from zoo_variants import Component, build_component, exporter_arguments, run_onnx

PACKAGE, VERSION = "rapidocr-onnxruntime", "1.4.4"
MODELS = {
    "ocr_det": "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
    "ocr_rec": "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
}


def name_dims(model: onnx.ModelProto, dims: dict) -> None:
    """Gives the graph's inputs and outputs the manifest's dimension names (or fixed sizes)."""
    for value in list(model.graph.input) + list(model.graph.output):
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            wanted = dims[value.name][axis]
            if isinstance(wanted, str):
                dim.dim_param = wanted
            else:
                dim.dim_value = wanted


def upgrade(source: pathlib.Path, target: pathlib.Path, dims: dict, feeds: list) -> float:
    """Converts to opset 17 with named dimensions; returns the largest output difference the
    conversion makes on `feeds` (ONNX Runtime runs both)."""
    model = onnx.load(str(source))
    converted = version_converter.convert_version(model, ONNX_OPSET)
    name_dims(converted, dims)
    onnx.checker.check_model(converted)
    onnx.save(converted, str(target))
    before, after = run_onnx(source, feeds), run_onnx(target, feeds)
    return max(float(np.abs(b[0] - a[0]).max()) for b, a in zip(before, after))


def components(work: pathlib.Path) -> list:
    weights = "pretrained (PaddleOCR PP-OCRv4, Chinese and English), carried by PyPI {}=={} as {}"
    det = dict(x=["batch", 3, "height", "width"], **{"sigmoid_0.tmp_0": ["batch", 1, "height", "width"]})
    rec = dict(x=["batch", 3, 48, "width"], **{"softmax_11.tmp_0": ["batch", "steps", 6625]})
    built = []
    for stem, dims, samples, note, kind in [
            ("ocr_det", det, lambda count, seed: text_pages(count, seed), "rendered text pages, 320x320", "map"),
            ("ocr_rec", rec, lambda count, seed: text_lines(count, seed), "rendered text lines, 48x320", "scores")]:
        member = MODELS[stem]
        carried = extract(PACKAGE, VERSION, member, work / f"{stem}.package.onnx")
        upgraded = work / f"{stem}.opset{ONNX_OPSET}.onnx"
        difference = upgrade(carried, upgraded, dims, samples(4, 0))
        carried.unlink()
        names = list(dims)
        built.append(Component(
            stem=stem, task="text-detection" if stem == "ocr_det" else "text-recognition",
            weights=weights.format(PACKAGE, VERSION, member.rsplit("/", 1)[1]), onnx_source=upgraded,
            inputs=[(names[0], "float32", dims[names[0]])], outputs=[(names[1], "float32", dims[names[1]])],
            dim_ranges={"batch": [1, 16], "height": [32, 2048], "width": [32, 2048], "steps": [4, 256]},
            output_kinds={names[1]: kind}, sample_inputs=samples, inputs_note=f"seeded {note}",
            extra={"onnx_opset": ONNX_OPSET,
                   "source": {"package": f"{PACKAGE}=={VERSION}", "file": member, "opset": 12,
                              "opset_conversion_max_abs_difference": difference},
                   **({"characters": "ONNX metadata property 'character' (one symbol a line; index 0 is the CTC blank)"}
                      if stem == "ocr_rec" else {"threshold": 0.3})}))
    return built


def main() -> None:
    args = exporter_arguments(__doc__).parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    formats = [f for f in args.formats if f != "torchscript"]  # no torch definition to trace
    for component in components(args.out):
        build_component(component, args.out, formats, args.precisions)
        component.onnx_source.unlink()


if __name__ == "__main__":
    main()
