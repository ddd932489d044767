"""What the LLM engine fidelity checks (ortgenai_fidelity.py, ovllm_fidelity.py) share: the
infermark side of the comparison (one `infermark run` of a model folder on one backend, single
stream, synthetic prompt token ids, fixed output length), the command line both take, and the
ratio report over rotated rounds (rounds.py)."""
import argparse
import glob
import json
import pathlib
import subprocess
import tempfile

from rounds import DEFAULT_ROUNDS, run_rounds, spread

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIGURES = ("ttft_ms", "tpot_ms", "output_tokens_per_s")


def parse_work(description: str, add_arguments=lambda parser: None) -> argparse.Namespace:
    """The shared command line: the model folder, rounds and the work each side does per round, plus
    what add_arguments(parser) adds for one peer."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=pathlib.Path)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-tokens", type=int, default=128)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--infermark", type=pathlib.Path, default=ROOT / "build" / "release" / "infermark")
    add_arguments(parser)
    return parser.parse_args()


def infermark_generation(args: argparse.Namespace, backend: str) -> dict:
    """Mean TTFT and TPOT and output tokens/s of one single-stream `infermark run` on `backend`."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([str(args.infermark), "run", str(args.model), "-b", backend, "--threads", str(args.threads),
                        "--prompt-tokens", str(args.prompt_tokens), "--output-tokens", str(args.output_tokens),
                        "--runs", str(args.requests), "--warmup", str(args.warmup), "--out", out],
                       check=True, stdout=subprocess.DEVNULL)
        result = json.loads(pathlib.Path(sorted(glob.glob(out + "/*/*.json"))[-1]).read_text())
    generation = result["generation"]
    return {"ttft_ms": generation["ttft_ms"]["mean"], "tpot_ms": generation["tpot_ms"]["mean"],
            "output_tokens_per_s": generation["output_tokens_per_s"]}


def compare_in_rounds(args: argparse.Namespace, peer: str, measure_peer, backend: str) -> None:
    """Runs the peer and infermark in rotated rounds and prints infermark / peer for each figure."""
    sides = {peer: measure_peer, "infermark": lambda: infermark_generation(args, backend)}
    print(f"{args.model.name}, {args.threads} threads, prompt {args.prompt_tokens}, output {args.output_tokens}, "
          f"{args.requests} requests (+{args.warmup} warm-up) per side per round", flush=True)
    results = run_rounds(list(sides), args.rounds, lambda side: sides[side](),
                         describe=lambda f: ", ".join(f"{k} {f[k]:.2f}" for k in FIGURES))
    for figure in FIGURES:
        ratios = [r["infermark"][figure] / r[peer][figure] for r in results]
        print(f"{figure}: infermark / {peer} = {spread(ratios)} (median, range over {args.rounds} rounds)")
