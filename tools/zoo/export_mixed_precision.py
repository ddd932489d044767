"""Mixed precision: INT8 files that keep chosen layers in FP32, built from a model the zoo already
holds in the same models folder (efficientnet-lite0, or minilm-l6-topics), so that a study can set
accuracy against labels beside latency for each choice.

--model efficientnet-lite0 (needs efficientnet_lite0.onnx):
  1. Per-layer sensitivity: for each Conv/Gemm/MatMul node, an INT8 model that quantises that node
     alone (ONNX Runtime static QDQ, the settings of zoo_variants.onnx_int8, one min/max calibration
     on the zoo's 16 calibration photos, reused for every model); its logits against FP32's on the
     zoo's 32 check photos: the mean of 1 - cosine (the ranking key) and top-1 agreement.
  2. efficientnet_lite0_int8_keep<k>.onnx: the usual full INT8 with the k most sensitive nodes left
     in FP32 (quantize_static's nodes_to_exclude), and .xml: NNCF INT8 with the same layers in
     ignored_scope (OpenVINO keeps the ONNX node name, plus "/WithoutBiases" where it splits off the
     bias: each ONNX node maps to exactly one OpenVINO Convolution/MatMul, or the build stops).
  3. efficientnet_lite0_sensitivity.md / .json: the ranking, and per k the agreement with FP32 and
     top-1 against the labelled photos (models/inputs/imagenet_labelled.npy's 7), per runtime.
--model minilm-topics (needs minilm_l6_topics.onnx, the Reuters crude-vs-acq classifier):
  minilm_l6_topics_int8_all.{onnx,xml}: every encoder op INT8 (ORT static QDQ as above; NNCF default
  mode); minilm_l6_topics_int8_attnfp32.{onnx,xml}: the same with each layer's attention core
  (Q.K^T, scaling, mask, Softmax, .V: the nodes under attention/self/ other than the query, key and
  value projections) left in float. Both calibrate on 16 training articles; the classifier head stays
  in float in both, so the difference is the attention's precision alone. Each manifest records the
  top-1 against the 35 labelled evaluation articles, the margin and the agreement with FP32. The
  labelled set itself (inputs/reuters_topics/, as reuters_topics_inputs.py writes it) comes along,
  so a study of these files finds its inputs after this one build.
"""
import importlib.metadata
import json
import os
import pathlib
import re
import tempfile

import numpy as np

from reuters_topics_inputs import write_set
from zoo_common import file_entry
from zoo_variants import (CALIBRATION_SEED, EVALUATION_SEED, agreement, exporter_arguments, log, onnx_int8,
                          openvino_int8, openvino_ir, run_onnx, run_openvino)

QUANTISABLE = ("Conv", "Gemm", "MatMul")              # the ONNX ops that carry weights
OPENVINO_QUANTISABLE = ("Convolution", "GroupConvolution", "MatMul")
KEEP = (1, 2, 4, 8, 16)
ATTENTION = re.compile(r"/attention/self/(?!(query|key|value)/)")  # the attention core, not its projections
HEAD = "topics/"                                      # export_topics.PREFIX: the appended classifier head


# ---- Shared helpers ------------------------------------------------------------------------------

def runtimes() -> dict:
    return {"onnx": f"onnxruntime {importlib.metadata.version('onnxruntime')}",
            "openvino-ir": f"openvino {importlib.metadata.version('openvino')} CPU"}


def quantise(source: pathlib.Path, out: pathlib.Path, calibration: list, cache: pathlib.Path, **options) -> pathlib.Path:
    """zoo_variants.onnx_int8 with ONNX Runtime's calibration cache: min/max ranges are computed once
    per source model, so per-layer models differ only in which nodes they quantise."""
    return onnx_int8(source, out, calibration, {"calibration_cache_path": str(cache), **options})


def logits(runs: list) -> np.ndarray:
    return np.concatenate([run[0] for run in runs])


def label_top1(scores: np.ndarray, labels: list) -> dict:
    correct = int((scores.argmax(axis=1) == np.array(labels)).sum())
    return {"top1": correct / len(labels), "correct": correct, "samples": len(labels)}


def openvino_names(xml: pathlib.Path, onnx_names: list, types=OPENVINO_QUANTISABLE) -> list:
    """The OpenVINO operation each ONNX node became: same name, or that name + "/..." (the frontend
    names a Conv with bias "<name>/WithoutBiases" and adds the bias separately)."""
    import openvino as ov

    ops = [o.get_friendly_name() for o in ov.Core().read_model(str(xml)).get_ordered_ops() if o.get_type_name() in types]
    mapped = []
    for name in onnx_names:
        matches = [o for o in ops if o == name or o.startswith(name + "/")]
        if len(matches) != 1:
            raise SystemExit(f"{xml.name}: ONNX node {name} maps to {len(matches)} OpenVINO operations {matches}, not one")
        mapped.append(matches[0])
    return mapped


def source_model(folder: pathlib.Path, stem: str, entry: str) -> tuple:
    """The FP32 ONNX file another zoo entry built into the models folder, and its manifest."""
    path = folder / f"{stem}.onnx"
    if not path.exists():
        raise SystemExit(f"{path} is missing: build {entry} first")
    return path, json.loads((folder / f"{stem}.json").read_text())


def derived_manifest(source: dict, name: str, files: dict, fields: dict) -> dict:
    """The source model's manifest (inputs, outputs, weights, preprocessing) for a derived INT8 file."""
    manifest = {k: v for k, v in source.items() if k not in ("accuracy", "calibration", "label_accuracy")}
    manifest.update(name=name, precision="int8", family=source["name"],
                    files={fmt: file_entry(path) for fmt, path in files.items()}, **fields)
    return manifest


def write_json(path: pathlib.Path, document: dict) -> None:
    path.write_text(json.dumps(document, indent=2) + "\n")


def documents(out: pathlib.Path, *paths: pathlib.Path) -> list:
    """Files beside the models that zoo.py installs with them (checked against these checksums), by
    their path under `out`, the staging folder."""
    return [{"path": p.relative_to(out).as_posix(), "sha256": file_entry(p)["sha256"]} for p in paths]


# ---- EfficientNet-Lite0: per-layer sensitivity, then keep the k most sensitive in FP32 -----------

def sensitivity(source: pathlib.Path, work: pathlib.Path, calibration: list, checks: list, cache: pathlib.Path) -> list:
    """Each quantisable node quantised alone, ranked by its logits' mean 1 - cosine against FP32."""
    import onnx

    reference = run_onnx(source, checks)
    nodes = [(n.name, n.op_type) for n in onnx.load(str(source)).graph.node if n.op_type in QUANTISABLE]
    rows = []
    for i, (name, op) in enumerate(nodes):
        single = quantise(source, work / "single.onnx", calibration, cache, nodes_to_quantize=[name])
        figures = agreement([r[0] for r in reference], [r[0] for r in run_onnx(single, checks)], "scores")
        rows.append({"node": name, "op": op, "one_minus_cosine": 1.0 - figures["cosine_mean"],
                     "top1_agreement": figures["top1_agreement"], "max_abs_error": figures["max_abs_error"]})
        log(f"sensitivity {i + 1}/{len(nodes)} {name}: 1-cos {rows[-1]['one_minus_cosine']:.2e}, "
            f"top-1 agreement {figures['top1_agreement']:.3f}")
    rows.sort(key=lambda r: -r["one_minus_cosine"])
    return [{"rank": i + 1, **r} for i, r in enumerate(rows)]


def run_format(fmt: str, path: pathlib.Path, feeds: list) -> list:
    """Outputs of one file under its format's runtime (CPU, default settings)."""
    return run_onnx(path, feeds) if fmt == "onnx" else run_openvino(path, feeds)[0]


def variant_figures(fmt: str, path: pathlib.Path, reference: list, checks: list, labelled: list, labels: list) -> dict:
    """Agreement with FP32 on the check photos, and top-1 against the labelled photos."""
    figures = agreement([r[0] for r in reference], [r[0] for r in run_format(fmt, path, checks)], "scores")
    return {"one_minus_cosine": 1.0 - figures["cosine_mean"], "top1_agreement": figures["top1_agreement"],
            "max_abs_error": figures["max_abs_error"], "labels": label_top1(logits(run_format(fmt, path, labelled)), labels)}


def keep_k(k: int, ranking: list, source: pathlib.Path, fp32_xml, target: pathlib.Path, calibration: list,
           cache: pathlib.Path) -> tuple:
    """The INT8 files with the k most sensitive nodes in float: ONNX, and OpenVINO IR when fp32_xml is
    given; returns ({format: path}, the OpenVINO names ignored)."""
    kept = [r["node"] for r in ranking[:k]]
    log(f"{target.stem}: ONNX INT8 with {k} node(s) in FP32")
    files = {"onnx": quantise(source, target, calibration, cache, nodes_to_exclude=kept)}
    ignored = openvino_names(fp32_xml, kept) if fp32_xml else []
    if fp32_xml:
        log(f"{target.stem}: OpenVINO INT8 (NNCF) with {k} operation(s) in ignored_scope")
        files["openvino-ir"] = openvino_int8(fp32_xml, target.with_suffix(".xml"), calibration, "default", tuple(ignored))
    return files, ignored


def sensitivity_markdown(stem: str, ranking: list, keeps: list, notes: dict) -> str:
    lines = [f"# {stem}: per-layer INT8 sensitivity and INT8 with the k most sensitive layers in FP32", "",
             *(f"- {k}: {v}" for k, v in notes.items()), "",
             "| rank | node | op | 1 - cosine | top-1 agreement | max abs error |", "| --: | --- | --- | --: | --: | --: |"]
    lines += [f"| {r['rank']} | `{r['node']}` | {r['op']} | {r['one_minus_cosine']:.2e} | {r['top1_agreement']:.3f} | "
              f"{r['max_abs_error']:.3f} |" for r in ranking]
    lines += ["", "| k kept in FP32 | runtime | 1 - cosine | top-1 agreement | top-1 vs labels |", "| --: | --- | --: | --: | --: |"]
    for row in keeps:
        for fmt, f in row["by_format"].items():
            lines.append(f"| {row['k']} | {fmt} | {f['one_minus_cosine']:.2e} | {f['top1_agreement']:.3f} | "
                         f"{f['labels']['correct']}/{f['labels']['samples']} |")
    return "\n".join(lines) + "\n"


def efficientnet_notes(source: pathlib.Path, manifest: dict, labels: list, formats: list) -> dict:
    return {"source": f"{source.name} ({manifest['weights']})",
            "quantisation": "ONNX Runtime quantize_static, QDQ, per-channel INT8 weights, INT8 activations, min/max "
                            "calibration on 16 unlabelled opencv-doc photos (seed 1); OpenVINO: NNCF default preset, same photos",
            "sensitivity": "each Conv/Gemm node quantised alone (nodes_to_quantize), logits against FP32's on 32 "
                           "unlabelled opencv-doc photos (seed 2): mean of 1 - cosine (ranking key), top-1 agreement",
            "labels": f"top-1 against the {len(labels)} labelled photos (models/inputs/imagenet_labelled.npy)",
            "runtimes": ", ".join(runtimes()[f] for f in formats)}


def efficientnet(args, folder: pathlib.Path) -> None:
    from zoo_images import labelled_images, photo_feeds

    stem = "efficientnet_lite0"
    source, manifest = source_model(folder, stem, "efficientnet-lite0")
    calibration, checks = photo_feeds(16, CALIBRATION_SEED), photo_feeds(32, EVALUATION_SEED)
    images, labels, _ = labelled_images()
    labelled = [{"input": images[i:i + 1]} for i in range(len(images))]
    formats = [f for f in ("onnx", "openvino-ir") if f in args.formats or f == "onnx"]  # ONNX: the source of both
    with tempfile.TemporaryDirectory(dir=args.out) as work:
        work = pathlib.Path(work)
        cache = work / "calibration.json"
        log(f"{stem}: per-layer sensitivity (ONNX Runtime, {len(checks)} check photos)")
        ranking = sensitivity(source, work, calibration, checks, cache)
        fp32 = {"onnx": source}
        if "openvino-ir" in formats:
            fp32["openvino-ir"] = openvino_ir(source, work / f"{stem}.xml", compress_to_fp16=False)
        reference = {fmt: run_format(fmt, path, checks) for fmt, path in fp32.items()}
        score = lambda fmt, path: variant_figures(fmt, path, reference[fmt], checks, labelled, labels)  # noqa: E731
        keeps = [{"k": "FP32", "kept": [], "by_format": {fmt: score(fmt, path) for fmt, path in fp32.items()}}]
        outputs = {}
        for k in (0, *args.keep):
            name = f"{stem}_int8_keep{k}"
            target = (work if k == 0 else args.out) / f"{name}.onnx"  # k = 0 is the zoo's own _int8 file: scored, not kept
            files, ignored = keep_k(k, ranking, source, fp32.get("openvino-ir"), target, calibration, cache)
            keeps.append({"k": k, "kept": [r["node"] for r in ranking[:k]], "openvino_ignored_scope": ignored,
                          "by_format": {fmt: score(fmt, path) for fmt, path in files.items()}})
            if k:
                outputs[name] = (files, keeps[-1])
        notes = efficientnet_notes(source, manifest, labels, formats)
        md, js = args.out / f"{stem}_sensitivity.md", args.out / f"{stem}_sensitivity.json"
        md.write_text(sensitivity_markdown(stem, ranking, keeps, notes))
        write_json(js, {"model": stem, **notes, "ranking": ranking, "keep": keeps})
        for name, (files, row) in outputs.items():
            write_json(args.out / f"{name}.json", derived_manifest(manifest, name, files, {
                "calibration": "16 Debian opencv-doc photos outside the labelled set (seed 1)",
                "mixed_precision": {**row, **notes, "sensitivity": ranking}, "documents": documents(args.out, md, js)}))
    log(f"{stem}: ranking in {md.name}; top 5: " + ", ".join(r["node"] for r in ranking[:5]))


# ---- MiniLM topic classifier: attention kept in FP32 ----------------------------------------------

def topic_figures(scores: np.ndarray, truth: np.ndarray, fp32: np.ndarray) -> dict:
    """Top-1 against labels, the margin (labelled topic's logit minus the other's), agreement with FP32."""
    rows = np.arange(len(truth))
    others = np.where(np.arange(scores.shape[1]) == truth[:, None], -np.inf, scores)
    margin = scores[rows, truth] - others.max(axis=1)
    return {"labels": label_top1(scores, list(truth)), "margin_mean": float(margin.mean()), "margin_least": float(margin.min()),
            "agrees_with_fp32": float((scores.argmax(1) == fp32.argmax(1)).mean()),
            "logit_shift_mean_abs": float(np.abs(scores - fp32).mean())}


def opset17(source: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """The model at opset 17: the jar's MiniLM graph is opset 11, whose DequantizeLinear has no axis,
    so per-channel QDQ (the zoo's INT8 setting) needs opset 13 or later."""
    import onnx
    from onnx import version_converter

    model = version_converter.convert_version(onnx.load(str(source)), 17)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    return out


def topic_sets(names: list) -> tuple:
    """(16 calibration feeds: 8 training articles of each topic, never evaluated; the 35 evaluation
    articles as one feed; their labels)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # NNCF's child process forks after tokenizing
    from zoo_text import topic_split

    _, split = topic_split()
    train, evaluation = split["train"], split["eval"]
    picks = [i for k in (0, 1) for i in np.flatnonzero(np.array(train["labels"]) == k)[:8]]
    calibration = [{n: train["feeds"][n][i:i + 1] for n in names} for i in picks]
    return calibration, [{n: evaluation["feeds"][n] for n in names}], np.array(evaluation["labels"])


def openvino_float_ops(xml: pathlib.Path, attention: bool) -> list:
    """The OpenVINO operations of the head (and of the attention) by the same names as in ONNX.
    convert_model fuses each attention core into one ScaledDotProductAttention (named after the ONNX
    .V MatMul), whose inputs NNCF quantises; Softmax is listed for a graph where it stays apart."""
    import openvino as ov

    kinds = ("MatMul", "Softmax", "ScaledDotProductAttention")
    ops = [o.get_friendly_name() for o in ov.Core().read_model(str(xml)).get_ordered_ops() if o.get_type_name() in kinds]
    return [o for o in ops if o.startswith(HEAD) or (attention and ATTENTION.search(o))]


def topic_variant(name: str, source: pathlib.Path, excluded: list, fp32_xml, calibration: list, out: pathlib.Path) -> tuple:
    """One INT8 classifier: ONNX with `excluded` nodes in float, and OpenVINO IR (when fp32_xml is given)
    with the same layers in ignored_scope; returns ({format: path}, the OpenVINO names ignored)."""
    log(f"{name}: ONNX INT8 with {len(excluded)} node(s) in float")
    cache = source.parent / "calibration.json"  # one calibration, shared by both variants
    files = {"onnx": quantise(source, out / f"{name}.onnx", calibration, cache, nodes_to_exclude=excluded)}
    ignored = openvino_float_ops(fp32_xml, any(ATTENTION.search(n) for n in excluded)) if fp32_xml else []
    if fp32_xml:
        log(f"{name}: OpenVINO INT8 (NNCF) with {len(ignored)} operation(s) in ignored_scope")
        files["openvino-ir"] = openvino_int8(fp32_xml, out / f"{name}.xml", calibration, "default", tuple(ignored))
    return files, ignored


def topics(args, folder: pathlib.Path) -> None:
    import onnx

    stem = "minilm_l6_topics"
    original, manifest = source_model(folder, stem, "minilm-l6-topics")
    calibration, batch, truth = topic_sets([i["name"] for i in manifest["inputs"]])
    nodes = [n.name for n in onnx.load(str(original)).graph.node]
    head = [n for n in nodes if n.startswith(HEAD)]
    variants = {"int8_all": head, "int8_attnfp32": head + [n for n in nodes if ATTENTION.search(n)]}
    with tempfile.TemporaryDirectory(dir=args.out) as work:
        work = pathlib.Path(work)
        source = opset17(original, work / f"{stem}.opset17.onnx")  # calibration.json lands beside it
        fp32 = {"onnx": logits(run_onnx(original, batch))}
        conversion = float(np.abs(logits(run_onnx(source, batch)) - fp32["onnx"]).max())
        fp32_xml = openvino_ir(original, work / f"{stem}.xml", compress_to_fp16=False) if "openvino-ir" in args.formats else None
        if fp32_xml:
            fp32["openvino-ir"] = logits(run_format("openvino-ir", fp32_xml, batch))
        # the labelled set the study feeds (as reuters_topics_inputs.py writes it), installed with the models
        labelled = write_set(args.out / "inputs")
        labelled_files = documents(args.out, *sorted(labelled.iterdir()))
        for suffix, excluded in variants.items():
            name = f"{stem}_{suffix}"
            files, ignored = topic_variant(name, source, excluded, fp32_xml, calibration, args.out)
            figures = {fmt: topic_figures(logits(run_format(fmt, path, batch)), truth, fp32[fmt]) for fmt, path in files.items()}
            for fmt, f in figures.items():
                log(f"{name} {fmt}: top-1 {f['labels']['correct']}/{f['labels']['samples']}, margin mean "
                    f"{f['margin_mean']:.4f} least {f['margin_least']:.4f}, agrees with FP32 {f['agrees_with_fp32']:.3f}")
            write_json(args.out / f"{name}.json", derived_manifest(manifest, name, files, {
                "calibration": "16 Reuters training articles (8 crude, 8 acq; the half the head was fitted on)",
                "mixed_precision": {
                    "kept_float": "the classifier head" + (" and each layer's attention core (Q.K^T, scale, mask, Softmax, .V)"
                                                           if suffix == "int8_attnfp32" else ""),
                    "onnx_nodes_to_exclude": excluded, "openvino_ignored_scope": ignored,
                    "quantisation": "ONNX Runtime quantize_static, QDQ, per-channel INT8 weights, INT8 activations, min/max; "
                                    "OpenVINO: NNCF default preset (not transformer mode), same articles",
                    "evaluation": f"the {len(truth)} labelled evaluation articles as one batch; FP32 = {original.name} in the same runtime",
                    "opset": f"quantised from {original.name} converted from opset 11 to 17 (onnx.version_converter; "
                             f"logits moved by at most {conversion:.2e})",
                    "runtimes": {f: runtimes()[f] for f in figures}, "figures": figures,
                    "fp32_figures": {f: topic_figures(fp32[f], truth, fp32[f]) for f in figures}},
                "documents": labelled_files}))


def main() -> None:
    parser = exporter_arguments(__doc__)
    parser.add_argument("--model", choices=["efficientnet-lite0", "minilm-topics"], required=True)
    parser.add_argument("--models", type=pathlib.Path, help="folder of the source model (default: --out's parent, the "
                                                          "models folder the zoo stages in)")
    parser.add_argument("--keep", type=int, nargs="+", default=list(KEEP), help="k values (EfficientNet)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    folder = args.models or args.out.resolve().parent
    (efficientnet if args.model == "efficientnet-lite0" else topics)(args, folder)


if __name__ == "__main__":
    main()
