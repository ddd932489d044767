"""Paddle Inference folders from a component's FP32 ONNX file: X2Paddle (PyPI x2paddle 1.6.0, in
third_party/paddle-venv beside PyPI paddlepaddle 3.3.1) converts it to a Paddle program, saved as
an inference model (model.json, a PIR program, and model.pdiparams), which goes into
<stem>.paddle/. The conversion is kept only if Paddle Inference itself (the same wheel, CPU,
oneDNN) agrees with ONNX Runtime on the component's evaluation inputs. X2Paddle renames the
tensors (x2paddle_<input>, fetch_name_<i>); the manifest keeps the ONNX names in the same order.

Both X2Paddle and the check run in paddle-venv (its packages pin versions .venv's exporters do not
share), in child processes; feeds and outputs travel as .npz files.
"""
import json
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np

from zoo_conversion import checked_record

ROOT = pathlib.Path(__file__).resolve().parents[2]
PADDLE_VENV = ROOT / "third_party" / "paddle-venv"
RUN_PADDLE = """
import json, sys, numpy as np, paddle.inference as pi
folder, feeds_file, out_file = sys.argv[1:4]
config = pi.Config(folder + "/model.json", folder + "/model.pdiparams")
config.disable_gpu(); config.enable_mkldnn(); config.set_cpu_math_library_num_threads(2); config.disable_glog_info()
config.delete_pass("operator_reshape_onednn_fuse_pass")  # emits pd_op.fused_transpose, which has no kernel in 3.3.1
predictor = pi.create_predictor(config)
feeds = np.load(feeds_file)
count = int(feeds["count"]); inputs = predictor.get_input_names(); outputs = predictor.get_output_names()
results = {}
for f in range(count):
    for i, name in enumerate(inputs):
        value = feeds[f"{f}_{i}"]
        handle = predictor.get_input_handle(name); handle.reshape(value.shape); handle.copy_from_cpu(value)
    predictor.run()
    for o, name in enumerate(outputs):
        results[f"{f}_{o}"] = predictor.get_output_handle(name).copy_to_cpu()
np.savez(out_file, **results)
print(json.dumps({"version": pi.get_version().split()[1], "inputs": inputs, "outputs": outputs}))
"""


def versions() -> tuple:
    """(paddlepaddle, x2paddle) as installed in paddle-venv."""
    done = subprocess.run([str(PADDLE_VENV / "bin" / "python"), "-c",
                           "import importlib.metadata as m; print(m.version('paddlepaddle'), m.version('x2paddle'))"],
                          capture_output=True, text=True, check=True)
    return tuple(done.stdout.split())


def convert(onnx_file: pathlib.Path, target: pathlib.Path) -> pathlib.Path:
    """<stem>.paddle/ (model.json, model.pdiparams), converted by X2Paddle in a child process."""
    if not (PADDLE_VENV / "bin" / "x2paddle").exists():
        raise SystemExit(f"{PADDLE_VENV / 'bin' / 'x2paddle'} not found: scripts/setup installs Paddle and X2Paddle there")
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        done = subprocess.run([str(PADDLE_VENV / "bin" / "x2paddle"), "--framework=onnx", f"--model={onnx_file}",
                               f"--save_dir={work}"], capture_output=True, text=True)
        saved = pathlib.Path(work) / "inference_model"
        if done.returncode != 0 or not (saved / "model.json").exists():
            raise SystemExit(f"X2Paddle failed on {onnx_file.name} (exit {done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}")
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        for name in ("model.json", "model.pdiparams"):
            shutil.move(str(saved / name), str(target / name))
    return target


def run_paddle(folder: pathlib.Path, feeds: list, input_names: list) -> tuple:
    """Each feed's outputs from Paddle Inference (CPU, oneDNN, FP32), and what it reported."""
    with tempfile.TemporaryDirectory() as work:
        feeds_file, out_file = pathlib.Path(work) / "feeds.npz", pathlib.Path(work) / "outputs.npz"
        arrays = {f"{f}_{i}": np.ascontiguousarray(feed[name]) for f, feed in enumerate(feeds) for i, name in enumerate(input_names)}
        np.savez(feeds_file, count=len(feeds), **arrays)
        done = subprocess.run([str(PADDLE_VENV / "bin" / "python"), "-c", RUN_PADDLE, str(folder), str(feeds_file), str(out_file)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"Paddle Inference could not run {folder.name}: {done.stderr[-2000:]}")
        report = json.loads(done.stdout.strip().splitlines()[-1])
        outputs = np.load(out_file)
        runs = [[outputs[f"{f}_{o}"] for o in range(len(report["outputs"]))] for f in range(len(feeds))]
    return runs, report


def checked_conversion(onnx_file: pathlib.Path, target: pathlib.Path, inputs: list, outputs: list, feeds: list,
                       reference_runs: list, score) -> dict:
    """Converts, runs Paddle Inference on `feeds`, and returns the manifest's record of the check
    against ONNX Runtime's `reference_runs` (zoo_conversion.checked_record)."""
    convert(onnx_file, target)
    runs, report = run_paddle(target, feeds, [i[0] for i in inputs])
    if len(report["outputs"]) != len(outputs):
        raise SystemExit(f"{target.name}: Paddle's program has {len(report['outputs'])} outputs, the ONNX file {len(outputs)}")
    paddle, x2paddle = versions()
    return checked_record(target, "Paddle Inference", score(reference_runs, runs),
                          f"X2Paddle {x2paddle} (PyPI x2paddle, --framework=onnx) on paddlepaddle {paddle}",
                          f"Paddle Inference {report['version']} (PyPI paddlepaddle, CPU, oneDNN, FP32)", len(feeds))
