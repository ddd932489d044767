"""Fidelity check for the ovllm backend: infermark's TTFT, time per output token and output
tokens/s on an OpenVINO stateful LLM IR folder (*.ov) against OpenVINO GenAI's own figures for the
same work: LLMPipeline.generate, one request at a time, timed by GenAI itself (its perf_metrics:
TTFT, TPOT and the generate duration). Both sides feed prompt token ids drawn from the model's
ordinary vocabulary (no tokenization inside the timing) and decode greedily a fixed number of
tokens (GenAI: min_new_tokens = max_new_tokens; infermark: end tokens excluded). Same folder,
threads (INFERENCE_NUM_THREADS), latency hint and lengths. The two sides' order rotates every
round (rounds.py).

GenAI's LLMPipeline runs on CPU with PagedAttention (its continuous-batching engine) unless told
otherwise; infermark's backend runs the stateful model with its SDPA KV state, which is GenAI's
ATTENTION_BACKEND=SDPA, the default here. --attention-backend PA compares against the other one.

Runs in third_party/ov-llm-venv (openvino-genai of the same OpenVINO version infermark links):
  third_party/ov-llm-venv/bin/python tools/peers/ovllm_fidelity.py models/smollm2-135m_int4.ov \
      [--rounds 5] [--threads 2] [--prompt-tokens 128] [--output-tokens 64] [--requests 8]
"""
import json
import statistics
import sys

import numpy as np
import openvino as ov
import openvino_genai as ov_genai

from llm_fidelity_common import compare_in_rounds, parse_work


def ordinary_vocabulary(model_dir) -> list:
    """Token ids outside the tokenizer's added (special) tokens, as infermark's prompt draw uses."""
    size = json.loads((model_dir / "config.json").read_text())["vocab_size"]
    added = json.loads((model_dir / "tokenizer.json").read_text()).get("added_tokens", [])
    special = {token["id"] for token in added}
    return [t for t in range(size) if t not in special]


def genai_pipeline(args):
    return ov_genai.LLMPipeline(str(args.model), "CPU", ATTENTION_BACKEND=args.attention_backend,
                                INFERENCE_NUM_THREADS=args.threads, PERFORMANCE_HINT="LATENCY")


def genai_loop(args, vocabulary: list) -> dict:
    pipe = genai_pipeline(args)
    config = ov_genai.GenerationConfig()
    config.max_new_tokens = args.output_tokens
    config.min_new_tokens = args.output_tokens
    config.do_sample = False
    draw = np.random.default_rng(7)
    ttft, tpot, duration, produced = [], [], 0.0, 0
    for index in range(args.warmup + args.requests):
        prompt = draw.choice(vocabulary, size=(1, args.prompt_tokens)).astype(np.int64)
        result = pipe.generate(ov.Tensor(prompt), config)
        generated = len(result.tokens[0])
        if generated != args.output_tokens:
            raise RuntimeError(f"OpenVINO GenAI generated {generated} tokens, asked for {args.output_tokens}")
        if index < args.warmup:
            continue
        metrics = result.perf_metrics
        ttft.append(metrics.get_ttft().mean)
        tpot.append(metrics.get_tpot().mean)
        duration += metrics.get_generate_duration().mean / 1e3
        produced += generated
    del pipe
    return {"ttft_ms": statistics.mean(ttft), "tpot_ms": statistics.mean(tpot), "output_tokens_per_s": produced / duration}


def main() -> int:
    args = parse_work(__doc__, lambda parser: parser.add_argument("--attention-backend", choices=("SDPA", "PA"),
                                                                   default="SDPA"))
    print(f"openvino-genai {ov_genai.__version__}, openvino {ov.__version__}, "
          f"ATTENTION_BACKEND={args.attention_backend}", flush=True)
    vocabulary = ordinary_vocabulary(args.model)
    compare_in_rounds(args, "openvino-genai perf_metrics", lambda: genai_loop(args, vocabulary), "ovllm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
