"""Write Llama-architecture GGUF models with seeded random weights for llama.cpp.

The models are untrained (their text is gibberish) but structurally real: the same tensors, shapes,
metadata and SentencePiece-style 'llama' tokenizer that a converted Llama checkpoint carries, so
llama.cpp loads, tokenizes, runs and quantises them like any other Llama model.

- --size tiny:  2 layers, 64 hidden, 4 heads, 128 FFN, 512 tokens, context 256 (~0.15M params, F32)
                for tests; seconds to write and to run.
- --size small: 8 layers, 512 hidden, 8 heads, 1536 FFN, 32000 tokens, context 2048 (~60M params,
                F16, ~120 MB) for benchmarks.
- --size medium: 32 layers, 1024 hidden, 16 heads, 2816 FFN, 32000 tokens, context 2048 (~0.48B
                params, F16, ~0.95 GB) for benchmarks at the seeds' 0.5-1B scale; built on demand only.

Each model gets a manifest <name>.json beside it (task "text-generation", files {"gguf": ...}, the
architecture numbers). --quantize fp16 q8_0 q4_0 also writes <name>_fp16.gguf etc. with llama.cpp's
own llama-quantize (built by scripts/setup into third_party/llama.cpp/install), and records in each
copy's manifest what the quantisation cost: llama-perplexity's KL divergence from the base file's
next-token distributions and how often both pick the same top token, over the exporter's corpus.
"""
import argparse
import collections
import pathlib
import re
import subprocess
import tempfile

import gguf
import numpy as np

from zoo_common import write_gguf_manifest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LLAMA_TOOLS = ROOT / "third_party" / "llama.cpp" / "install" / "bin"
DEFAULT_QUANTIZE_TOOL = LLAMA_TOOLS / "llama-quantize"
PERPLEXITY_TOOL = LLAMA_TOOLS / "llama-perplexity"
KLD_CONTEXT = 128      # tokens per chunk scored by llama-perplexity
KLD_CORPUS_REPEATS = 8  # the corpus repeated to give it enough chunks (32 with the tiny model's vocabulary)

# Architecture of each size. n_ff follows Llama's rule for the larger model (8/3 x hidden, rounded up
# to a multiple of 256); the tiny one keeps 2 x hidden so that it stays a few hundred kB.
SIZES = {
    "tiny": dict(n_layer=2, n_embd=64, n_head=4, n_head_kv=4, n_ff=128, n_vocab=512, n_ctx=256, dtype="f32"),
    "small": dict(n_layer=8, n_embd=512, n_head=8, n_head_kv=8, n_ff=1536, n_vocab=32000, n_ctx=2048, dtype="f16"),
    "medium": dict(n_layer=32, n_embd=1024, n_head=16, n_head_kv=16, n_ff=2816, n_vocab=32000, n_ctx=2048, dtype="f16"),
}
ROPE_FREQ_BASE = 10000.0
RMS_NORM_EPS = 1e-5
# The zoo's precision names and llama-quantize's type names for them.
QUANT_TYPES = {"fp16": "F16", "q8_0": "Q8_0", "q4_0": "Q4_0"}

# SentencePiece marks a word start (a space) with U+2581, which llama.cpp's SPM tokenizer expects.
SPACE = "\u2581"
SPECIAL_TOKENS = [("<unk>", gguf.TokenType.UNKNOWN), ("<s>", gguf.TokenType.CONTROL), ("</s>", gguf.TokenType.CONTROL)]
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2

# Text the tokenizer's merges are learned from: plain English about what the models are for.
# (No '<' or '>', so no learned piece can collide with the special and byte tokens.)
CORPUS = """
The quick brown fox jumps over the lazy dog. This model is a small language model with random
weights. It is used to measure how fast an inference framework runs a transformer: the time to the
first token, the number of tokens per second, the memory that the weights and the key value cache
take, and how these change with the number of threads, the batch size and the length of the prompt.
A benchmark should be fair: every framework runs the same model with the same settings on the same
machine, and the results are written down together with the versions of everything that was used.
Once upon a time there was a little robot who wanted to learn how to write stories. Every morning
the robot read a book, and every evening it wrote a new story about the things it had seen during
the day. The stories were not very good at first, but the robot kept on writing, and after a while
people started to read them. What is the capital of France? Paris is the capital of France. How
many days are there in a week? There are seven days in a week. Numbers like 1, 2, 3, 10, 42, 100
and 2024 appear in text too, as do questions, answers, lists and code such as print("hello world")
or for i in range(10): total += i.
"""


# ---- Tokenizer ---------------------------------------------------------------------------------

def learn_merges(corpus: str, count: int) -> list[str]:
    """Byte-pair merges over the corpus's words (each with its SentencePiece word-start mark), most
    frequent pair first and ties broken alphabetically, so the result is deterministic."""
    words = collections.Counter(SPACE + w for w in corpus.split())
    segmented = {word: list(word) for word in words}
    merges: list[str] = []
    while len(merges) < count:
        pairs: collections.Counter = collections.Counter()
        for word, freq in words.items():
            parts = segmented[word]
            for a, b in zip(parts, parts[1:]):
                pairs[(a, b)] += freq
        if not pairs:
            break  # every word is a single piece
        (a, b), _ = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        merges.append(a + b)
        for word in words:
            parts, merged = segmented[word], []
            i = 0
            while i < len(parts):
                if i + 1 < len(parts) and parts[i] == a and parts[i + 1] == b:
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            segmented[word] = merged
    return merges


def build_vocab(n_vocab: int, rng: np.random.Generator) -> tuple[list[str], list[float], list[int]]:
    """A SentencePiece-style 'llama' vocabulary of exactly n_vocab tokens, laid out like Llama's:
    <unk> <s> </s>, the 256 byte-fallback tokens <0x00>..<0xFF>, merged pieces by rank (score -rank,
    which is the merge priority of llama.cpp's SPM tokenizer), then the single characters.

    Learned merges come from CORPUS; a larger vocabulary is filled with word-like concatenations of
    two pieces already in it, which stay reachable merges, so every token can come out of the tokenizer."""
    specials = [t for t, _ in SPECIAL_TOKENS] + [f"<0x{b:02X}>" for b in range(256)]
    chars = [SPACE] + [chr(c) for c in range(0x21, 0x7F)]  # printable ASCII; others use byte fallback
    n_pieces = n_vocab - len(specials) - len(chars)
    if n_pieces < 0:
        raise ValueError(f"a vocabulary needs at least {len(specials) + len(chars)} tokens")
    pieces = learn_merges(CORPUS, n_pieces)
    known = set(specials) | set(pieces) | set(chars)
    # Fillers: an alphabetic piece (it may start a word) + a short lowercase piece or letter.
    lefts = [p for p in pieces if p.removeprefix(SPACE).isalpha()]
    rights = [p for p in pieces if p.isalpha() and p.islower() and len(p) <= 4] + [c for c in chars if c.islower()]
    while len(pieces) < n_pieces:
        # Draw candidates in batches (one generator call per pair would dominate the run time).
        for u, v in rng.random((4096, 2)):
            piece = lefts[int(u * len(lefts))] + rights[int(v * len(rights))]
            if len(piece) <= 12 and piece not in known and len(pieces) < n_pieces:
                pieces.append(piece)
                lefts.append(piece)
                known.add(piece)

    tokens = specials + pieces + chars
    types = [int(t) for _, t in SPECIAL_TOKENS] + [int(gguf.TokenType.BYTE)] * 256 \
        + [int(gguf.TokenType.NORMAL)] * (len(pieces) + len(chars))
    scores = [0.0] * (len(SPECIAL_TOKENS) + 256) + [-float(i) for i in range(len(pieces) + len(chars))]
    assert len(tokens) == n_vocab and len(set(tokens)) == n_vocab, "vocabulary must be n_vocab unique tokens"
    return tokens, scores, types


# ---- Weights -----------------------------------------------------------------------------------

def random_weights(arch: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Llama's tensors in GGUF naming, shaped [out, in] as NumPy sees them (the writer reverses the
    order into GGML's). Matrices ~ normal(0, 0.02), as in Llama's initialisation; RMS-norm weights
    ~ 1 + normal(0, 0.02), so no two tensors are identical and none is a constant."""
    d, ff, vocab = arch["n_embd"], arch["n_ff"], arch["n_vocab"]
    d_kv = d // arch["n_head"] * arch["n_head_kv"]

    def matrix(rows: int, cols: int) -> np.ndarray:
        return rng.normal(0.0, 0.02, size=(rows, cols)).astype(np.float32)

    def norm() -> np.ndarray:
        return (1.0 + rng.normal(0.0, 0.02, size=d)).astype(np.float32)

    tensors = {"token_embd.weight": matrix(vocab, d)}
    for i in range(arch["n_layer"]):
        tensors.update({
            f"blk.{i}.attn_norm.weight": norm(),
            f"blk.{i}.attn_q.weight": matrix(d, d),
            f"blk.{i}.attn_k.weight": matrix(d_kv, d),
            f"blk.{i}.attn_v.weight": matrix(d_kv, d),
            f"blk.{i}.attn_output.weight": matrix(d, d),
            f"blk.{i}.ffn_norm.weight": norm(),
            f"blk.{i}.ffn_gate.weight": matrix(ff, d),
            f"blk.{i}.ffn_up.weight": matrix(ff, d),
            f"blk.{i}.ffn_down.weight": matrix(d, ff),
        })
    tensors["output_norm.weight"] = norm()
    tensors["output.weight"] = matrix(vocab, d)  # untied from the embedding, as in Llama 2
    return tensors


# ---- Files -------------------------------------------------------------------------------------

def write_gguf(path: pathlib.Path, name: str, arch: dict, seed: int) -> int:
    """Write the model; returns its parameter count. Norms stay F32 (llama.cpp's convention),
    matrices take arch['dtype']."""
    rng = np.random.default_rng(seed)
    tokens, scores, types = build_vocab(arch["n_vocab"], rng)
    tensors = random_weights(arch, rng)
    f16 = arch["dtype"] == "f16"

    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name(name)
    writer.add_description(f"Llama architecture with random weights (seed {seed}), written by infermark's model zoo")
    writer.add_context_length(arch["n_ctx"])
    writer.add_embedding_length(arch["n_embd"])
    writer.add_block_count(arch["n_layer"])
    writer.add_feed_forward_length(arch["n_ff"])
    writer.add_head_count(arch["n_head"])
    writer.add_head_count_kv(arch["n_head_kv"])
    writer.add_rope_dimension_count(arch["n_embd"] // arch["n_head"])
    writer.add_rope_freq_base(ROPE_FREQ_BASE)
    writer.add_layer_norm_rms_eps(RMS_NORM_EPS)
    writer.add_vocab_size(arch["n_vocab"])
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if f16 else gguf.LlamaFileType.ALL_F32)

    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(UNK_ID)
    writer.add_bos_token_id(BOS_ID)
    writer.add_eos_token_id(EOS_ID)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)

    for tensor_name, data in tensors.items():
        writer.add_tensor(tensor_name, data.astype(np.float16) if f16 and data.ndim == 2 else data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return sum(t.size for t in tensors.values())


def quantize(tool: pathlib.Path, source: pathlib.Path, target: pathlib.Path, qtype: str, allow_requantize: bool = False) -> None:
    """Quantise with llama.cpp's llama-quantize (the reference implementation of its formats);
    allow_requantize for a source whose numbers came from a quantised file."""
    if not tool.is_file():
        raise SystemExit(f"{tool} not found: run scripts/setup first (it builds llama.cpp)")
    # It logs every tensor; show that only when it fails.
    flags = ["--allow-requantize"] if allow_requantize else []
    result = subprocess.run([str(tool), *flags, str(source), str(target), QUANT_TYPES[qtype]], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"llama-quantize failed ({result.returncode}):\n{result.stdout}{result.stderr}")


def _perplexity(args: list) -> str:
    result = subprocess.run([str(PERPLEXITY_TOOL), "-c", str(KLD_CONTEXT), "-t", "2", *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"llama-perplexity failed ({result.returncode}):\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return result.stdout + result.stderr


def _figure(text: str, label: str) -> float | None:
    match = re.search(rf"^{re.escape(label)}\s*:\s*(-?[0-9.]+)", text, re.MULTILINE)
    return float(match.group(1)) if match else None


# llama-perplexity prints through llama.cpp's asynchronous logger, which can drop the last lines
# when the process exits (about one run in three here): a summary with a figure missing is rerun.
KLD_ATTEMPTS = 4
KLD_LABELS = {"top1_agreement": "Same top p", "kld_mean": "Mean    KLD", "kld_p99": "99.0%   KLD",
              "kld_max": "Maximum KLD", "ppl_ratio": "Mean PPL(Q)/PPL(base)"}


class QuantisationCost:
    """llama-perplexity's KL-divergence mode: the base file's next-token distributions over the
    corpus are saved once, then each quantised copy is scored against them."""

    def __init__(self, base: pathlib.Path, workdir: pathlib.Path, repeats: int = KLD_CORPUS_REPEATS) -> None:
        self.corpus = workdir / "corpus.txt"
        self.corpus.write_text(CORPUS * repeats)
        self.repeats = repeats
        self.logits = workdir / "base.kld"
        _perplexity(["-m", str(base), "-f", str(self.corpus), "--kl-divergence-base", str(self.logits)])
        self.base_name = base.stem

    def of(self, variant: pathlib.Path) -> dict:
        for _ in range(KLD_ATTEMPTS):
            text = _perplexity(["-m", str(variant), "--kl-divergence-base", str(self.logits), "--kl-divergence"])
            figures = {key: _figure(text, label) for key, label in KLD_LABELS.items()}
            if all(value is not None for value in figures.values()):
                break
        else:
            missing = ", ".join(KLD_LABELS[key] for key, value in figures.items() if value is None)
            raise SystemExit(f"llama-perplexity on {variant} printed no '{missing}' line in {KLD_ATTEMPTS} runs:\n{text[-2000:]}")
        figures["top1_agreement"] /= 100
        for key in ("kld_mean", "kld_p99", "kld_max"):
            figures[key] = max(0.0, figures[key])  # printed rounded to 6 places: -0.000000 when about 0
        return {"output": "logits", **figures}

    def accuracy(self, variant: pathlib.Path, base_type: str,
                 note: str = "random weights, so the distributions are nearly flat and top-1 flips easily") -> dict:
        return {"reference": f"{self.base_name} ({base_type}) by the same llama.cpp build",
                "against": f"its {base_type} original",
                "inputs": f"the exporter's English corpus x{self.repeats}, chunks of {KLD_CONTEXT} tokens; {note}",
                "by_format": {"gguf": {"runtime": "llama.cpp llama-perplexity --kl-divergence",
                                       "outputs": [self.of(variant)]}}}


# What this exporter's random-weight models add to the architecture numbers of their manifests.
GENERATED_MODEL = {"rope_freq_base": ROPE_FREQ_BASE, "rms_norm_eps": RMS_NORM_EPS,
                   "tokenizer": "llama (SentencePiece-style, byte fallback)"}


def manifest(path: pathlib.Path, gguf_path: pathlib.Path, name: str, arch: dict, params: int, weights: str,
             accuracy: dict | None = None, described: dict = GENERATED_MODEL) -> None:
    """The zoo manifest of a llama-architecture GGUF: token ids in, next-token logits out, plus the
    architecture numbers and what `described` adds (tokenizer, origin, ...); other exporters of
    llama-architecture GGUFs (export_smollm2_gguf.py) pass their own."""
    write_gguf_manifest(
        path, name=name, task="text-generation", files={"gguf": gguf_path},
        inputs=[("input_ids", "int32", ["batch", "sequence"], (0, arch["n_vocab"]))],
        outputs=[("logits", "float32", ["batch", "sequence", arch["n_vocab"]])],
        weights=weights,
        architecture={
            "family": "llama", **{k: arch[k] for k in ("n_layer", "n_embd", "n_head", "n_head_kv", "n_ff", "n_vocab")},
            "n_ctx_train": arch["n_ctx"], "n_params": params, **described,
        }, accuracy=accuracy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder for <name>.gguf and <name>.json")
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--name", help="file stem (default llama-<size>, the zoo's name)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=("f32", "f16"), help="matrix type (default: f32 tiny, f16 small)")
    parser.add_argument("--quantize", nargs="+", choices=sorted(QUANT_TYPES), default=[],
                        help="also write <name>_<type>.gguf with llama-quantize")
    parser.add_argument("--llama-quantize", type=pathlib.Path, default=DEFAULT_QUANTIZE_TOOL)
    args = parser.parse_args()

    arch = dict(SIZES[args.size], **({"dtype": args.dtype} if args.dtype else {}))
    name = args.name or f"llama-{args.size}"
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{name}.gguf"
    params = write_gguf(path, name, arch, args.seed)
    manifest(args.out / f"{name}.json", path, name, arch, params, f"random (seed {args.seed})")
    print(f"{path}: {params / 1e6:.2f}M params, {arch['dtype'].upper()}, {path.stat().st_size / 1e6:.1f} MB")

    if not args.quantize:
        return
    with tempfile.TemporaryDirectory() as workdir:
        cost = QuantisationCost(path, pathlib.Path(workdir)) if PERPLEXITY_TOOL.is_file() else None
        for qtype in args.quantize:
            target = args.out / f"{name}_{qtype}.gguf"
            quantize(args.llama_quantize, path, target, qtype)
            accuracy = cost.accuracy(target, arch["dtype"].upper()) if cost else None
            manifest(args.out / f"{name}_{qtype}.json", target, f"{name}_{qtype}", arch, params,
                     f"{name} (random, seed {args.seed}) quantised to {QUANT_TYPES[qtype]} by llama-quantize", accuracy)
            figures = accuracy["by_format"]["gguf"]["outputs"][0] if accuracy else None
            print(f"{target}: {QUANT_TYPES[qtype]}, {target.stat().st_size / 1e6:.1f} MB" +
                  (f", top-1 agreement {figures['top1_agreement']:.1%}, mean KLD {figures['kld_mean']:.3g}" if figures else
                   " (llama-perplexity not built: no accuracy figures)"))


if __name__ == "__main__":
    main()
