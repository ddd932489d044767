"""PyTorch, the field's baseline engine, in the same table as a remote engine: Hugging Face
`transformers serve` (PyTorch eager, OpenAI-compatible; third_party/llm-venv, installed on demand
with the zoo's LLM tools) serving SmolLM2-135M from the zoo's F16 GGUF (transformers reads the
weights, config and tokenizer from the file; nothing is downloaded), measured by
`infermark load --protocol openai`: the cell is ok, every request answered, the output tokens
counted, and the first completion is real English from the same weights. transformers serve
answers 422 to fields it does not know, `ignore_eos` among them, so this peer runs with
`--no-ignore-eos` (a request may stop at the end token before its 8 tokens).

Usage: llm_pytorch_peer_test.py INFERMARK MODELS_DIR LLM_VENV
"""

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

import unittest_main

INFERMARK, MODELS, VENV = sys.argv[1], sys.argv[2], sys.argv[3]
GGUF = os.path.join(MODELS, "smollm2-135m.gguf")
SERVE = os.path.join(VENV, "bin", "transformers")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(os.path.isfile(GGUF), f"{GGUF} not built (scripts/setup builds smollm2-135m)")
@unittest.skipUnless(os.path.isfile(SERVE), f"{SERVE} missing (scripts/install_llm_tools installs it)")
class TransformersServeMeasuredByLoad(unittest.TestCase):
    def test_load_measures_transformers_serve(self):
        port = free_port()
        model = f"{os.path.abspath(MODELS)}:{os.path.basename(GGUF)}"
        log = tempfile.NamedTemporaryFile(prefix="transformers-serve-", suffix=".log", delete=False)
        server = subprocess.Popen([SERVE, "serve", model, "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
                                   "--dtype", "float32"], stdout=log, stderr=subprocess.STDOUT,
                                  env={**os.environ, "HF_HUB_OFFLINE": "1"})
        out = tempfile.mkdtemp(prefix="transformers-serve-load-")
        try:
            deadline = time.monotonic() + 400
            while True:
                self.assertIsNone(server.poll(), open(log.name).read()[-2000:])
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as reply:
                        if b'"loaded"' in reply.read():
                            break
                except OSError:
                    pass
                self.assertLess(time.monotonic(), deadline, "transformers serve did not load the model in 400 s")
                time.sleep(2)
            body = json.dumps({"model": model, "prompt": "The GNU General Public License is", "max_tokens": 8,
                               "temperature": 0}).encode()
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body,
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as reply:
                text = json.loads(reply.read())["choices"][0]["text"]
            self.assertRegex(text, "[a-z]{3}")  # real English from pretrained weights
            done = subprocess.run([INFERMARK, "load", f"http://127.0.0.1:{port}", "--protocol", "openai", "--model", model,
                                   "--concurrency", "1", "--runs", "3", "--warmup", "1", "--prompt-tokens", "16",
                                   "--output-tokens", "8", "--no-ignore-eos", "--out", out], capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            (path,) = glob.glob(os.path.join(out, "*", "*.json"))
            with open(path) as f:
                result = json.load(f)
            self.assertEqual(result["status"], "ok", result.get("error"))
            self.assertEqual(result["origin"], "remote")
            generation = result["generation"]
            self.assertEqual(generation["requests"], 3)
            self.assertGreater(generation["output_tokens"]["total"], 0)
            self.assertGreater(generation["ttft_ms"]["mean"], 0)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    unittest_main.main()
