"""NVIDIA's aiperf (the LLM benchmark: TTFT, inter-token latency) runs a short streaming chat
profile against `infermark serve`'s OpenAI endpoint with a GGUF model, and what it exports agrees
with the server's own counters.

aiperf gets a local tokenizer (aiperf_support.py): it only shapes the synthetic prompts;
`--use-server-token-count` takes the output token counts (and so the inter-token latency) from the
server's `usage`.

Usage: serve_aiperf_test.py INFERMARK MODELS_DIR AIPERF_VENV
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from aiperf_support import aiperf_environment, make_tokenizer
from serve_support import metric_values, start_server, stop_server
import unittest_main

INFERMARK, MODELS, AIPERF_VENV = sys.argv[1], sys.argv[2], sys.argv[3]
REQUESTS, CONCURRENCY, OUTPUT_TOKENS = 32, 4, 16



def series_value(address, name):
    """The value of `name` for the one variant served (0 when the series is not there yet)."""
    values = [v for series, v in metric_values(address, name).items() if 'variant="llamacpp"' in series]
    return values[0] if values else 0.0


class AiperfAgainstServe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        aiperf = os.path.join(AIPERF_VENV, "bin", "aiperf")
        if not os.access(aiperf, os.X_OK):
            raise RuntimeError(f"no aiperf in {AIPERF_VENV}: run scripts/setup (install_aiperf)")
        cls.work = tempfile.mkdtemp(prefix="serve-aiperf-test-")
        cls.tokenizer = os.path.join(cls.work, "tokenizer")
        make_tokenizer(AIPERF_VENV, cls.tokenizer)
        cls.process, cls.address = start_server(
            INFERMARK, ["--model", os.path.join(MODELS, "llama-tiny.gguf"), "-b", "llamacpp", "--slots", "4", "--port", "0",
                        "--io-threads", "2", "--out", os.path.join(cls.work, "results")])

    @classmethod
    def tearDownClass(cls):
        stop_server(cls.process)

    def test_streaming_chat_profile(self):
        before = series_value(self.address, "nv_inference_request_success")
        generated_before = series_value(self.address, "infermark_generated_tokens_total")
        artifacts = os.path.join(self.work, "artifacts")
        environment = aiperf_environment()
        command = [os.path.join(AIPERF_VENV, "bin", "aiperf"), "profile", "--model", "llama-tiny",
                   "--url", f"http://{self.address}", "--endpoint-type", "chat", "--streaming",
                   "--tokenizer", self.tokenizer, "--use-server-token-count",
                   "--request-count", str(REQUESTS), "--concurrency", str(CONCURRENCY),
                   "--isl", "32", "--isl-stddev", "0", "--osl", str(OUTPUT_TOKENS), "--random-seed", "1",
                   # Same prompts (aiperf's seed) and same sampling (the server's): the random-weight
                   # model ends a reply early at its end-of-sequence token the same way on every run.
                   "--extra-inputs", "seed:1",
                   "--artifact-dir", artifacts, "--no-gpu-telemetry"]
        run = subprocess.run(command, capture_output=True, text=True, timeout=180, env=environment)
        self.assertEqual(run.returncode, 0, run.stdout[-6000:] + run.stderr[-6000:])

        with open(os.path.join(artifacts, "profile_export_aiperf.json")) as f:
            summary = json.load(f)
        context = json.dumps({k: summary.get(k) for k in ("request_count", "error_summary", "request_error_rate")})
        self.assertEqual(summary["request_count"]["avg"], REQUESTS, context)
        self.assertEqual(summary.get("error_summary"), [], context)
        self.assertEqual(summary["request_error_rate"]["avg"], 0, context)
        self.assertFalse(summary["was_cancelled"])
        # One record per request, none failed.
        with open(os.path.join(artifacts, "profile_export.jsonl")) as f:
            records = [json.loads(line) for line in f if line.strip()]
        self.assertEqual(len(records), REQUESTS)
        self.assertFalse([r for r in records if r.get("error")], "failed records")
        # Random weights may stop early at an end-of-sequence token; never beyond max_completion_tokens.
        lengths = [r["metrics"]["output_sequence_length"]["value"] for r in records]
        self.assertTrue(all(1 <= n <= OUTPUT_TOKENS for n in lengths), lengths)

        ttft, itl, latency = (summary[k] for k in ("time_to_first_token", "inter_token_latency", "request_latency"))
        # An inter-token latency needs two tokens.
        for name, metric, count in (("TTFT", ttft, REQUESTS), ("ITL", itl, sum(n >= 2 for n in lengths)),
                                    ("request latency", latency, REQUESTS)):
            self.assertEqual(metric["unit"], "ms", name)
            self.assertEqual(metric["count"], count, name)
            self.assertGreater(metric["min"], 0, name)
        # A token comes faster than a whole request of up to 16; the first one before the request ends.
        self.assertLess(ttft["p50"], latency["p50"])
        self.assertLess(itl["p50"], latency["p50"])
        self.assertLess(latency["max"], 30_000)

        # The server counted the same requests and the same generated tokens.
        self.assertEqual(series_value(self.address, "nv_inference_request_success") - before, REQUESTS)
        self.assertEqual(series_value(self.address, "infermark_generated_tokens_total") - generated_before,
                         summary["total_osl"]["avg"])


if __name__ == "__main__":
    unittest_main.main()
