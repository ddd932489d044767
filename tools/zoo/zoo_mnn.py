"""MNN files from a component's FP32 ONNX file: MNN's own converter (PyPI MNN 3.6.1's `_tools`
module, called directly: the package's `mnnconvert` script imports a logging module that runs
`pip install` and uploads statistics) writes <stem>.mnn with FP32 weights, and the conversion is
kept only if MNN itself (PyPI's module, Precision_High) agrees with ONNX Runtime on the
component's evaluation inputs. MNN keeps the ONNX tensor names.
"""
import importlib.metadata
import pathlib
import subprocess
import sys

import numpy as np

from zoo_conversion import checked_record


def convert(onnx_file: pathlib.Path, target: pathlib.Path) -> pathlib.Path:
    """<stem>.mnn, converted by MNN's converter in a child process (it prints a lot)."""
    arguments = ["mnnconvert", "-f", "ONNX", "--modelFile", str(onnx_file), "--MNNModel", str(target), "--bizCode", "infermark"]
    # Its return value is no status (it returns 1 on success too): the output and the file are.
    done = subprocess.run([sys.executable, "-c", f"import _tools; _tools.mnnconvert({arguments!r})"],
                          capture_output=True, text=True)
    if done.returncode != 0 or "Converted Success" not in done.stdout or not target.exists():
        raise SystemExit(f"MNN's converter failed on {onnx_file.name} (exit {done.returncode}): "
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return target


def run_mnn(model: pathlib.Path, feeds: list, output_names: list) -> list:
    """Each feed's outputs from MNN's CPU backend at Precision_High (fp32), in the ONNX layout."""
    import MNN

    interpreter = MNN.Interpreter(str(model))
    session = interpreter.createSession({"backend": "CPU", "precision": "high", "numThread": 2})
    runs = []
    for feed in feeds:
        for name, value in feed.items():
            tensor = interpreter.getSessionInput(session, name)
            interpreter.resizeTensor(tensor, tuple(value.shape))
        interpreter.resizeSession(session)
        for name, value in feed.items():
            tensor = interpreter.getSessionInput(session, name)
            host = MNN.Tensor(tuple(value.shape), MNN.Halide_Type_Float, np.ascontiguousarray(value, dtype=np.float32),
                              MNN.Tensor_DimensionType_Caffe)
            tensor.copyFrom(host)
        interpreter.runSession(session)
        outputs = []
        for name in output_names:
            tensor = interpreter.getSessionOutput(session, name)
            host = MNN.Tensor(tensor.getShape(), MNN.Halide_Type_Float,
                              np.zeros(tensor.getShape(), dtype=np.float32), MNN.Tensor_DimensionType_Caffe)
            tensor.copyToHostTensor(host)
            outputs.append(np.array(host.getData(), dtype=np.float32).reshape(tensor.getShape()))
        runs.append(outputs)
    return runs


def checked_conversion(onnx_file: pathlib.Path, target: pathlib.Path, inputs: list, outputs: list, feeds: list,
                       reference_runs: list, score) -> dict:
    """Converts, runs MNN on `feeds`, and returns the manifest's record of the check against ONNX
    Runtime's `reference_runs` (zoo_conversion.checked_record). `inputs` is unused: MNN's
    converter reads the shapes from the ONNX file (zoo_ncnn's takes the same arguments)."""
    convert(onnx_file, target)
    runs = run_mnn(target, feeds, [o[0] for o in outputs])
    version = importlib.metadata.version("MNN")
    return checked_record(target, "MNN", score(reference_runs, runs), f"MNN {version} converter (PyPI MNN, _tools.mnnconvert -f ONNX)",
                          f"MNN {version} (PyPI module, CPU, Precision_High)", len(feeds))
