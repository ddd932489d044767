"""ncnn files from a component's FP32 ONNX file: pnnx (PyPI, a standalone converter; the torch its
package asks for is not needed for ONNX input) writes <stem>.ncnn.param and <stem>.ncnn.bin with
FP32 weights (fp16=0), and the conversion is kept only if ncnn itself (PyPI's ncnn module, its
fp16 options off) agrees with ONNX Runtime on the component's evaluation inputs.

ncnn has no batch axis and no tensor names of its own: pnnx names the blobs in0.. and out0.. in
the ONNX file's order, which infermark's ncnn backend maps back to the manifest's names.
"""
import importlib.metadata
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from zoo_conversion import checked_record

PNNX = pathlib.Path(sys.executable).parent / "pnnx"
NUMPY_TYPES = {"float32": "f32", "int64": "i64", "int32": "i32"}


def input_shapes(inputs: list) -> str:
    """pnnx's inputshape argument, every named (dynamic) dimension at 1: [1,3,224,224]f32,..."""
    shapes = []
    for spec in inputs:
        name, dtype, shape = spec[0], spec[1], spec[2]
        dims = ",".join("1" if isinstance(d, str) else str(d) for d in shape)
        shapes.append(f"[{dims}]{NUMPY_TYPES[dtype]}")
    return ",".join(shapes)


def convert(onnx_file: pathlib.Path, param: pathlib.Path, inputs: list) -> pathlib.Path:
    """<stem>.ncnn.param and .ncnn.bin beside `param`, converted in a scratch folder (pnnx writes
    five more files next to its input)."""
    if not PNNX.exists():
        raise SystemExit(f"{PNNX}: pnnx is not installed (scripts/setup installs it into .venv)")
    with tempfile.TemporaryDirectory(prefix="pnnx-") as scratch:
        work = pathlib.Path(scratch)
        source = work / onnx_file.name
        shutil.copyfile(onnx_file, source)
        done = subprocess.run([str(PNNX), source.name, f"inputshape={input_shapes(inputs)}", "fp16=0"],
                              cwd=work, capture_output=True, text=True)
        written = work / f"{onnx_file.stem}.ncnn.param"
        if done.returncode != 0 or not written.exists():
            raise SystemExit(f"pnnx failed on {onnx_file.name} (exit {done.returncode}): "
                             f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        shutil.move(written, param)
        shutil.move(work / f"{onnx_file.stem}.ncnn.bin", weights_of(param))
    return param


def weights_of(param: pathlib.Path) -> pathlib.Path:
    return param.with_name(param.name[: -len(".param")] + ".bin")


def run_ncnn(param: pathlib.Path, feeds: list, output_count: int) -> list:
    """Each feed's outputs from ncnn (fp32: its fp16 storage and arithmetic off), shaped [1, ...]."""
    import ncnn

    net = ncnn.Net()
    net.opt.use_fp16_packed = net.opt.use_fp16_storage = net.opt.use_fp16_arithmetic = False
    net.opt.use_bf16_storage = False
    if net.load_param(str(param)) != 0 or net.load_model(str(weights_of(param))) != 0:
        raise SystemExit(f"{param}: ncnn cannot load the converted files")
    runs = []
    for feed in feeds:
        extractor = net.create_extractor()
        for i, value in enumerate(feed.values()):
            extractor.input(f"in{i}", ncnn.Mat(np.ascontiguousarray(value[0], dtype=np.float32)).clone())
        outputs = []
        for i in range(output_count):
            rc, mat = extractor.extract(f"out{i}")
            if rc != 0:
                raise SystemExit(f"{param}: ncnn could not extract out{i} ({rc})")
            outputs.append(np.array(mat)[np.newaxis])
        runs.append(outputs)
    return runs


def checked_conversion(onnx_file: pathlib.Path, param: pathlib.Path, inputs: list, outputs: list, feeds: list,
                       reference_runs: list, score) -> dict:
    """Converts, runs ncnn on `feeds`, and returns the manifest's record of the check against ONNX
    Runtime's `reference_runs` (zoo_conversion.checked_record)."""
    convert(onnx_file, param, inputs)
    runs = run_ncnn(param, feeds, len(outputs))
    for run, reference in zip(runs, reference_runs):  # ncnn drops the batch axis of [1, N] outputs
        for i, value in enumerate(run):
            run[i] = value.reshape(reference[i].shape)
    return checked_record(param, "ncnn", score(reference_runs, runs), f"pnnx {importlib.metadata.version('pnnx')} (fp16=0)",
                          f"ncnn {importlib.metadata.version('ncnn')} (PyPI module, fp16 options off)", len(feeds))
