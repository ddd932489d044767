"""One model component in every requested format and precision, with its accuracy figures.

An exporter describes a component (a torch module, or an ONNX file a package carries), and
build_component writes into a staging folder: the FP32 ONNX file (always: it is the source of the
other formats), TorchScript, FP16 and INT8 ONNX, OpenVINO IR in FP32/FP16/INT8, one manifest per
precision (<stem>.json, <stem>_fp16.json, <stem>_int8.json), and in each reduced-precision manifest
the agreement of its outputs with the FP32 variant of the same format, run by the same runtime,
on a fixed set of inputs.
"""
import dataclasses
import importlib
import importlib.metadata
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Callable, Optional

import numpy as np

from zoo_common import ONNX_OPSET, export_onnx, export_torchscript, write_manifest

HERE = pathlib.Path(__file__).resolve().parent
SUFFIX = {"onnx": ".onnx", "torchscript": ".pt", "openvino-ir": ".xml", "ncnn": ".ncnn.param", "mnn": ".mnn", "paddle": ".paddle"}
# Edge formats: the module that converts and checks each (imported when asked for), and its converter.
EDGE_CONVERTERS = {"ncnn": ("zoo_ncnn", "pnnx"), "mnn": ("zoo_mnn", "MNN's converter"), "paddle": ("zoo_paddle", "X2Paddle")}
CALIBRATION_SEED, EVALUATION_SEED = 1, 2
MAP_THRESHOLD = 0.3  # where a probability map counts as "text" (DB detection's binarisation threshold)


@dataclasses.dataclass
class Component:
    stem: str
    task: str
    weights: str                       # how the weights were made: "random (seed 0)" or the package
    inputs: list                       # (name, dtype, shape[, value_range]) tuples
    outputs: list                      # (name, dtype, shape) tuples
    sample_inputs: Callable[[int, int], list]  # (count, seed) -> feeds {input name: np.ndarray}
    inputs_note: str                   # what sample_inputs makes, for the manifest
    output_kinds: dict                 # output name -> "scores" (class axis last) | "embedding" | "map" (probabilities)
    dim_ranges: dict = dataclasses.field(default_factory=dict)  # dynamic dim -> [min, max]
    torch_model: Optional[object] = None           # defines the model, or:
    onnx_source: Optional[pathlib.Path] = None     # an ONNX file a package carries
    nncf_model_type: str = "default"               # "transformer" for attention models
    int8_options: dict = dataclasses.field(default_factory=dict)  # more quantize_static arguments for the ONNX INT8
    int8_float_nodes: str = ""                     # regex of ONNX node names the ONNX INT8 leaves in float
    calibration_count: int = 16
    evaluation_count: int = 32
    gflops: Optional[float] = None
    extra: dict = dataclasses.field(default_factory=dict)


def manifest_output_kinds(c: Component) -> dict:
    """The manifest's output kinds (zoo_common.OUTPUT_KINDS) from the component's: scores with a
    class axis only are class scores, with steps before it per-step class scores; a map is other."""
    kinds = {}
    for name, _, shape in (o[:3] for o in c.outputs):
        kind = c.output_kinds.get(name)
        if kind == "scores":
            kinds[name] = "class_scores" if len(shape) == 2 else "sequence_class_scores"
        elif kind in ("embedding", "map"):
            kinds[name] = "embedding" if kind == "embedding" else "other"
    return kinds


def stem_for(stem: str, precision: str) -> str:
    return stem if precision == "fp32" else f"{stem}_{precision}"


def log(message: str) -> None:
    print(f"  {message}", flush=True)


# ---- Conversions -------------------------------------------------------------------------------

def onnx_fp16(fp32: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """Every float tensor in FP16 inside; inputs and outputs stay FP32 (Cast nodes at the edges),
    so one set of inputs feeds every precision. ONNX Runtime's own converter: onnxconverter-common's
    leaves BERT's attention-mask Cast typed inconsistently, which ONNX Runtime then refuses."""
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    onnx.save(convert_float_to_float16(onnx.load(str(fp32)), keep_io_types=True), str(out))
    return out


class _Feeds:
    """ONNX Runtime's calibration reader over a list of feeds."""

    def __init__(self, feeds: list) -> None:
        self._iter = iter(feeds)

    def get_next(self):
        return next(self._iter, None)


def onnx_int8(fp32: pathlib.Path, out: pathlib.Path, calibration: list, options=None, float_nodes: str = "") -> pathlib.Path:
    """ONNX Runtime static quantisation, QDQ format, INT8 weights (per channel) and activations,
    calibrated (min/max) on the component's calibration inputs; `options` adds or overrides
    quantize_static arguments, and nodes whose names match the regular expression `float_nodes`
    stay in float."""
    import re

    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    excluded = [n.name for n in onnx.load(str(fp32)).graph.node if re.search(float_nodes, n.name)] if float_nodes else []
    reader = type("CalibrationFeeds", (_Feeds, CalibrationDataReader), {})(calibration)
    quantize_static(str(fp32), str(out), reader, **{"quant_format": QuantFormat.QDQ, "per_channel": True,
                    "activation_type": QuantType.QInt8, "weight_type": QuantType.QInt8, "nodes_to_exclude": excluded,
                    **(options or {})})
    return out


def openvino_ir(fp32_onnx: pathlib.Path, out: pathlib.Path, compress_to_fp16: bool) -> pathlib.Path:
    import openvino as ov

    ov.save_model(ov.convert_model(str(fp32_onnx)), str(out), compress_to_fp16=compress_to_fp16)
    return out


def openvino_int8(fp32_xml: pathlib.Path, out: pathlib.Path, calibration: list, model_type: str,
                  ignored: tuple = ()) -> pathlib.Path:
    """NNCF post-training quantisation, run in its own process: NNCF imports torch when it can,
    and this NNCF needs a newer torch than Debian's, so that process hides torch from it.
    `ignored` names OpenVINO operations left in float (NNCF's ignored_scope)."""
    feeds = out.with_suffix(".calibration.npz")
    np.savez(feeds, **{f"{i}/{name}": value for i, feed in enumerate(calibration) for name, value in feed.items()})
    try:
        subprocess.run([sys.executable, str(HERE / "quantize_openvino_int8.py"), str(fp32_xml), str(out), str(feeds),
                        model_type, *ignored], check=True)
    finally:
        feeds.unlink(missing_ok=True)
    return out


# ---- Accuracy ----------------------------------------------------------------------------------

def run_onnx(path: pathlib.Path, feeds: list) -> list:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    return [session.run(None, {k: v for k, v in feed.items() if k in names}) for feed in feeds]


def run_openvino(path: pathlib.Path, feeds: list) -> tuple:
    """Outputs of the CPU plugin with its default settings, and the inference precision it chose."""
    import openvino as ov

    compiled = ov.Core().compile_model(str(path), "CPU")
    request = compiled.create_infer_request()
    outputs = []
    for feed in feeds:
        result = request.infer({k: v for k, v in feed.items() if k in {n for i in compiled.inputs for n in i.names}})
        outputs.append([np.array(result[o]) for o in compiled.outputs])
    return outputs, compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()


def agreement(reference: list, variant: list, kind: str) -> dict:
    """Max/mean abs error and cosine similarity over rows of the last axis; for class scores also
    top-1 agreement (same arg-max) and top-5 agreement (the reference's top class among the
    variant's five highest); for probability maps the share of positions thresholded alike."""
    # Rows: one per class-score or embedding vector; a whole map per row for probability maps.
    flat = (lambda a: a.reshape(a.shape[0], -1)) if kind == "map" else (lambda a: a.reshape(-1, a.shape[-1]))
    ref = np.concatenate([flat(r) for r in reference]).astype(np.float64)
    var = np.concatenate([flat(v) for v in variant]).astype(np.float64)
    diff = np.abs(ref - var)
    norms = np.linalg.norm(ref, axis=1) * np.linalg.norm(var, axis=1)
    cosine = np.sum(ref * var, axis=1) / np.where(norms > 0, norms, 1.0)
    figures = {"kind": kind, "rows": int(ref.shape[0]), "max_abs_error": float(diff.max()),
               "mean_abs_error": float(diff.mean()), "cosine_mean": float(cosine.mean()),
               "cosine_min": float(cosine.min())}
    if kind == "map":  # a probability map: the share of positions on the same side of the threshold
        figures["threshold"] = MAP_THRESHOLD
        figures["threshold_agreement"] = float(np.mean((ref > MAP_THRESHOLD) == (var > MAP_THRESHOLD)))
    if kind == "scores":
        top1 = ref.argmax(axis=1)
        figures["top1_agreement"] = float(np.mean(top1 == var.argmax(axis=1)))
        if ref.shape[1] >= 5:
            top5 = np.argsort(-var, axis=1)[:, :5]
            figures["top5_agreement"] = float(np.mean([t in row for t, row in zip(top1, top5)]))
    return figures


def score(component: Component, reference_runs: list, variant_runs: list) -> list:
    names = [o[0] for o in component.outputs]
    return [{"output": name, **agreement([run[i] for run in reference_runs], [run[i] for run in variant_runs],
                                         component.output_kinds.get(name, "embedding"))}
            for i, name in enumerate(names)]


# ---- Build -------------------------------------------------------------------------------------

def build_component(c: Component, out: pathlib.Path, formats: list, precisions: list) -> None:
    out.mkdir(parents=True, exist_ok=True)
    files = {p: {} for p in precisions}
    started = time.monotonic()

    fp32_onnx = out / f"{c.stem}.onnx"
    if c.torch_model is not None:
        log(f"{c.stem}: ONNX FP32 (torch {__import__('torch').__version__} exporter, opset {ONNX_OPSET})")
        example = tuple(__import__("torch").from_numpy(v) for v in c.sample_inputs(1, 0)[0].values())
        export_onnx(c.torch_model, example if len(example) > 1 else example[0], fp32_onnx, c.inputs, c.outputs)
    else:
        log(f"{c.stem}: ONNX FP32 carried by the package ({c.onnx_source.name})")
        shutil.copyfile(c.onnx_source, fp32_onnx)
    if "onnx" in formats and "fp32" in precisions:
        files["fp32"]["onnx"] = fp32_onnx
    if "torchscript" in formats and "fp32" in precisions:
        log(f"{c.stem}: TorchScript FP32 (torch.jit.trace)")
        example = tuple(__import__("torch").from_numpy(v) for v in c.sample_inputs(1, 0)[0].values())
        files["fp32"]["torchscript"] = export_torchscript(c.torch_model, example, out / f"{c.stem}.pt")

    calibration = c.sample_inputs(c.calibration_count, CALIBRATION_SEED) if "int8" in precisions else []
    evaluation = c.sample_inputs(c.evaluation_count, EVALUATION_SEED) if set(precisions) - {"fp32"} else []
    accuracy = {p: {} for p in precisions if p != "fp32"}

    if "onnx" in formats:
        if "fp16" in precisions:
            log(f"{c.stem}: ONNX FP16 (onnxruntime.transformers.float16, FP32 inputs/outputs)")
            files["fp16"]["onnx"] = onnx_fp16(fp32_onnx, out / f"{c.stem}_fp16.onnx")
        if "int8" in precisions:
            log(f"{c.stem}: ONNX INT8 (ONNX Runtime static QDQ, {len(calibration)} calibration inputs)")
            files["int8"]["onnx"] = onnx_int8(fp32_onnx, out / f"{c.stem}_int8.onnx", calibration, c.int8_options,
                                              c.int8_float_nodes)
        if accuracy:
            log(f"{c.stem}: ONNX accuracy on {len(evaluation)} inputs")
            reference = run_onnx(fp32_onnx, evaluation)
            runtime = f"onnxruntime {importlib.metadata.version('onnxruntime')}"
            for p in accuracy:
                accuracy[p]["onnx"] = {"runtime": runtime,
                                       "outputs": score(c, reference, run_onnx(files[p]["onnx"], evaluation))}

    if "openvino-ir" in formats:
        fp32_xml = out / f"{c.stem}.xml"
        log(f"{c.stem}: OpenVINO IR FP32 (openvino.convert_model)")
        openvino_ir(fp32_onnx, fp32_xml, compress_to_fp16=False)
        if "fp32" in precisions:
            files["fp32"]["openvino-ir"] = fp32_xml
        if "fp16" in precisions:
            log(f"{c.stem}: OpenVINO IR FP16 (weights compressed to FP16)")
            files["fp16"]["openvino-ir"] = openvino_ir(fp32_onnx, out / f"{c.stem}_fp16.xml", compress_to_fp16=True)
        if "int8" in precisions:
            log(f"{c.stem}: OpenVINO IR INT8 (NNCF, {len(calibration)} calibration inputs)")
            files["int8"]["openvino-ir"] = openvino_int8(fp32_xml, out / f"{c.stem}_int8.xml", calibration,
                                                         c.nncf_model_type)
        if accuracy:
            log(f"{c.stem}: OpenVINO accuracy on {len(evaluation)} inputs")
            reference, _ = run_openvino(fp32_xml, evaluation)
            for p in accuracy:
                variant, hint = run_openvino(files[p]["openvino-ir"], evaluation)
                accuracy[p]["openvino-ir"] = {
                    "runtime": f"openvino {importlib.metadata.version('openvino')} CPU (inference precision {hint})",
                    "outputs": score(c, reference, variant)}

    # The edge formats (FP32): each converted from the FP32 ONNX and checked against one ONNX
    # Runtime reference run on the evaluation inputs, recorded as <format>_conversion.
    conversions = {}
    edge = [fmt for fmt in EDGE_CONVERTERS if fmt in formats] if "fp32" in precisions else []
    if edge:
        feeds = evaluation or c.sample_inputs(c.evaluation_count, EVALUATION_SEED)
        reference = run_onnx(fp32_onnx, feeds)
    for fmt in edge:
        module, converter = EDGE_CONVERTERS[fmt]
        log(f"{c.stem}: {fmt} FP32 ({converter} from the FP32 ONNX), checked against ONNX Runtime")
        target = out / f"{c.stem}{SUFFIX[fmt]}"
        conversions[f"{fmt}_conversion"] = importlib.import_module(module).checked_conversion(
            fp32_onnx, target, c.inputs, c.outputs, feeds, reference, lambda ref, var: score(c, ref, var))
        files["fp32"][fmt] = target

    for p in precisions:
        if not files[p]:
            continue
        extra = {"family": c.stem, "precision": p, **c.extra}
        if p == "fp32":
            extra.update(conversions)
        if p != "fp32":
            extra["accuracy"] = {"reference": f"{c.stem} FP32 in the same format, run by the same runtime",
                                 "inputs": f"{len(evaluation)} {c.inputs_note} (seed {EVALUATION_SEED})",
                                 "by_format": accuracy[p]}
        if p == "int8":
            extra["calibration"] = f"{len(calibration)} {c.inputs_note} (seed {CALIBRATION_SEED})"
            if c.int8_options or c.int8_float_nodes:
                extra["onnx_int8_options"] = {**c.int8_options, "float_nodes": c.int8_float_nodes}
        write_manifest(out / f"{stem_for(c.stem, p)}.json", name=stem_for(c.stem, p), task=c.task, files=files[p],
                       inputs=c.inputs, outputs=c.outputs, weights=c.weights, gflops=c.gflops,
                       dim_ranges=c.dim_ranges, extra=extra, output_kinds=manifest_output_kinds(c))
    log(f"{c.stem}: done in {time.monotonic() - started:.1f} s")


def exporter_arguments(description: str):
    """The command line every zoo exporter takes (tools/zoo/zoo.py passes it)."""
    import argparse

    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder")
    parser.add_argument("--formats", nargs="+", default=["onnx", "torchscript", "openvino-ir"], choices=sorted(SUFFIX))
    parser.add_argument("--precisions", nargs="+", default=["fp32", "fp16", "int8"], choices=["fp32", "fp16", "int8"])
    parser.add_argument("--seed", type=int, default=0)
    return parser
