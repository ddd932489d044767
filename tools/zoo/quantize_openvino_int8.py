"""Quantise an OpenVINO IR to INT8 with NNCF post-training quantisation.

Usage: quantize_openvino_int8.py FP32.xml OUT.xml CALIBRATION.npz MODEL_TYPE [IGNORED_OP ...]
CALIBRATION.npz holds the calibration feeds as "<index>/<input name>" arrays; MODEL_TYPE is
"transformer" for attention models (NNCF then keeps the sensitive parts in higher precision);
IGNORED_OP names OpenVINO operations NNCF leaves in float (its ignored_scope).
Runs as its own process because it hides torch: this NNCF version expects a newer torch than
Debian's and only needs its OpenVINO backend here.
"""
import sys

sys.modules["torch"] = None  # importlib then reports torch as absent, and NNCF skips its torch backend

import numpy as np  # noqa: E402
import nncf  # noqa: E402
import openvino as ov  # noqa: E402


def main() -> None:
    source, target, calibration, model_type = sys.argv[1:5]
    ignored = sys.argv[5:]
    arrays = np.load(calibration)
    feeds = {}
    for key in arrays.files:
        index, name = key.split("/", 1)
        feeds.setdefault(int(index), {})[name] = arrays[key]
    dataset = [feeds[i] for i in sorted(feeds)]
    model = ov.Core().read_model(source)
    input_names = {n for i in model.inputs for n in i.names}
    dataset = [{k: v for k, v in feed.items() if k in input_names} for feed in dataset]
    options = {"model_type": nncf.ModelType.TRANSFORMER} if model_type == "transformer" else {}
    if ignored:  # strict: a name that matches no operation is an error, not a silent full INT8
        options["ignored_scope"] = nncf.IgnoredScope(names=ignored, validate=True)
    quantized = nncf.quantize(model, nncf.Dataset(dataset), subset_size=len(dataset), **options)
    ov.save_model(quantized, target)


if __name__ == "__main__":
    main()
