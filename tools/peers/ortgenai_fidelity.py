"""Fidelity check for the ortgenai backend: infermark's TTFT, time per output token and output
tokens/s on an ONNX Runtime GenAI model folder against ONNX Runtime GenAI's own Python API doing
the same work in a timed loop: one request at a time, a generator of batch 1 per request sized
prompt + output (max_length = min_length, so the end token cannot cut a request short, as
infermark's backend sets it), the prompt appended, then one generate_next_token per output token.
TTFT is append_tokens plus the first generate_next_token; TPOT the rest divided by output - 1.
Same model folder, threads, prompt and output lengths; the prompt tokens are drawn from the model's
ordinary vocabulary on both sides. The two sides' order rotates every round (rounds.py).

Runs in third_party/llm-venv (the Python binding of the same onnxruntime-genai version):
  third_party/llm-venv/bin/python tools/peers/ortgenai_fidelity.py models/smollm2-135m_int4.genai \
      [--rounds 5] [--threads 2] [--prompt-tokens 128] [--output-tokens 64] [--requests 8]
"""
import json
import pathlib
import random
import statistics
import sys
import time

import onnxruntime_genai as og

from llm_fidelity_common import compare_in_rounds, parse_work


def python_loop(model_dir: pathlib.Path, threads: int, prompt_tokens: int, output_tokens: int, requests: int,
                warmup: int) -> dict:
    config = og.Config(str(model_dir))
    config.clear_providers()
    config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": threads}}}}))
    model = og.Model(config)
    vocabulary = json.loads((model_dir / "genai_config.json").read_text())["model"]["vocab_size"]
    draw = random.Random(7)
    ttft, tpot, wall, produced = [], [], 0.0, 0
    for index in range(warmup + requests):
        prompt = [draw.randrange(100, vocabulary) for _ in range(prompt_tokens)]
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=prompt_tokens + output_tokens, min_length=prompt_tokens + output_tokens,
                                  do_sample=False, batch_size=1)
        started = time.perf_counter()
        generator = og.Generator(model, params)
        generator.append_tokens(prompt)
        generator.generate_next_token()
        first = time.perf_counter()
        for _ in range(output_tokens - 1):
            generator.generate_next_token()
        ended = time.perf_counter()
        del generator
        if index < warmup:
            continue
        ttft.append((first - started) * 1e3)
        tpot.append((ended - first) * 1e3 / (output_tokens - 1))
        wall += ended - started
        produced += output_tokens
    return {"ttft_ms": statistics.mean(ttft), "tpot_ms": statistics.mean(tpot), "output_tokens_per_s": produced / wall}


def main() -> int:
    args = parse_work(__doc__)
    print(f"onnxruntime-genai {og.__version__}", flush=True)
    work = (args.threads, args.prompt_tokens, args.output_tokens, args.requests, args.warmup)
    compare_in_rounds(args, "onnxruntime-genai python", lambda: python_loop(args.model, *work), "ortgenai")
    return 0


if __name__ == "__main__":
    sys.exit(main())
