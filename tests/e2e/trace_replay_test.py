"""Trace replay: recorded arrivals and request lengths, replayed in process and against servers.

The public traces (Mooncake, Azure LLM inference, BurstGPT) are in no registry, so each test writes
a small trace in the format's own layout (docs/methodology.md, "Trace replay") and checks:

- `infermark run` replays each format on llama.cpp: every request issued once, at or after its
  recorded time, with exactly the trace's prompt and output tokens in total; rows without tokens
  skipped and counted; --trace-speed compresses the schedule;
- `infermark load` replays a Mooncake trace against `infermark serve` with its prefix cache on:
  requests naming the same hash_ids blocks share those blocks' words, so the server skips their
  prefill (its reused-tokens counter), and a BurstGPT trace against llama-server;
- bad traces and flag mixes fail before anything runs, naming the file, line and field.

Usage: trace_replay_test.py INFERMARK MODELS_DIR LLAMA_SERVER
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

from cli_support import run_cli
from serve_support import llama_server, metric_values, start_server, stop_server
import unittest_main

INFERMARK, MODELS, LLAMA_SERVER = sys.argv[1], sys.argv[2], sys.argv[3]
LLAMA = os.path.join(MODELS, "llama-tiny.gguf")
GRAMMAR = ["--body-field", 'grammar="root ::= [a-z ]+"']  # keeps the random-weight model's output valid text


def write_mooncake(path, requests):
    """requests: (arrival ms, input tokens, output tokens, hash ids)."""
    with open(path, "w") as f:
        for at, inp, out, blocks in requests:
            f.write(json.dumps({"timestamp": at, "input_length": inp, "output_length": out, "hash_ids": blocks}) + "\n")


def write_azure(path, requests):
    """requests: (arrival s within the minute, input, output)."""
    with open(path, "w") as f:
        f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
        for at, inp, out in requests:
            f.write(f"2023-11-16 18:15:{at:010.7f},{inp},{out}\n")


def write_burstgpt(path, requests):
    with open(path, "w") as f:
        f.write("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n")
        for at, inp, out in requests:
            f.write(f"{at},ChatGPT,{inp},{out},{inp + out},Conversation log\n")


def lengths(seed, count):
    r = random.Random(seed)
    return [(r.randint(12, 60), r.randint(3, 9)) for _ in range(count)]


def infermark(command, *args, expect_code=0):
    return run_cli(INFERMARK, command, args, "trace-replay-", expect_code)


class ReplayInProcess(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="traces-")

    def check_replayed(self, result, kept, fmt, skipped=0):
        self.assertEqual(result["status"], "ok", result.get("error"))
        parameters = result["scenario"]["parameters"]
        self.assertEqual(parameters["name"], "replay")
        trace = parameters["trace"]
        self.assertEqual((trace["format"], trace["requests"], trace["rows_skipped"]), (fmt, len(kept), skipped))
        (phase,) = result["phases"]
        self.assertEqual((phase["issued"], phase["completed"], phase["errors"]), (len(kept), len(kept), 0))
        self.assertGreaterEqual(phase["duration_s"], trace["replayed_span_s"])  # nothing left before its time
        generation = result["generation"]
        self.assertEqual(generation["prompt_tokens"]["total"], sum(i for i, _ in kept))
        self.assertEqual(generation["output_tokens"]["total"], sum(o for _, o in kept))
        return trace

    def test_each_format_replays_its_lengths(self):
        sizes = lengths(1, 10)
        mooncake = os.path.join(self.dir, "trace.jsonl")
        write_mooncake(mooncake, [(150 * k, i, o, []) for k, (i, o) in enumerate(sizes)])
        azure = os.path.join(self.dir, "azure_conv.csv")
        write_azure(azure, [(10 + 0.15 * k, i, o) for k, (i, o) in enumerate(sizes)])
        burst = os.path.join(self.dir, "BurstGPT_1.csv")
        rows = [(5 + 0.15 * k, i, o) for k, (i, o) in enumerate(sizes)] + [(7.0, 30, 0)]  # a failed request
        write_burstgpt(burst, rows)
        for path, fmt, skipped in ((mooncake, "mooncake", 0), (azure, "azure", 0), (burst, "burstgpt", 1)):
            with self.subTest(format=fmt):
                (result,), done, out = infermark("run", LLAMA, "-b", "llamacpp", "--trace", path, "--concurrency", "2",
                                                 "--warmup", "0")
                trace = self.check_replayed(result, sizes, fmt, skipped)
                self.assertAlmostEqual(trace["recorded_span_s"], 1.35, places=6)
                self.assertIn(f"replay: {os.path.basename(path)} ({fmt}), 10 requests", done.stdout)
                report = subprocess.run([INFERMARK, "report", out, "--md"], check=True, capture_output=True,
                                        text=True).stdout
                mean_in, mean_out = sum(i for i, _ in sizes) / 10, sum(o for _, o in sizes) / 10
                self.assertIn(f"trace ~{mean_in:.0f}+{mean_out:.0f}", report)

    def test_speed_and_first_requests(self):
        sizes = lengths(2, 8)
        path = os.path.join(self.dir, "trace.jsonl")
        write_mooncake(path, [(400 * k, i, o, []) for k, (i, o) in enumerate(sizes)])
        (result,), _, _ = infermark("run", LLAMA, "-b", "llamacpp", "--trace", path, "--trace-speed", "4",
                                    "--trace-requests", "6", "--warmup", "0")
        trace = self.check_replayed(result, sizes[:6], "mooncake")
        self.assertAlmostEqual(trace["recorded_span_s"], 2.0)
        self.assertAlmostEqual(trace["replayed_span_s"], 0.5)
        self.assertAlmostEqual(trace["speed"], 4)

    def test_bad_traces_fail_before_anything_runs(self):
        bad = os.path.join(self.dir, "bad.jsonl")
        with open(bad, "w") as f:
            f.write('{"timestamp": 0, "input_length": 5, "output_length": 3}\n{"timestamp": 9, "output_length": 3}\n')
        good = os.path.join(self.dir, "good.jsonl")
        write_mooncake(good, [(0, 5, 3, [])])
        for args, message in (
                (["--trace", bad], f"{bad}:2: input_length: missing"),
                (["--trace", os.path.join(self.dir, "none.csv")], "none.csv: no such file"),
                (["--trace", good, "--scenario", "server", "--qps", "2"], "--scenario replay and --trace FILE go together"),
                (["--trace", good, "--trace-format", "parquet"], "--trace-format"),
                (["--trace", good, "--shared-prefix", "2:8"], "a replayed trace brings its own prompts")):
            with self.subTest(args=args):
                results, done, _ = infermark("run", LLAMA, "-b", "llamacpp", *args, expect_code=None)
                self.assertNotEqual(done.returncode, 0)
                self.assertIn(message, done.stderr + done.stdout)
                self.assertEqual(results, [])


class ReplayAgainstServers(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="traces-")

    def test_mooncake_blocks_reach_infermark_serves_prefix_cache(self):
        # Eight requests of one 512-token block plus a little: block 0 is every request's first, so
        # the prompts share 512 words, as the trace says the requests shared a prefix.
        r = random.Random(3)
        requests = [(300 * k, 512 + r.randint(10, 60), 6, [0, 100 + k]) for k in range(8)]
        path = os.path.join(self.dir, "mooncake_trace.jsonl")
        write_mooncake(path, requests)
        server, address = start_server(INFERMARK, ["--model", LLAMA, "-b", "llamacpp", "--port", "0", "--slots", "2",
                                                   "--ctx", "2048", "--opt", "prefix_cache=on", "--out", self.dir])
        try:
            (result,), _, _ = infermark("load", f"http://{address}", "--protocol", "openai", "--model", "llama-tiny",
                                           "--trace", path, "--concurrency", "1", "--warmup", "0")
            self.assertEqual(result["status"], "ok", result.get("error"))
            self.assertEqual(result["generation"]["requests"], 8)
            self.assertEqual(result["generation"]["output_tokens"]["total"], 8 * 6)
            self.assertEqual(result["scenario"]["parameters"]["trace"]["block_reuse_share"], 7 / 16)
            # Grouped by their first block, as a shared-prefix workload: one cold request, seven warm.
            prefix = result["generation"]["shared_prefix"]
            self.assertEqual((prefix["groups"], prefix["prefix_tokens"]), (1, 512))
            self.assertEqual((prefix["cold_requests"], prefix["warm_requests"]), (1, 7))
            [reused] = metric_values(address, "infermark_prompt_tokens_reused_total").values()
            # Seven requests came after block 0 had been prefilled: each skipped at least its 512 words.
            self.assertGreaterEqual(reused, 7 * 512)
        finally:
            stop_server(server)

    def test_burstgpt_against_llama_server(self):
        sizes = lengths(4, 8)
        path = os.path.join(self.dir, "BurstGPT_1.csv")
        write_burstgpt(path, [(0.2 * k, i, o) for k, (i, o) in enumerate(sizes)])
        with llama_server(LLAMA_SERVER, LLAMA, "--metrics") as address:
            (result,), _, _ = infermark("load", f"http://{address}", "--protocol", "openai", "--model",
                                           "llama-tiny", "--trace", path, "--concurrency", "2", "--warmup", "0", *GRAMMAR)
            self.assertEqual(result["status"], "ok", result.get("error"))
            self.assertEqual(result["backend"]["framework"], "llama.cpp")
            self.assertEqual(result["generation"]["requests"], 8)
            self.assertEqual(result["generation"]["output_tokens"]["total"], sum(o for _, o in sizes))  # ignore_eos
            self.assertEqual(result["remote"]["prompts"]["count"], 8)
            trace = result["scenario"]["parameters"]["trace"]
            self.assertEqual((trace["file"], trace["format"], trace["requests"]), ("BurstGPT_1.csv", "burstgpt", 8))
            self.assertEqual(result["phases"][0]["issued"], 8)


if __name__ == "__main__":
    unittest_main.main(verbosity=1)
