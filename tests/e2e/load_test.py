"""`infermark load` against real servers on loopback: `infermark serve` (KServe v2 HTTP with binary
and JSON tensors, and the OpenAI API with a GGUF model) and llama.cpp's own llama-server (OpenAI
API, streamed). Counts are cross-checked against the servers' own metrics; a server that dies
mid-run leaves a result with its errors counted by kind.

Usage: load_test.py INFERMARK MODELS_DIR LLAMA_SERVER
"""

import glob
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from serve_support import (free_port, llama_server, metric_values, start_grpc_server, start_server,
                           stop_server)
import unittest_main

INFERMARK, MODELS, LLAMA_SERVER = sys.argv[1], sys.argv[2], sys.argv[3]
TINY = os.path.join(MODELS, "tiny_cnn.onnx")
LLAMA = os.path.join(MODELS, "llama-tiny.gguf")


def read_json(path):
    with open(path) as f:
        return json.load(f)


def load(*args, expect_code=0):
    """Runs `infermark load ARGS`; returns the results it wrote (one per concurrency level)."""
    out = tempfile.mkdtemp(prefix="load-test-")
    done = subprocess.run([INFERMARK, "load", *args, "--out", out], capture_output=True, text=True, timeout=300)
    if expect_code is not None and done.returncode != expect_code:
        raise AssertionError(f"infermark load {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    files = sorted(glob.glob(os.path.join(out, "*", "*.json")))
    return [read_json(f) for f in files], done


class LoadKServe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server, cls.address = start_server(INFERMARK, ["--model", TINY, "-b", "onnxruntime", "--port", "0",
                                                           "--io-threads", "2", "--out", tempfile.mkdtemp()])
        cls.url = f"http://{cls.address}"

    @classmethod
    def tearDownClass(cls):
        stop_server(cls.server)

    def served(self):
        cell = 'nv_inference_request_success{model="tiny_cnn",variant="onnxruntime",version="1"}'
        return metric_values(self.address, "nv_inference_request_success").get(cell, 0)

    def test_closed_loop_binary_and_json_tensors_match_the_servers_count(self):
        before = self.served()
        (binary,), _ = load(self.url, "--model", "tiny_cnn", "--runs", "300", "--warmup", "5", "--concurrency", "4")
        (as_json,), _ = load(self.url, "--model", "tiny_cnn", "--runs", "50", "--warmup", "5", "--tensors", "json")
        for result, runs in ((binary, 300), (as_json, 50)):
            self.assertEqual(result["status"], "ok", result.get("error"))
            self.assertEqual(result["backend"]["name"], "remote")
            self.assertEqual(result["backend"]["framework"], "infermark")
            self.assertEqual(result["latency_ms"]["count"], runs)
            self.assertEqual(result["remote"]["errors"]["total"], 0)
            self.assertEqual(result["remote"]["server"]["name"], "infermark")
            self.assertEqual([t["name"] for t in result["model"]["inputs"]], ["input"])
        # infermark serve lists binary_tensor_data in GET /v2, so auto picks the extension.
        self.assertEqual(binary["remote"]["tensors"], "binary tensor extension (the server lists binary_tensor_data)")
        self.assertIn("binary_tensor_data", binary["remote"]["server"]["extensions"])
        self.assertEqual(as_json["remote"]["tensors"], "JSON (--tensors json)")
        self.assertEqual(binary["scenario"]["name"], "concurrency")
        # Every request the client counted (warm-up included) is one the server served.
        self.assertEqual(self.served() - before, 300 + 5 + 50 + 5)
        # Keep-alive: four clients needed about four connections, not one per request.
        self.assertLessEqual(binary["remote"]["connections_opened"], 8)

    def test_report_puts_the_remote_cell_beside_an_in_process_one(self):
        out = tempfile.mkdtemp(prefix="load-report-")
        for command in ([INFERMARK, "load", self.url, "--model", "tiny_cnn", "--runs", "50", "--out", out],
                        [INFERMARK, "run", TINY, "-b", "onnxruntime", "--runs", "50", "--out", out]):
            subprocess.run(command, check=True, capture_output=True, timeout=300)
        report = subprocess.run([INFERMARK, "report", out, "--md"], check=True, capture_output=True, text=True).stdout
        table = next(p for p in report.split("## tiny_cnn", 1)[1].split("\n\n") if p.startswith("|"))  # the model's first table
        self.assertIn("| remote infermark ", table)
        self.assertIn("| onnxruntime ", table)

    def test_a_study_sweeps_a_server_beside_an_in_process_backend(self):
        work = tempfile.mkdtemp(prefix="load-study-")
        study = os.path.join(work, "served.yaml")
        with open(study, "w") as f:
            f.write(f"""name: served
models: [{TINY}]
backends: [onnxruntime]
servers:
  - {{url: "{self.url}", protocol: kserve, model: tiny_cnn}}
base: {{runs: 30, warmup: 3, scenario: concurrency}}
axes:
  concurrency: [1, 2]
""")
        done = subprocess.run([INFERMARK, "sweep", study, "--out", work], capture_output=True, text=True, timeout=600)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        folder = os.path.join(work, "study-served")
        results = {os.path.basename(p): read_json(p) for p in glob.glob(os.path.join(folder, "*.json"))}
        remote = {name: r for name, r in results.items() if name.startswith("tiny_cnn.remote-kserve-")}
        self.assertEqual(len(remote), 2, sorted(results))
        for result in remote.values():
            self.assertEqual(result["status"], "ok", result.get("error"))
            self.assertEqual(result["backend"]["name"], "remote")
            self.assertEqual(result["latency_ms"]["count"], 30)
        self.assertEqual(sorted(r["scenario"]["parameters"]["concurrency"] for r in remote.values()), [1, 2])
        with open(os.path.join(folder, "summary.md")) as f:
            summary = f.read()
        self.assertIn("remote infermark", summary)
        self.assertIn("onnxruntime", summary)
        # A rerun resumes: every cell is already ok.
        again = subprocess.run([INFERMARK, "sweep", study, "--out", work], capture_output=True, text=True, timeout=600)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)

    def test_open_loop_ramp_and_pulse_run_against_the_server(self):
        (server,), _ = load(self.url, "--model", "tiny_cnn", "--scenario", "server", "--qps", "200", "--duration", "2",
                            "--arrivals", "constant", "--scrape", self.url + "/metrics", "--scrape-interval-s", "0.5")
        self.assertEqual(server["status"], "ok", server.get("error"))
        phase = server["phases"][0]
        self.assertEqual(phase["issued"], 400)
        self.assertEqual(server["latency_ms"]["count"] + server["remote"]["errors"]["total"], 400)
        # The server's own counters, sampled from its /metrics over the measurement, saw the same requests.
        scrape = server["remote"]["scrape"]
        self.assertEqual(scrape["failures"], 0)
        self.assertGreaterEqual(scrape["scrapes"], 4)
        self.assertEqual(scrape["kserve_split"]["requests"], server["latency_ms"]["count"])
        self.assertGreater(scrape["kserve_split"]["compute_us_per_request"], 0)
        (ramp,), _ = load(self.url, "--model", "tiny_cnn", "--scenario", "ramp", "--ramp-by", "rate", "--ramp-step", "100",
                          "--ramp-steps", "2", "--step-duration", "1")
        self.assertEqual(ramp["status"], "ok", ramp.get("error"))
        self.assertEqual(len(ramp["phases"]), 2)
        (pulse,), _ = load(self.url, "--model", "tiny_cnn", "--scenario", "pulse", "--capacity-probe", "1",
                           "--pulse-times", "1,1,1", "--concurrency", "2")
        self.assertEqual(pulse["status"], "ok", pulse.get("error"))
        self.assertIn("pulse", pulse["analysis"])

    def test_bad_model_and_unreachable_server_are_clear_errors(self):
        (missing,), done = load(self.url, "--model", "nosuch", expect_code=1)
        self.assertEqual(missing["status"], "failed")
        self.assertIn("unknown model 'nosuch'", missing["error"])
        self.assertIn("/v2/models/nosuch", missing["error"])
        (refused,), _ = load(f"http://127.0.0.1:{free_port()}", "--model", "tiny_cnn", expect_code=1)
        self.assertIn("Connection refused", refused["error"])
        _, done = load("ftp://example", "--model", "m", expect_code=2)
        self.assertIn("is not an http:// URL", done.stderr)


class LoadKServeGrpc(unittest.TestCase):
    def test_grpc_requests_match_the_servers_count(self):
        server, address, grpc_address = start_grpc_server(INFERMARK, ["--model", TINY, "-b", "onnxruntime", "--port", "0",
                                                                      "--out", tempfile.mkdtemp()])
        try:
            (result,), _ = load(grpc_address, "--protocol", "kserve-grpc", "--model", "tiny_cnn", "--runs", "200",
                                "--warmup", "5", "--concurrency", "4")
            self.assertEqual(result["status"], "ok", result.get("error"))
            self.assertEqual(result["latency_ms"]["count"], 200)
            self.assertEqual(result["remote"]["tensors"], "raw_input_contents")
            served = metric_values(address, "nv_inference_request_success")
            self.assertEqual(sum(served.values()), 205)
            (missing,), _ = load(grpc_address, "--protocol", "kserve-grpc", "--model", "nosuch", expect_code=1)
            self.assertIn("ModelMetadata 'nosuch'", missing["error"])
        finally:
            stop_server(server)


class LoadWhenTheServerDies(unittest.TestCase):
    def test_a_server_killed_mid_run_leaves_a_result_with_errors_by_kind(self):
        server, address = start_server(INFERMARK, ["--model", TINY, "-b", "onnxruntime", "--port", "0",
                                                   "--out", tempfile.mkdtemp()])
        out = tempfile.mkdtemp(prefix="load-test-")
        client = subprocess.Popen([INFERMARK, "load", f"http://{address}", "--model", "tiny_cnn", "--scenario", "server",
                                   "--qps", "100", "--duration", "4", "--timeout-s", "2", "--out", out],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(2)
        server.kill()
        server.wait()
        server.stdout.close()
        output, _ = client.communicate(timeout=120)
        self.assertIn(client.returncode, (0, 1), output)
        (result,) = [read_json(f) for f in glob.glob(os.path.join(out, "*", "*.json"))]
        errors = result["remote"]["errors"]
        self.assertGreater(errors["total"], 0, output)
        self.assertGreater(errors["transport"].get("connect", 0) + errors["transport"].get("read", 0), 0, errors)
        self.assertGreater(result["latency_ms"]["count"], 0)  # what was measured before the server died is kept
        self.assertEqual(result["phases"][0]["issued"], result["latency_ms"]["count"] + errors["total"])


    def test_a_server_that_stops_answering_mid_run_gives_timeouts_and_the_run_still_ends(self):
        server, address = start_server(INFERMARK, ["--model", TINY, "-b", "onnxruntime", "--port", "0",
                                                   "--out", tempfile.mkdtemp()])
        out = tempfile.mkdtemp(prefix="load-test-")
        try:
            client = subprocess.Popen([INFERMARK, "load", f"http://{address}", "--model", "tiny_cnn", "--scenario",
                                       "server", "--qps", "50", "--duration", "4", "--timeout-s", "1", "--out", out],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            time.sleep(2)
            server.send_signal(signal.SIGSTOP)  # alive, connections open, nothing answered: a hung server
            output, _ = client.communicate(timeout=120)
        finally:
            server.send_signal(signal.SIGCONT)
            stop_server(server)
        self.assertIn(client.returncode, (0, 1), output)
        (result,) = [read_json(f) for f in glob.glob(os.path.join(out, "*", "*.json"))]
        errors = result["remote"]["errors"]
        self.assertGreater(errors["transport"].get("timeout", 0), 0, errors)
        self.assertGreater(result["latency_ms"]["count"], 0)  # what was answered before the server hung is kept
        self.assertEqual(result["phases"][0]["issued"], result["latency_ms"]["count"] + errors["total"])


    def test_a_full_disk_loses_the_file_not_the_figures(self):
        server, address = start_server(INFERMARK, ["--model", TINY, "-b", "onnxruntime", "--port", "0",
                                                   "--out", tempfile.mkdtemp()])
        out = tempfile.mkdtemp(prefix="load-test-")
        try:
            # A 4 KiB file size limit stands in for a full disk: no result file fits.
            ended = subprocess.run([INFERMARK, "load", f"http://{address}", "--model", "tiny_cnn", "--runs", "50",
                                    "--concurrency", "1,2", "--out", out], capture_output=True, text=True, timeout=120,
                                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)))
        finally:
            stop_server(server)
        self.assertEqual(ended.returncode, 1, ended.stdout + ended.stderr)
        self.assertEqual(ended.stdout.count("NOT SAVED"), 2, ended.stdout)  # both levels ran and were printed
        self.assertIn("P99", ended.stdout)
        self.assertIn("result file not written: File too large", ended.stderr)
        self.assertNotIn("internal error", ended.stderr)


class LoadOpenAi(unittest.TestCase):
    def check_generation(self, result, requests):
        self.assertEqual(result["status"], "ok", result.get("error"))
        generation = result["generation"]
        self.assertEqual(generation["requests"], requests)
        self.assertEqual(generation["ttft_ms"]["count"], requests)
        self.assertGreater(generation["tpot_ms"]["count"], 0)
        self.assertEqual(generation["output_tokens"]["total"], requests * 8)  # ignore_eos: every request makes 8
        self.assertGreater(result["remote"]["token_counts"]["from_server_usage"], 0)

    def test_streaming_chat_against_infermark_serve(self):
        server, address = start_server(INFERMARK, ["--model", LLAMA, "-b", "llamacpp", "--port", "0",
                                                   "--out", tempfile.mkdtemp()])
        try:
            (result,), _ = load(f"http://{address}", "--protocol", "openai", "--model", "llama-tiny", "--runs", "12",
                                "--warmup", "2", "--concurrency", "3", "--prompt-tokens", "16", "--output-tokens", "8")
            self.check_generation(result, 12)
            (whole,), _ = load(f"http://{address}", "--protocol", "openai", "--model", "llama-tiny", "--runs", "4",
                               "--warmup", "1", "--endpoint", "completions", "--no-stream", "--prompt-tokens", "16",
                               "--output-tokens", "8")
            self.assertEqual(whole["status"], "ok", whole.get("error"))
            self.assertEqual(whole["generation"]["output_tokens"]["total"], 4 * 8)
        finally:
            stop_server(server)

    def test_llama_server_streams_and_its_error_events_are_counted(self):
        with llama_server(LLAMA_SERVER, LLAMA, "--metrics") as address:
            url = f"http://{address}"
            # A grammar keeps the random-weight model's output to valid text.
            (result,), _ = load(url, "--protocol", "openai", "--model", "llama-tiny", "--runs", "10", "--warmup", "2",
                                "--concurrency", "2", "--prompt-tokens", "16", "--output-tokens", "8",
                                "--body-field", 'grammar="root ::= [a-z ]+"')
            self.check_generation(result, 10)
            self.assertEqual(result["backend"]["framework"], "llama.cpp")
            # Without it, llama-server rejects invalid UTF-8 inside the 200 stream: counted, never a crash.
            results, _ = load(url, "--protocol", "openai", "--model", "llama-tiny", "--runs", "10", "--warmup", "0",
                              "--prompt-tokens", "16", "--output-tokens", "8", expect_code=None)
            errors = results[0]["remote"]["errors"]
            self.assertEqual(errors["total"], errors["in_stream"] + sum(errors["http_status"].values()), errors)
            self.assertEqual((results[0].get("generation") or {}).get("requests", 0) + errors["total"], 10)
            # Ramp (by rate) and pulse against llama-server: every phase streamed, TTFT/TPOT per step.
            grammar = ["--body-field", 'grammar="root ::= [a-z ]+"', "--prompt-tokens", "16", "--output-tokens", "8"]
            (ramp,), _ = load(url, "--protocol", "openai", "--model", "llama-tiny", "--scenario", "ramp", "--ramp-by",
                              "rate", "--ramp-step", "4", "--ramp-steps", "2", "--step-duration", "1", *grammar)
            self.assertEqual(ramp["status"], "ok", ramp.get("error"))
            self.assertEqual(len(ramp["phases"]), 2)
            self.assertTrue(all("ttft_p99_ms" in step for step in ramp["analysis"]["steps"]), ramp["analysis"])
            (pulse,), _ = load(url, "--protocol", "openai", "--model", "llama-tiny", "--scenario", "pulse",
                               "--capacity-probe", "1", "--pulse-times", "1,1,1", "--concurrency", "2", *grammar)
            self.assertEqual(pulse["status"], "ok", pulse.get("error"))
            self.assertIn("pulse", pulse["analysis"])
            self.assertEqual(pulse["remote"]["errors"]["total"], 0, pulse["remote"]["errors"])

    def check_shared_prefix(self, result, requests, groups, prefix):
        self.assertEqual(result["status"], "ok", result.get("error"))
        shared = result["generation"]["shared_prefix"]
        self.assertEqual((shared["groups"], shared["prefix_tokens"]), (groups, prefix))
        self.assertEqual(shared["warm_requests"] + shared["cold_requests"], requests)
        self.assertLessEqual(shared["cold_requests"], groups)  # at most the first request of each prefix
        self.assertEqual(shared["ttft_warm_ms"]["count"], shared["warm_requests"])
        self.assertAlmostEqual(shared["warm_share"], shared["warm_requests"] / requests)
        asked = result["scenario"]["parameters"]
        self.assertEqual((asked["shared_prefix_groups"], asked["shared_prefix_tokens"]), (groups, prefix))
        return shared

    def test_infermark_serve_prefix_cache_skips_the_prefill_of_warm_prefixes(self):
        server, address = start_server(INFERMARK, ["--model", LLAMA, "-b", "llamacpp", "--port", "0", "--slots", "2",
                                                   "--ctx", "1024", "--opt", "prefix_cache=on", "--out", tempfile.mkdtemp()])
        try:
            # One request at a time: each warm request's prefix was prefilled by an earlier, finished one.
            (result,), _ = load(f"http://{address}", "--protocol", "openai", "--model", "llama-tiny", "--runs", "12",
                                "--warmup", "0", "--concurrency", "1", "--shared-prefix", "3:48", "--prompt-tokens", "16",
                                "--output-tokens", "8")
            shared = self.check_shared_prefix(result, 12, 3, 48)
            [reused] = metric_values(address, "infermark_prompt_tokens_reused_total").values()
            [prompted] = metric_values(address, "infermark_prompt_tokens_total").values()
            # Three prefixes on two slots: the third is kept by the store beyond the slots. Each warm
            # request skipped at least its 48 words' tokens; the cold ones and every prompt's own
            # words were prefilled.
            self.assertGreaterEqual(reused, 48 * shared["warm_requests"])
            self.assertLess(reused, prompted)
        finally:
            stop_server(server)

    def test_shared_prefix_in_process_and_against_llama_server_in_one_report(self):
        out = tempfile.mkdtemp(prefix="load-shared-prefix-")
        workload = ["--shared-prefix", "2:48", "--prompt-tokens", "16", "--output-tokens", "8", "--runs", "12",
                    "--warmup", "0"]
        subprocess.run([INFERMARK, "run", LLAMA, "-b", "llamacpp", *workload, "--out", out], check=True,
                       capture_output=True, timeout=300)
        [in_process] = [read_json(f) for f in glob.glob(os.path.join(out, "*", "*.json"))]
        self.check_shared_prefix(in_process, 12, 2, 48)
        self.assertEqual(in_process["generation"]["prompt_tokens"]["total"], 12 * (48 + 16))  # prefix + own tokens
        with llama_server(LLAMA_SERVER, LLAMA, "--metrics") as address:
            subprocess.run([INFERMARK, "load", f"http://{address}", "--protocol", "openai", "--model", "llama-tiny",
                            *workload, "--body-field", 'grammar="root ::= [a-z ]+"', "--out", out], check=True,
                           capture_output=True, timeout=300)
            [remote] = [r for r in map(read_json, glob.glob(os.path.join(out, "*", "*.json"))) if r["backend"]["name"] == "remote"]
            self.check_shared_prefix(remote, 12, 2, 48)
            # The prefix went out as the system message: the server counted more than the prefix's 48 words.
            self.assertGreater(remote["generation"]["prompt_tokens"]["mean"], 48)
        report = subprocess.run([INFERMARK, "report", out, "--md"], check=True, capture_output=True, text=True).stdout
        self.assertIn("warm prefix", report)
        self.assertIn("2x48+16+8", report)
        self.assertIn("TTFT P50 warm/cold ms", report)


if __name__ == "__main__":
    unittest_main.main(verbosity=1)
