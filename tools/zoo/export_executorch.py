"""ExecuTorch programs (.pte) of a model the zoo already built as FP32 ONNX, from the same weights:
onnx2torch reads the ONNX file back as a torch module (or, with --torch-from, the zoo exporter's
own module that the ONNX file was exported from: onnx2torch turns EfficientNet's shape-computed
padding into ops torch.export cannot make batch-dynamic), torch.export captures it with a dynamic
batch axis (1 to --max-batch), and ExecuTorch lowers it to the XNNPACK delegate
(to_edge_transform_and_lower + XnnpackPartitioner). INT8: the XNNPACK quantizer (symmetric,
per-channel weights, static activations) through PyTorch 2 export quantization, calibrated on the
inputs the other formats' INT8 files were calibrated on.

Each program is checked with ExecuTorch's own Python runtime: FP32 against ONNX Runtime on the
evaluation inputs (the edge formats' bar, zoo_conversion.checked_record), INT8 against the FP32
program (the manifest's accuracy.by_format.executorch, as every INT8 format records it).

Runs in third_party/llm-venv (PyTorch 2.x, which ExecuTorch's exporter needs; Debian's is 1.13),
installed on demand by scripts/install_llm_tools. The staging folder's parent is the models folder
that holds <model>.onnx and its manifest.
"""
import argparse
import importlib
import importlib.metadata
import json
import pathlib
import time

import numpy as np
import onnx
import onnx2torch
import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

from zoo_common import file_entry
from zoo_conversion import checked_record
from zoo_images import photo_feeds
from zoo_variants import CALIBRATION_SEED, EVALUATION_SEED, agreement, run_onnx

CALIBRATION_COUNT, EVALUATION_COUNT = 16, 32  # as zoo_variants.Component's defaults
RANDOM_SEED_OFFSET = 100  # random feeds: seed 101 calibrates, 102 evaluates (never the tests' own seeds)


def log(message: str) -> None:
    print(message, flush=True)


def feeds_for(manifest: dict, kind: str, count: int, seed: int) -> list:
    """`count` single-sample feeds: opencv-doc photos (the image classifiers' own preprocessing,
    zoo_images) or seeded normal noise in the manifest's shape with batch 1."""
    if kind == "photos":
        return photo_feeds(count, seed, manifest["inputs"][0]["name"])
    random = np.random.default_rng(RANDOM_SEED_OFFSET + seed)
    return [{spec["name"]: random.standard_normal([1, *spec["shape"][1:]], dtype=np.float32) for spec in manifest["inputs"]}
            for _ in range(count)]


def torch_module(exporter: str, onnx_file: pathlib.Path, scratch: pathlib.Path):
    """The network as a torch module: the zoo exporter's own (its component(), the module the
    ONNX file was exported from) where one is named, else the ONNX file read back by onnx2torch.
    Either way the FP32 program is checked against ONNX Runtime on the ONNX file."""
    if exporter:
        return importlib.import_module(exporter).component(scratch).torch_model.eval()
    return onnx2torch.convert(onnx.load(str(onnx_file))).eval()


def export(module, example: tuple, max_batch: int):
    # The bound the program plans its memory for is the Dim's max up to 15 and 15 above that
    # (torch 2.15, ExecuTorch 1.5.1: maxima 16, 17, 32 and 64 all gave 15), so --max-batch stays
    # below and write_program checks the bound the program itself declares.
    batch = torch.export.Dim("batch", min=1, max=max_batch)
    return torch.export.export(module, example, dynamic_shapes=tuple({0: batch} for _ in example))


def write_program(exported, target: pathlib.Path, max_batch: int) -> pathlib.Path:
    program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch()
    target.write_bytes(program.buffer)
    method = Runtime.get().load_program(str(target)).load_method("forward")
    bounds = [method.metadata.input_tensor_meta(i).sizes()[0] for i in range(method.metadata.num_inputs())]
    if any(b != max_batch for b in bounds):
        raise SystemExit(f"{target.name}: the program takes batches up to {bounds}, not {max_batch}")
    return target


def quantized(module, example: tuple, calibration: list, names: list, max_batch: int):
    """`module` with the XNNPACK quantizer's INT8 (per-channel symmetric weights, static activations)."""
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(export(module, example, max_batch).module(), quantizer)
    for feed in calibration:
        prepared(*(torch.from_numpy(feed[n]) for n in names))
    return convert_pt2e(prepared)


def run_program(path: pathlib.Path, feeds: list, names: list) -> list:
    method = Runtime.get().load_program(str(path)).load_method("forward")
    return [[o.numpy() for o in method.execute([torch.from_numpy(feed[n]) for n in names])] for feed in feeds]


# The manifest's output kinds (zoo_common.OUTPUT_KINDS) as zoo_variants.agreement scores them.
AGREEMENT_KIND = {"class_scores": "scores", "sequence_class_scores": "scores", "embedding": "embedding", "other": "map"}


def scores(manifest: dict, reference: list, variant: list) -> list:
    return [{"output": spec["name"], **agreement([r[i] for r in reference], [v[i] for v in variant],
                                                 AGREEMENT_KIND.get(spec.get("kind"), "embedding"))}
            for i, spec in enumerate(manifest["outputs"])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="the zoo's staging folder, inside the models folder")
    parser.add_argument("--model", required=True, help="the stem of the FP32 ONNX file in the models folder")
    parser.add_argument("--inputs", choices=["photos", "random"], required=True, help="calibration and evaluation inputs")
    parser.add_argument("--torch-from", default="", help="a zoo exporter module whose component() gives the torch module "
                        "(for networks whose ONNX form onnx2torch cannot export with a dynamic batch)")
    parser.add_argument("--max-batch", type=int, default=8, help="the largest batch the programs take (memory is planned for it)")
    parser.add_argument("--formats", nargs="+", default=["executorch"], choices=["executorch"])
    parser.add_argument("--precisions", nargs="+", default=["fp32", "int8"], choices=["fp32", "int8"])
    args = parser.parse_args()
    started = time.monotonic()
    folder = args.out.parent
    onnx_file = folder / f"{args.model}.onnx"
    if not onnx_file.exists():
        raise SystemExit(f"{onnx_file} is missing: build its zoo entry (ONNX FP32) first")
    fp32_manifest = json.loads((folder / f"{args.model}.json").read_text())
    names = [spec["name"] for spec in fp32_manifest["inputs"]]
    module = torch_module(args.torch_from, onnx_file, args.out)
    evaluation = feeds_for(fp32_manifest, args.inputs, EVALUATION_COUNT, EVALUATION_SEED)
    # Batch 2: an example of batch 1 would have torch.export specialise the batch axis to 1.
    example = tuple(torch.from_numpy(np.concatenate([evaluation[0][n], evaluation[1][n]])) for n in names)
    versions = (f"executorch {importlib.metadata.version('executorch')}, torch {torch.__version__}, "
                f"onnx2torch {importlib.metadata.version('onnx2torch')}")
    runtime = f"ExecuTorch {importlib.metadata.version('executorch')} Python runtime (XNNPACK delegate)"

    log(f"{args.model}: ExecuTorch FP32 ({args.torch_from or 'onnx2torch'}, torch.export with batch 1..{args.max_batch}, XNNPACK), "
        f"checked against ONNX Runtime on {len(evaluation)} {args.inputs} inputs")
    fp32_pte = write_program(export(module, example, args.max_batch), args.out / f"{args.model}.pte", args.max_batch)
    fp32_runs = run_program(fp32_pte, evaluation, names)
    reference = run_onnx(onnx_file, evaluation)
    source = f"{args.torch_from}.component()'s torch module" if args.torch_from else "onnx2torch on the FP32 ONNX"
    exporter = f"{versions}; {source}, torch.export (batch 1..{args.max_batch}) + to_edge_transform_and_lower(XnnpackPartitioner)"
    conversion = checked_record(fp32_pte, "ExecuTorch", scores(fp32_manifest, reference, fp32_runs), exporter, runtime,
                                len(evaluation))
    documents = {"fp32": (fp32_pte, {"executorch_conversion": conversion})}

    if "int8" in args.precisions:
        calibration = feeds_for(fp32_manifest, args.inputs, CALIBRATION_COUNT, CALIBRATION_SEED)
        log(f"{args.model}: ExecuTorch INT8 (XNNPACK quantizer, per-channel symmetric, {len(calibration)} calibration inputs)")
        int8_pte = write_program(export(quantized(module, example, calibration, names, args.max_batch), example, args.max_batch),
                                 args.out / f"{args.model}_int8.pte", args.max_batch)
        accuracy = {"runtime": runtime, "outputs": scores(fp32_manifest, fp32_runs, run_program(int8_pte, evaluation, names))}
        documents["int8"] = (int8_pte, {"accuracy": {"by_format": {"executorch": accuracy}}, "executorch_quantization": {
            "exporter": f"{versions}; XNNPACKQuantizer(get_symmetric_quantization_config(is_per_channel=True)), prepare_pt2e, "
                        "convert_pt2e, then as FP32",
            "calibration": f"{len(calibration)} {args.inputs} inputs (seed {CALIBRATION_SEED})"}})

    for precision in [p for p in args.precisions if p in documents]:
        pte, fields = documents[precision]
        name = args.model if precision == "fp32" else f"{args.model}_{precision}"
        # The precision's own manifest where the zoo wrote one (the ONNX INT8's), else the FP32's
        # description; zoo.py merges this file list and accuracy into it.
        existing = folder / f"{name}.json"
        manifest = json.loads(existing.read_text()) if existing.exists() else {**fp32_manifest, "name": name, "precision": precision}
        accuracy = {**manifest.get("accuracy", {}), **fields.pop("accuracy", {})}
        manifest.update(files={"executorch": file_entry(pte)}, **fields)
        if precision != "fp32":
            accuracy.setdefault("reference", f"{args.model} FP32 in the same format, run by the same runtime")
            accuracy.setdefault("inputs", f"{len(evaluation)} {args.inputs} inputs (seed {EVALUATION_SEED})")
            manifest["accuracy"] = accuracy
        (args.out / f"{name}.json").write_text(json.dumps(manifest, indent=2) + "\n")
    log(f"{args.model}: ExecuTorch done in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
