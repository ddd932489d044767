"""LLM engines side by side on one pretrained model: SmolLM2-135M as llama.cpp's F16 GGUF and as
ONNX Runtime GenAI's FP32 and INT4 folders from the same weights (`infermark zoo build
smollm2-135m-genai`, which the fixture test zoo_build_smollm2_genai runs first).

- one `infermark run` of the three files: every cell ok, one table, each result names the
  batching that ran (llama.cpp continuous, ONNX Runtime GenAI one sequence at a time) and gives
  exactly the output tokens asked for;
- the same weights score the same text alike: ONNX Runtime GenAI FP32's perplexity on real
  English within 2 % of llama.cpp F16's (each engine tokenises the text with its own tokenizer of
  the same vocabulary), and INT4's finite;
- `infermark serve` routes one model between the three engines by X-Model-Variant, and the official
  openai client gets a completion and a chat answer of the asked length from each; four requests
  at once to OpenVINO all get the same greedy text;
- bad input: a GGUF given to ortgenai, a folder without its tokenizer, and a prompt longer than
  the context each fail their own cell with the file or the cause named, while the other cell of
  the same run is measured.

OpenVINO (`infermark zoo build smollm2-135m-ov`, fixture zoo_build_smollm2_ov): its FP16 and INT4
folders run beside the GGUF with every cell ok, threads read back, FP16's perplexity within 2 % of
llama.cpp F16's on the same tokenisation, and a folder without its tokenizer IR failing its cell.

Usage: llm_engines_test.py INFERMARK MODELS_DIR
"""

import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import openai

from serve_support import start_server, stop_server
import unittest_main

INFERMARK, MODELS = sys.argv[1], sys.argv[2]
GGUF = os.path.join(MODELS, "smollm2-135m.gguf")
FP32 = os.path.join(MODELS, "smollm2-135m_fp32.genai")
INT4 = os.path.join(MODELS, "smollm2-135m_int4.genai")
OV_FP16 = os.path.join(MODELS, "smollm2-135m_fp16.ov")
OV_INT4 = os.path.join(MODELS, "smollm2-135m_int4.ov")
TEXT_SOURCE = "/usr/share/common-licenses/GPL-3"  # Debian base-files
SHORT = ["--threads", "2", "--prompt-tokens", "16", "--output-tokens", "8", "--runs", "3", "--warmup", "1"]


def run(*args, expect_ok=True, env=None):
    out = tempfile.mkdtemp(prefix="llm-engines-")
    done = subprocess.run([INFERMARK, "run", *args, "--out", out], capture_output=True, text=True, timeout=600, env=env)
    if expect_ok and done.returncode != 0:
        raise AssertionError(f"infermark run exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    results = {}  # (model folder or file name, backend, concurrency) -> result
    for path in glob.glob(os.path.join(out, "**", "*.json"), recursive=True):
        with open(path) as f:
            result = json.load(f)
        if "backend" in result and "model" in result:
            concurrency = (result.get("generation") or {}).get("concurrency", 1)
            results[(os.path.basename(result["model"]["path"].rstrip("/")), result["backend"]["name"], concurrency)] = result
    shutil.rmtree(out, ignore_errors=True)
    return done, results


@unittest.skipUnless(os.path.isdir(OV_FP16) and os.path.isdir(OV_INT4) and os.path.isfile(GGUF),
                     "smollm2-135m GGUF and .ov folders not built (infermark zoo build smollm2-135m smollm2-135m-ov)")
class OpenVinoBesideLlamaCpp(unittest.TestCase):
    def test_one_run_with_the_gguf(self):
        done, results = run(GGUF, OV_FP16, OV_INT4, *SHORT, "--concurrency", "1,2")
        self.assertEqual(len(results), 6, sorted(results))
        self.assertIn("ovllm", done.stdout)
        for (model, backend, concurrency), r in results.items():
            with self.subTest(model=model, concurrency=concurrency):
                self.assertEqual(r["status"], "ok", r.get("error"))
                self.assertEqual(r["generation"]["output_tokens"]["mean"], 8)
                self.assertEqual(backend, "llamacpp" if model.endswith(".gguf") else "ovllm")
                if backend != "ovllm":
                    continue
                self.assertTrue(r["scenario"]["parameters"]["batching"].startswith("none"))
                settings = {s["key"]: s for s in r["settings"]["effective"]}
                self.assertEqual(settings["intra_op_threads"]["effective"], "2")
                self.assertEqual(settings["intra_op_threads"]["state"], "verified")
                self.assertEqual(settings["precision"]["effective"], model.split("_")[-1].removesuffix(".ov"))
                self.assertEqual(settings["sequence_slots"]["effective"], str(concurrency))

    @unittest.skipUnless(os.path.isfile(TEXT_SOURCE), f"{TEXT_SOURCE} missing (Debian base-files)")
    def test_same_weights_same_perplexity(self):
        with open(TEXT_SOURCE) as f:
            text = f.read()[:6000]
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(text)
        _, results = run(GGUF, OV_FP16, OV_INT4, "--threads", "2", "--prompt-tokens", "8", "--output-tokens", "2",
                         "--runs", "1", "--warmup", "0", "--perplexity-text", f.name, "--perplexity-window", "256")
        os.unlink(f.name)
        ppl = {model: r["generation"]["perplexity"]["perplexity"] for (model, _, _), r in results.items()}
        tokens = {model: r["generation"]["perplexity"]["tokens_scored"] for (model, _, _), r in results.items()}
        reference = ppl["smollm2-135m.gguf"]
        self.assertEqual(tokens["smollm2-135m.gguf"], tokens["smollm2-135m_fp16.ov"])  # the same tokenisation
        self.assertLess(abs(ppl["smollm2-135m_fp16.ov"] - reference) / reference, 0.02, ppl)
        self.assertTrue(1 < ppl["smollm2-135m_int4.ov"] < 10 * reference, ppl)

    def test_folder_without_its_tokenizer_fails_its_cell(self):
        broken = tempfile.mkdtemp(suffix=".ov")
        for name in os.listdir(OV_INT4):
            if name != "openvino_tokenizer.xml":
                os.symlink(os.path.abspath(os.path.join(OV_INT4, name)), os.path.join(broken, name))
        done, results = run(OV_INT4, broken, *SHORT, expect_ok=False)
        shutil.rmtree(broken)
        self.assertNotEqual(done.returncode, 0)
        by_model = {model: r for (model, _, _), r in results.items()}
        self.assertEqual(by_model["smollm2-135m_int4.ov"]["status"], "ok")
        self.assertIn("openvino_tokenizer.xml", by_model[os.path.basename(broken)]["error"])


@unittest.skipUnless(os.path.isdir(FP32) and os.path.isdir(INT4) and os.path.isfile(GGUF),
                     "smollm2-135m GGUF and .genai folders not built (infermark zoo build smollm2-135m smollm2-135m-genai)")
class EnginesSideBySide(unittest.TestCase):
    def test_one_run_three_variants_two_engines(self):
        done, results = run(GGUF, FP32, INT4, *SHORT, "--concurrency", "1,2")
        self.assertEqual(len(results), 6, sorted(results))  # 3 files x 2 concurrency levels
        self.assertIn("ortgenai", done.stdout)
        self.assertIn("llamacpp", done.stdout)
        for (model, backend, _), r in results.items():
            with self.subTest(model=model, backend=backend):
                self.assertEqual(r["status"], "ok", r.get("error"))
                g = r["generation"]
                self.assertEqual(g["output_tokens"]["mean"], 8)  # exactly what was asked, end tokens or not
                self.assertGreater(g["output_tokens_per_s"], 0)
                self.assertGreater(g["ttft_ms"]["mean"], 0)
                batching = r["scenario"]["parameters"]["batching"]
                expected = "continuous" if backend == "llamacpp" else "none"
                self.assertTrue(batching.startswith(expected), batching)
                self.assertEqual(backend, "llamacpp" if model.endswith(".gguf") else "ortgenai")
        # Every GenAI cell counts the pool it asked for, whatever the environment says of telemetry
        # (infermark turns GenAI's telemetry threads off; CI's environment did so already).
        for (model, backend, concurrency), r in results.items():
            if backend != "ortgenai":
                continue
            with self.subTest(model=model, concurrency=concurrency):
                settings = {s["key"]: s for s in r["settings"]["effective"]}
                self.assertEqual(settings["intra_op_threads"]["effective"], "2", settings["intra_op_threads"])
                self.assertEqual(settings["intra_op_threads"]["state"], "verified")
                self.assertEqual(settings["device"]["state"], "verified")
                self.assertEqual(settings["architecture"]["effective"], "llama")

    def test_thread_count_does_not_depend_on_the_environment(self):
        # GenAI starts telemetry threads at a first load unless the environment looks like CI; a
        # count that moved with it was once 2 threads here and 1 in CI for the same --threads 2.
        looks_like_ci = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "TF_BUILD")}
        looks_like_ci["GITHUB_ACTIONS"] = "true"
        plain = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "TF_BUILD", "ORT_DISABLE_TELEMETRY")}
        for name, env in (("ci", looks_like_ci), ("plain", plain)):
            with self.subTest(environment=name):
                _, results = run(FP32, *SHORT, env=env)
                (r,) = results.values()
                threads = {s["key"]: s for s in r["settings"]["effective"]}["intra_op_threads"]
                self.assertEqual((threads["effective"], threads["state"]), ("2", "verified"), threads)

    @unittest.skipUnless(os.path.isfile(TEXT_SOURCE), f"{TEXT_SOURCE} missing (Debian base-files)")
    def test_same_weights_same_perplexity(self):
        with open(TEXT_SOURCE) as f:
            text = f.read(3000)
        fd, text_file = tempfile.mkstemp(suffix=".txt")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        _, results = run(GGUF, FP32, INT4, "--threads", "2", "--prompt-tokens", "8", "--output-tokens", "2", "--runs", "1",
                         "--warmup", "0", "--perplexity-text", text_file, "--perplexity-window", "256")
        ppl = {model: r["generation"]["perplexity"]["perplexity"] for (model, _, _), r in results.items()}
        tokens = {model: r["generation"]["perplexity"]["tokens_scored"] for (model, _, _), r in results.items()}
        reference, fp32, int4 = ppl["smollm2-135m.gguf"], ppl["smollm2-135m_fp32.genai"], ppl["smollm2-135m_int4.genai"]
        self.assertEqual(tokens["smollm2-135m.gguf"], tokens["smollm2-135m_fp32.genai"])  # the same tokenisation
        self.assertLess(abs(fp32 - reference) / reference, 0.02, ppl)
        self.assertTrue(1 < int4 < 10 * reference, ppl)

    def test_bad_inputs_fail_their_own_cell(self):
        broken = tempfile.mkdtemp(suffix=".genai")
        for name in os.listdir(INT4):
            if name != "tokenizer.json":
                os.symlink(os.path.abspath(os.path.join(INT4, name)), os.path.join(broken, name))
        done, results = run(INT4, broken, *SHORT, expect_ok=False)
        self.assertNotEqual(done.returncode, 0)
        by_model = {model: r for (model, _, _), r in results.items()}
        self.assertEqual(by_model["smollm2-135m_int4.genai"]["status"], "ok")
        self.assertIn("tokenizer.json", by_model[os.path.basename(broken)]["error"])

        done, _ = run(GGUF, "-b", "ortgenai", *SHORT, expect_ok=False)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("smollm2-135m.gguf", done.stdout + done.stderr)

        done, results = run(INT4, *SHORT[:2], "--prompt-tokens", "64", "--output-tokens", "8", "--runs", "1",
                            "--opt", "ctx=32", expect_ok=False)
        self.assertNotEqual(done.returncode, 0)
        (r,) = results.values()
        self.assertIn("longer than the model's context of 32 tokens", r["error"])


@unittest.skipUnless(os.path.isdir(FP32) and os.path.isdir(OV_INT4) and os.path.isfile(GGUF),
                     "smollm2-135m GGUF, FP32 .genai and INT4 .ov folders not built")
class ServedAbBetweenEngines(unittest.TestCase):
    def test_openai_client_reaches_each_engine_by_header(self):
        folder = tempfile.mkdtemp(prefix="serve-engines-")
        config = os.path.join(folder, "models.yaml")
        with open(config, "w") as f:
            f.write(f"""models:
  - name: smollm2
    file: {os.path.abspath(GGUF)}
    variants:
      - {{name: llamacpp-f16, backend: llamacpp, weight: 1, slots: 2, context: 256, threads: 2}}
      - {{name: ortgenai-fp32, backend: ortgenai, model: {os.path.abspath(FP32)}, weight: 1, slots: 2, context: 256, threads: 2}}
      - {{name: ovllm-int4, backend: ovllm, model: {os.path.abspath(OV_INT4)}, weight: 1, slots: 2, context: 256, threads: 2}}
""")
        process, address = start_server(INFERMARK, ["--config", config, "--port", "0", "--out", folder])
        try:
            client = openai.OpenAI(base_url=f"http://{address}/v1", api_key="unused", max_retries=0, timeout=120)
            texts = {}
            for variant in ("llamacpp-f16", "ortgenai-fp32", "ovllm-int4"):
                with self.subTest(variant=variant):
                    raw = client.completions.with_raw_response.create(
                        model="smollm2", prompt="The GNU General Public License is", max_tokens=12, temperature=0,
                        extra_headers={"X-Model-Variant": variant})
                    self.assertEqual(raw.headers.get("X-Model-Variant"), variant)
                    completion = raw.parse()
                    self.assertEqual(completion.usage.completion_tokens, 12)
                    texts[variant] = completion.choices[0].text
                    self.assertRegex(texts[variant], "[a-z]")  # real English, not noise
                    chat = client.chat.completions.with_raw_response.create(
                        model="smollm2", messages=[{"role": "user", "content": "Name a colour."}], max_tokens=8,
                        temperature=0, extra_headers={"X-Model-Variant": variant})
                    self.assertEqual(chat.headers.get("X-Model-Variant"), variant)
                    self.assertGreater(chat.parse().usage.completion_tokens, 0)
            # Requests at once: prompts are tokenized on io threads while the engine detokenizes.
            def complete(_):
                return client.completions.create(model="smollm2", prompt="The GNU General Public License is",
                                                 max_tokens=12, temperature=0, extra_body={"ignore_eos": True},
                                                 extra_headers={"X-Model-Variant": "ovllm-int4"})
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                together = list(pool.map(complete, range(4)))
            self.assertEqual({c.usage.completion_tokens for c in together}, {12})
            self.assertEqual({c.choices[0].text for c in together}, {texts["ovllm-int4"]})  # greedy: one text
            print(f"greedy continuations: {texts}", file=sys.stderr)
        finally:
            self.assertEqual(stop_server(process), 0)


if __name__ == "__main__":
    unittest_main.main()
