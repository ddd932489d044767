"""SmolLM2-135M (the zoo's pretrained LLM, built by scripts/setup) on real English text:

- `infermark run --perplexity-text` on the first 3000 bytes of the GPL-3 text (Debian base-files'
  /usr/share/common-licenses/GPL-3, present on every Debian system): finite, the same figure as
  llama.cpp's own llama-perplexity at the same window, and far below the perplexity of the same
  words in a shuffled order (no ordering between quantisations is asserted: noise can flip those);
- llama-server serving it answers a completion through the OpenAI API with valid UTF-8 text that
  contains letters, and `infermark load --protocol openai` against it, without a grammar, is ok
  with zero errors.

Usage: llm_real_text_test.py INFERMARK MODELS_DIR LLAMA_BIN_DIR
"""

import glob
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest

from serve_support import free_port, http, wait_until
import unittest_main

INFERMARK, MODELS, LLAMA_BIN = sys.argv[1], sys.argv[2], sys.argv[3]
MODEL = os.path.join(MODELS, "smollm2-135m_q8_0.gguf")
TEXT_SOURCE = "/usr/share/common-licenses/GPL-3"  # Debian base-files
WINDOW = 256


def write_text(text):
    fd, path = tempfile.mkstemp(prefix="ppl-", suffix=".txt")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def run_perplexity(text_file):
    out = tempfile.mkdtemp(prefix="ppl-run-")
    done = subprocess.run([INFERMARK, "run", MODEL, "-b", "llamacpp", "--threads", "2", "--runs", "1", "--warmup", "0",
                           "--prompt-tokens", "8", "--output-tokens", "4", "--perplexity-text", text_file,
                           "--perplexity-window", str(WINDOW), "--out", out], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"infermark run exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    (path,) = glob.glob(os.path.join(out, "*", "*.llamacpp.*.json"))
    with open(path) as f:
        return json.load(f)["generation"]["perplexity"], done.stdout


@unittest.skipUnless(os.path.isfile(MODEL), f"{MODEL} not built (scripts/setup builds smollm2-135m)")
@unittest.skipUnless(os.path.isfile(TEXT_SOURCE), f"{TEXT_SOURCE} missing (Debian base-files)")
class Perplexity(unittest.TestCase):
    def test_real_text_matches_llama_perplexity_and_beats_shuffled_words(self):
        with open(TEXT_SOURCE) as f:
            text = f.read(3000)
        real_file = write_text(text)
        real, table = run_perplexity(real_file)
        self.assertIn("perplexity", table)  # the LLM table's column
        self.assertEqual(real["window"], WINDOW)
        self.assertGreaterEqual(real["windows"], 2)
        self.assertEqual(real["tokens_scored"], real["windows"] * (WINDOW // 2 - 1))
        self.assertEqual(real["source"], real_file)
        # Measured 17.5 (llama-perplexity on these 3000 characters; 20.8-26.2 over the whole text from
        # F16 to Q4_0, docs/llm.md); the same words shuffled score 379.
        self.assertTrue(10 < real["perplexity"] < 30, real)

        # llama.cpp's own tool at the same window: the same windows, the same scored halves.
        done = subprocess.run([os.path.join(LLAMA_BIN, "llama-perplexity"), "-m", MODEL, "-f", real_file, "-c", str(WINDOW),
                               "-b", str(WINDOW), "-t", "2"], capture_output=True, text=True, timeout=300)
        figures = re.findall(r"\[\d+\]([0-9.]+),", done.stdout + done.stderr)  # running estimate after each chunk
        self.assertEqual(len(figures), real["windows"], done.stderr[-2000:])
        self.assertAlmostEqual(float(figures[-1]) / real["perplexity"], 1.0, delta=0.01)

        words = text.split()
        random.Random(7).shuffle(words)
        shuffled, _ = run_perplexity(write_text(" ".join(words)))
        self.assertGreater(shuffled["perplexity"], 10 * real["perplexity"], (real, shuffled))  # 379 against 17.5


@unittest.skipUnless(os.path.isfile(MODEL), f"{MODEL} not built (scripts/setup builds smollm2-135m)")
class LlamaServerText(unittest.TestCase):
    def test_completion_is_valid_text_and_load_has_no_errors(self):
        port = free_port()
        server = subprocess.Popen([os.path.join(LLAMA_BIN, "llama-server"), "-m", MODEL, "--port", str(port), "-c", "1024",
                                   "-np", "2", "-t", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            address = f"127.0.0.1:{port}"
            wait_until(lambda: http(address, "GET", "/health")[0] == 200, 60, "llama-server ready")
            body = json.dumps({"model": "smollm2-135m", "prompt": "The capital of France is", "max_tokens": 16,
                               "temperature": 0}).encode()
            status, _, answer = http(address, "POST", "/v1/completions", body, {"Content-Type": "application/json"})
            self.assertEqual(status, 200, answer)
            text = json.loads(answer.decode("utf-8", errors="strict"))["choices"][0]["text"]
            text.encode("utf-8", errors="strict")  # no lone surrogates from broken escapes either
            self.assertTrue(any(c.isalpha() for c in text), repr(text))

            out = tempfile.mkdtemp(prefix="load-smollm2-")
            done = subprocess.run([INFERMARK, "load", f"http://{address}", "--protocol", "openai", "--model", "smollm2-135m",
                                   "--runs", "4", "--warmup", "0", "--concurrency", "2", "--prompt-tokens", "16",
                                   "--output-tokens", "8", "--out", out], capture_output=True, text=True, timeout=300)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            (path,) = glob.glob(os.path.join(out, "*", "*.json"))
            with open(path) as f:
                result = json.load(f)
            self.assertEqual(result["status"], "ok", result.get("error"))
            self.assertEqual(result["remote"]["errors"]["total"], 0, result["remote"]["errors"])
            self.assertEqual(result["generation"]["requests"], 4)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    unittest_main.main(verbosity=1)
