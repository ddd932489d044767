"""`mpirun -np N infermark load` against real servers on loopback: `infermark serve` (KServe v2) and
llama.cpp's llama-server (OpenAI API). One merged result whose counts are the sum of the ranks' and
the server's own; N ranks at R/N measure what one rank at R does; and two ranks sustain a rate one
client cannot (one request in flight each), which the scaleout section says; two ranks replay a
trace once between them.

The server batches with a delay, so one request in flight takes about that delay whatever the
machine: the single client is the bottleneck, not the CPU. Every rate comes from a closed-loop probe
run here, never a fixed number.

Usage: scaleout_load_test.py INFERMARK MODELS_DIR LLAMA_SERVER
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

from serve_support import llama_server, metric_values, start_server, stop_server
import unittest_main

INFERMARK, MODELS, LLAMA_SERVER = sys.argv[1], sys.argv[2], sys.argv[3]
TINY = os.path.join(MODELS, "tiny_cnn.onnx")
LLAMA = os.path.join(MODELS, "llama-tiny.gguf")
MPIRUN = os.environ.get("MPIEXEC", "mpirun")


def load(ranks, *args, expect_code=0):
    """Runs `infermark load ARGS` (under `mpirun -np RANKS`, or alone when RANKS is 0); returns the one
    result it wrote and the finished process."""
    out = tempfile.mkdtemp(prefix="scaleout-load-")
    launcher = [MPIRUN, "-np", str(ranks)] if ranks else []
    done = subprocess.run([*launcher, INFERMARK, "load", *args, "--out", out], capture_output=True, text=True, timeout=120)
    if expect_code is not None and done.returncode != expect_code:
        raise AssertionError(f"infermark load {' '.join(args)} on {ranks} ranks exited {done.returncode}:\n"
                             f"{done.stdout}\n{done.stderr}")
    files = glob.glob(os.path.join(out, "*", "*.json"))
    if len(files) != 1:
        raise AssertionError(f"expected one result, got {files}:\n{done.stdout}\n{done.stderr}")
    with open(files[0]) as f:
        return json.load(f), done


class ScaleoutLoadKServe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A 10 ms batching window: a lone request waits it out, so one client with one request in
        # flight completes about 100 per second on any machine.
        cls.server, cls.address = start_server(INFERMARK, ["--model", TINY, "-b", "onnxruntime", "--port", "0", "--no-grpc",
                                                           "--max-batch", "8", "--batch-delay-us", "10000",
                                                           "--out", tempfile.mkdtemp()])
        cls.url = f"http://{cls.address}"
        probe, _ = load(0, cls.url, "--model", "tiny_cnn", "--runs", "60", "--warmup", "3")
        cls.one_client_qps = probe["throughput"]["queries_per_s"]

    @classmethod
    def tearDownClass(cls):
        stop_server(cls.server)

    def served(self):
        """Requests the server counted as answered, over every model and variant (it serves one)."""
        return sum(metric_values(self.address, "nv_inference_request_success").values())

    def server_run(self, ranks, qps, *extra, expect_code=0):
        return load(ranks, self.url, "--model", "tiny_cnn", "--scenario", "server", "--qps", f"{qps:.1f}", "--duration", "3",
                    "--warmup", "3", *extra, expect_code=expect_code)

    def test_two_ranks_merge_into_one_result_counted_as_the_server_counts(self):
        rate = 0.5 * self.one_client_qps
        before = self.served()
        merged, done = self.server_run(2, rate)
        self.assertEqual(merged["status"], "ok", merged.get("error"))
        scaleout = merged["scaleout"]
        self.assertEqual(scaleout["ranks"], 2)
        self.assertTrue(scaleout["valid"])
        ranks = scaleout["per_rank"]
        self.assertEqual([r["rank"] for r in ranks], [0, 1])
        self.assertEqual(sum(r["completed"] for r in ranks), merged["latency_ms"]["count"])
        self.assertEqual(merged["phases"][0]["completed"], merged["latency_ms"]["count"])
        self.assertEqual(sum(r["errors"] for r in ranks), merged["remote"]["errors"]["total"])
        for r in ranks:
            self.assertAlmostEqual(r["share"]["qps"], rate / 2, delta=0.1)
            self.assertFalse(r["fell_behind"], r)
            self.assertGreater(r["completed"], 0)
        self.assertNotEqual(ranks[0]["seed"], ranks[1]["seed"])
        self.assertAlmostEqual(merged["phases"][0]["target_qps"], rate, delta=0.2)
        # The server saw every measured request and each rank's 3 warm-up requests.
        self.assertEqual(self.served() - before, merged["latency_ms"]["count"] + 2 * 3)
        # Only rank 0 prints the cell line.
        self.assertEqual(done.stdout.count("-> "), 1, done.stdout)

    def test_ranks_at_a_share_measure_what_one_rank_at_the_whole_rate_does(self):
        rate = 0.5 * self.one_client_qps
        alone, _ = self.server_run(0, rate)
        split, _ = self.server_run(2, rate)
        for result in (alone, split):
            self.assertEqual(result["status"], "ok", result.get("error"))
        p50_alone, p50_split = alone["latency_ms"]["percentiles"]["p50"]["value"], split["latency_ms"]["percentiles"]["p50"]["value"]
        self.assertLess(max(p50_alone, p50_split) / min(p50_alone, p50_split), 2.0, (p50_alone, p50_split))

    def test_two_ranks_sustain_a_rate_one_client_cannot(self):
        # One request in flight per client: one client completes at most one_client_qps.
        rate = 1.3 * self.one_client_qps
        one, _ = self.server_run(1, rate, "--concurrency", "1", "--arrivals", "constant", expect_code=1)
        self.assertEqual(one["status"], "failed")
        self.assertIn("fell behind", one["error"])
        self.assertTrue(one["scaleout"]["per_rank"][0]["fell_behind"], one["scaleout"])
        self.assertFalse(one["scaleout"]["valid"])
        two, _ = self.server_run(2, rate, "--concurrency", "1", "--arrivals", "constant")
        self.assertEqual(two["status"], "ok", two.get("error"))
        self.assertEqual([r["fell_behind"] for r in two["scaleout"]["per_rank"]], [False, False], two["scaleout"])

    def test_what_cannot_be_split_is_refused_before_any_load(self):
        _, done = load_refused(2, self.url, "--model", "tiny_cnn", "--scenario", "single-stream")
        self.assertIn("--scenario concurrency", done.stderr)
        _, done = load_refused(2, self.url, "--model", "tiny_cnn", "--scenario", "server", "--find-max-qps", "--p99-ms", "50")
        self.assertIn("--find-max-qps", done.stderr)


def load_refused(ranks, *args):
    out = tempfile.mkdtemp(prefix="scaleout-refused-")
    done = subprocess.run([MPIRUN, "-np", str(ranks), INFERMARK, "load", *args, "--out", out], capture_output=True, text=True,
                          timeout=60)
    if done.returncode == 0:
        raise AssertionError(f"infermark load {' '.join(args)} was not refused:\n{done.stdout}")
    if glob.glob(os.path.join(out, "*", "*.json")):
        raise AssertionError("a refused run wrote a result")
    return None, done


class ScaleoutLoadLlamaServer(unittest.TestCase):
    def test_two_ranks_stream_from_llama_server_and_merge(self):
        with llama_server(LLAMA_SERVER, LLAMA, "--metrics") as address:
            def predicted():
                return metric_values(address, "llamacpp:tokens_predicted_total").get("llamacpp:tokens_predicted_total", 0)

            before = predicted()
            merged, _ = load(2, f"http://{address}", "--protocol", "openai", "--model", "llama-tiny", "--scenario", "server",
                             "--qps", "4", "--duration", "2", "--warmup", "1", "--prompt-tokens", "16", "--output-tokens",
                             "8", "--body-field", 'grammar="root ::= [a-z ]+"')
            self.assertEqual(merged["status"], "ok", merged.get("error"))
            ranks = merged["scaleout"]["per_rank"]
            completed = merged["latency_ms"]["count"]
            self.assertEqual(sum(r["completed"] for r in ranks), completed)
            self.assertEqual(merged["generation"]["requests"], completed)
            self.assertEqual(merged["generation"]["output_tokens"]["total"], completed * 8)
            # The server predicted every measured request's 8 tokens and each rank's warm-up request's.
            self.assertEqual(predicted() - before, (completed + 2) * 8)

    def test_two_ranks_replay_a_trace_once_between_them(self):
        """A Mooncake trace of 9 requests over two ranks: rank 0 sends requests 0, 2, .., 8 and rank 1
        the others, each with its recorded lengths; the server predicts exactly the trace's tokens."""
        outputs = [3, 5, 4, 6, 2, 7, 3, 5, 4]
        trace = os.path.join(tempfile.mkdtemp(prefix="scaleout-trace-"), "trace.jsonl")
        with open(trace, "w") as f:
            for k, out in enumerate(outputs):
                f.write(json.dumps({"timestamp": 120 * k, "input_length": 10 + k, "output_length": out, "hash_ids": []}) + "\n")
        with llama_server(LLAMA_SERVER, LLAMA, "--metrics") as address:
            def predicted():
                return metric_values(address, "llamacpp:tokens_predicted_total").get("llamacpp:tokens_predicted_total", 0)

            before = predicted()
            merged, _ = load(2, f"http://{address}", "--protocol", "openai", "--model", "llama-tiny", "--scenario", "replay",
                             "--trace", trace, "--warmup", "0", "--body-field", 'grammar="root ::= [a-z ]+"')
            self.assertEqual(merged["status"], "ok", merged.get("error"))
            self.assertEqual([r["completed"] for r in merged["scaleout"]["per_rank"]], [5, 4])
            self.assertEqual(merged["generation"]["requests"], len(outputs))
            self.assertEqual(merged["generation"]["output_tokens"]["total"], sum(outputs))
            self.assertEqual(predicted() - before, sum(outputs))
            _, done = load_refused(2, f"http://{address}", "--protocol", "openai", "--model", "llama-tiny", "--scenario",
                                   "replay", "--trace", trace, "--trace-requests", "1")
            self.assertIn("1 requests, fewer than the 2 ranks", done.stderr)


if __name__ == "__main__":
    unittest_main.main(verbosity=1)
