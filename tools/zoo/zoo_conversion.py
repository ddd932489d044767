"""The check every converted edge format passes (tools/zoo/zoo_ncnn.py, zoo_mnn.py): the
framework's own runtime against ONNX Runtime on the component's evaluation inputs, and the
manifest's record of it (<format>_conversion)."""
import importlib.metadata
import pathlib

# The largest difference of any output from ONNX Runtime's that still counts as the same network.
MAX_ABS_ERROR = 1e-3


def checked_record(target: pathlib.Path, framework: str, figures: list, converter: str, runtime: str, inputs: int) -> dict:
    """The manifest's record of a conversion whose `figures` (zoo_variants.score per output) are
    within MAX_ABS_ERROR and keep every top-1; a conversion that is not ends the build naming it."""
    for figure in figures:
        if figure["max_abs_error"] > MAX_ABS_ERROR or figure.get("top1_agreement", 1.0) < 1.0:
            raise SystemExit(f"{target.name}: {framework}'s {figure['output']} differs from ONNX Runtime's: {figure}")
    return {"converter": converter, "runtime": runtime,
            "reference": f"onnxruntime {importlib.metadata.version('onnxruntime')} on the FP32 ONNX file",
            "inputs": inputs, "max_abs_error_allowed": MAX_ABS_ERROR, "outputs": figures}
