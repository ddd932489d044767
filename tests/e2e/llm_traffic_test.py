"""LLM traffic: multi-turn conversations in process and against servers, and MLPerf's Interactive scenario.

- `infermark run --turns 3 --think-time ...` on llama.cpp: every conversation's turns in order, each
  turn's prompt the history so far plus a new message (prompt tokens per turn grow by exactly one
  message and one answer), TTFT and latency reported per turn, think time outside latency, and the
  engine's prefix cache reusing each conversation's earlier prompt; with `--scenario server` the
  rate starts conversations and each started one runs whole;
- `infermark load --turns` against `infermark serve` with its prefix cache on: each turn's history
  (chat messages) reaches the server's cache, and against llama-server;
- bad flag mixes fail before anything runs;
- `--dataset FILE` cuts prompts from a real text: in process exactly the asked tokens by the
  model's own tokenizer, in `load` windows of its words;
- `--scenario interactive` runs server arrivals under MLPerf's Interactive limits (TTFT P99 450 ms,
  TPOT P99 40 ms) unless given others, and the result says which limits ran;
- `load --tokenizer MODEL` against llama-server counts output tokens with the model's own tokenizer
  and puts the server's usage beside it.

Usage: llm_traffic_test.py INFERMARK MODELS_DIR LLAMA_SERVER
"""

import os
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


def infermark(command, *args, expect_code=0):
    return run_cli(INFERMARK, command, args, "llm-traffic-", expect_code)


class ConversationsInProcess(unittest.TestCase):
    def test_turns_grow_their_prompts_and_are_reported_per_turn(self):
        (result,), done, out = infermark("run", LLAMA, "-b", "llamacpp", "--turns", "3", "--think-time", "0.2",
                                         "--prompt-tokens", "40", "--output-tokens", "8", "--concurrency", "2",
                                         "--runs", "12", "--warmup", "2", "--opt", "prefix_cache=on")
        self.assertEqual(result["status"], "ok", result.get("error"))
        parameters = result["scenario"]["parameters"]
        self.assertEqual((parameters["conversation_turns"], parameters["think_s"]), (3, 0.2))
        generation = result["generation"]
        turns = generation["by_group"]
        self.assertEqual([t["label"] for t in turns], ["turn 1", "turn 2", "turn 3"])
        # 2 users x 2 whole conversations, unless the run's count cut the last one short: every
        # conversation runs from its first turn.
        counts = [t["requests"] for t in turns]
        self.assertEqual(sum(counts), 12)
        self.assertEqual(counts, sorted(counts, reverse=True))
        # Fixed lengths: turn k's prompt is k messages of 40 and k - 1 answers of 8.
        self.assertEqual([t["prompt_tokens_mean"] for t in turns], [40, 88, 136])
        self.assertEqual(generation["output_tokens"]["total"], 12 * 8)
        # Each later turn's prompt starts with the one before it, which the engine's prefix cache
        # still holds (the last prompt token is always decoded again).
        self.assertGreaterEqual(generation["prompt_tokens_reused"], counts[1] * (40 - 1) + counts[2] * (88 - 1))
        # Latency is each answer's own time: the 0.2 s pauses are between requests, not in them.
        self.assertLess(result["latency_ms"]["percentiles"]["p50"]["value"], parameters["think_s"] * 1000)
        (phase,) = result["phases"]
        self.assertGreater(phase["duration_s"], 2 * 0.2 * 2)  # two pauses per conversation, two conversations per user
        self.assertEqual([g["group"] for g in phase["latency_by_group_ms"]], ["turn 1", "turn 2", "turn 3"])
        report = subprocess.run([INFERMARK, "report", out, "--md"], check=True, capture_output=True, text=True).stdout
        self.assertIn("3 turns x 40+8", report)
        self.assertIn("turn 3", report)

    def test_open_loop_starts_conversations_at_the_rate_and_runs_each_whole(self):
        (result,), _, _ = infermark("run", LLAMA, "-b", "llamacpp", "--turns", "3", "--think-time", "0.05",
                                    "--scenario", "server", "--qps", "4", "--arrivals", "constant", "--duration", "1.5",
                                    "--prompt-tokens", "16",
                                    "--output-tokens", "4", "--concurrency", "4", "--warmup", "0", "--opt", "prefix_cache=on")
        self.assertEqual(result["status"], "ok", result.get("error"))
        turns = result["generation"]["by_group"]
        self.assertEqual([t["label"] for t in turns], ["turn 1", "turn 2", "turn 3"])
        started = turns[0]["requests"]
        self.assertEqual(started, 6)  # one every 0.25 s for 1.5 s
        self.assertEqual([t["requests"] for t in turns], [started] * 3)  # every conversation started ran whole
        self.assertEqual([t["prompt_tokens_mean"] for t in turns], [16, 36, 56])
        (phase,) = result["phases"]
        self.assertEqual(phase["completed"], 3 * started)
        self.assertIn("scheduled arrival", result["generation"]["ttft_from"])

    def test_bad_mixes_fail_before_anything_runs(self):
        for args, message in ((["--turns", "3", "--scenario", "pulse"], "--turns"),
                              (["--turns", "3", "--shared-prefix", "2:8"], "--turns"),
                              (["--turns", "3", "--think-time", "soon"], "--think-time soon"),
                              (["--turns", "64", "--prompt-tokens", "64"], "--turns 64")):
            with self.subTest(args=args):
                results, done, _ = infermark("run", LLAMA, "-b", "llamacpp", "--opt", "ctx=512", *args, expect_code=None)
                self.assertNotEqual(done.returncode, 0)
                self.assertIn(message, done.stderr + done.stdout)
                self.assertEqual([r for r in results if r["status"] == "ok"], [])


class Dataset(unittest.TestCase):
    """Prompts cut from a real text (Debian base-files' GPL-3): exact token lengths in process, words in load."""
    TEXT = "/usr/share/common-licenses/GPL-3"

    def test_run_cuts_prompts_of_exact_token_lengths(self):
        (result,), _, _ = infermark("run", LLAMA, "-b", "llamacpp", "--dataset", self.TEXT, "--prompt-tokens", "48",
                                    "--output-tokens", "4", "--runs", "6", "--warmup", "0")
        self.assertEqual(result["status"], "ok", result.get("error"))
        self.assertEqual(result["scenario"]["parameters"]["dataset"], self.TEXT)
        generation = result["generation"]
        self.assertEqual(generation["prompt_tokens"]["total"], 6 * 48)
        self.assertIn("corpus GPL-3", generation["prompt_source"])
        self.assertIn("ordinary tokens by the model's own tokenizer", generation["prompt_source"])
        (synthetic,), _, _ = infermark("run", LLAMA, "-b", "llamacpp", "--runs", "1", "--warmup", "0")
        self.assertIn("vocabulary", synthetic["generation"]["prompt_source"])

    def test_bad_dataset_fails_naming_the_flag(self):
        results, done, _ = infermark("run", LLAMA, "-b", "llamacpp", "--dataset", "/nonexistent/corpus.txt", "--runs", "1",
                                     expect_code=None)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("--dataset /nonexistent/corpus.txt: cannot be read", done.stdout + done.stderr + json_errors(results))


def json_errors(results):
    return " ".join(r.get("error", "") for r in results)


class InteractiveScenario(unittest.TestCase):
    def test_mlperf_limits_unless_given(self):
        for extra, ttft, tpot, source in (([], 450, 40, "MLPerf Inference v5.0 Interactive"),
                                          (["--tpot-ms", "100"], 450, 100, "--ttft-ms/--tpot-ms")):
            with self.subTest(extra=extra):
                (result,), done, _ = infermark("run", LLAMA, "-b", "llamacpp", "--scenario", "interactive", "--qps", "4",
                                               "--duration", "2", "--prompt-tokens", "24", "--output-tokens", "6",
                                               "--concurrency", "2", "--warmup", "1", *extra)
                self.assertEqual(result["status"], "ok", result.get("error"))
                parameters = result["scenario"]["parameters"]
                self.assertEqual((parameters["name"], parameters["ttft_ms"], parameters["tpot_ms"]),
                                 ("interactive", ttft, tpot))
                self.assertIn(f"TTFT P99 <= {ttft} ms, TPOT P99 <= {tpot} ms", parameters["limits"])
                self.assertIn(source, parameters["limits"])
                sla = result["analysis"]["sla"]
                self.assertEqual((sla["ttft"]["p99_ms_target"], sla["tpot"]["p99_ms_target"]), (ttft, tpot))
                (phase,) = result["phases"]
                self.assertEqual(phase["label"], "interactive")
                self.assertGreater(phase["issued"], 0)


class ConversationsAgainstServers(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="conversation-serve-")

    def test_history_reaches_infermark_serves_prefix_cache(self):
        server, address = start_server(INFERMARK, ["--model", LLAMA, "-b", "llamacpp", "--port", "0", "--slots", "2",
                                                   "--ctx", "2048", "--opt", "prefix_cache=on", "--out", self.dir])
        try:
            (result,), _, _ = infermark("load", f"http://{address}", "--protocol", "openai", "--model", "llama-tiny",
                                        "--turns", "4", "--think-time", "0.05", "--prompt-tokens", "60",
                                        "--output-tokens", "6", "--concurrency", "2", "--runs", "8", "--warmup", "0")
            self.assertEqual(result["status"], "ok", result.get("error"))
            generation = result["generation"]
            turns = generation["by_group"]
            counts = [t["requests"] for t in turns]
            self.assertEqual(sum(counts), 8)
            self.assertEqual(counts, sorted(counts, reverse=True))  # each conversation from its first turn
            means = [t["prompt_tokens_mean"] for t in turns]
            self.assertEqual(means, sorted(means))  # the server counted a longer prompt each turn
            self.assertGreater(means[-1], means[0] + (len(means) - 1) * 60)
            self.assertIn("conversations (4 turns", result["remote"]["prompts"]["source"])
            [reused] = metric_values(address, "infermark_prompt_tokens_reused_total").values()
            # Turns 2-4 of each conversation found the turn before's prompt (at least its messages).
            self.assertGreaterEqual(reused, sum(count * 60 * turn for turn, count in enumerate(counts)))
        finally:
            stop_server(server)

    def test_against_llama_server(self):
        with llama_server(LLAMA_SERVER, LLAMA, context=2048) as address:
            (result,), _, _ = infermark("load", f"http://{address}", "--protocol", "openai", "--model",
                                        "llama-tiny", "--turns", "3", "--prompt-tokens", "5", "--output-tokens", "3",
                                        "--dataset", Dataset.TEXT,
                                        "--concurrency", "2", "--runs", "6", "--warmup", "0", *GRAMMAR)
            self.assertEqual(result["status"], "ok", result.get("error"))
            self.assertEqual(result["remote"]["errors"]["total"], 0, result["remote"]["errors"])  # within its 256-token context
            self.assertEqual(result["backend"]["framework"], "llama.cpp")
            self.assertIn("corpus GPL-3", result["remote"]["prompts"]["source"])
            turns = result["generation"]["by_group"]
            self.assertEqual([t["label"] for t in turns][:2], ["turn 1", "turn 2"])  # turn 3 unless the count cut it
            self.assertEqual(result["generation"]["requests"], 6)
            means = [t["prompt_tokens_mean"] for t in turns]
            self.assertEqual(means, sorted(means))
            # Open loop against the same server: 4 conversations started at 4/s, each run whole.
            (result,), _, _ = infermark("load", f"http://{address}", "--protocol", "openai", "--model", "llama-tiny",
                                        "--turns", "3", "--think-time", "0.05", "--scenario", "server", "--qps", "4",
                                        "--arrivals", "constant", "--duration", "1", "--prompt-tokens", "5",
                                        "--output-tokens", "3", "--concurrency", "2", "--warmup", "0", *GRAMMAR)
            self.assertEqual(result["status"], "ok", result.get("error"))
            self.assertEqual(result["remote"]["errors"]["total"], 0, result["remote"]["errors"])
            self.assertEqual([t["requests"] for t in result["generation"]["by_group"]], [4, 4, 4])


class TokensCountedByTheServedModelsTokenizer(unittest.TestCase):
    """`load --tokenizer MODEL`: the served model's own tokenizer counts each answer's output tokens
    from its text; the result names the tokenizer and puts the server's usage beside it."""

    def test_against_llama_server(self):
        with llama_server(LLAMA_SERVER, LLAMA) as address:
            (result,), _, out = infermark("load", f"http://{address}", "--protocol", "openai", "--model", "llama-tiny",
                                          "--tokenizer", LLAMA, "--prompt-tokens", "8", "--output-tokens", "8",
                                          "--concurrency", "2", "--runs", "6", "--warmup", "0", *GRAMMAR)
            self.assertEqual(result["status"], "ok", result.get("error"))
            counts = result["remote"]["token_counts"]
            self.assertIn("llama.cpp", counts["tokenizer"])
            self.assertIn("llama-tiny.gguf", counts["tokenizer"])
            self.assertEqual(counts["from_tokenizer"], 6)
            self.assertEqual(counts["from_server_usage"], 0)  # the tokenizer's counts are the ones used
            self.assertEqual(counts["server_usage_tokens"], 6 * 8)  # ignore_eos: 8 generated every time
            # The figures count what the tokenizer counted: re-tokenised, a text may merge the pieces it was generated in.
            self.assertGreater(counts["tokenizer_tokens"], 0)
            self.assertEqual(result["generation"]["output_tokens"]["total"], counts["tokenizer_tokens"])
            report = subprocess.run([INFERMARK, "report", out], capture_output=True, text=True, check=True).stdout
            self.assertIn(f"counted by the {counts['tokenizer']} (6 requests); on those the server's usage said 48 tokens",
                          report)

    def test_bad_tokenizers_fail_naming_the_flag(self):
        _, done, _ = infermark("load", "http://127.0.0.1:9", "--protocol", "kserve", "--model", "m", "--tokenizer", LLAMA,
                               expect_code=2)
        self.assertIn("--tokenizer: counts an LLM server's output tokens, for --protocol openai only", done.stderr)


if __name__ == "__main__":
    unittest_main.main(verbosity=1)
