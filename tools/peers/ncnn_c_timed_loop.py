"""Peer for infermark's ncnn numbers on the same library: a plain timed loop over ncnn's C API
(c_api.h) in third_party/ncnn/install/lib/libncnn.so through ctypes, with the options infermark's
ncnn backend sets (fp32: every fp16/bf16 option off; num_threads; no Vulkan), the input Mat made
once, and each timed run one extractor made, fed and extracted, as ncnn's own benchncnn times it.
Prints {"p50_ms", "mean_ms", "runs", "version"} as JSON.

  .venv/bin/python tools/peers/ncnn_c_timed_loop.py MODEL.ncnn.param INPUT.npy [--threads 2] [--warmup 10] [--runs 200]
"""
import argparse
import ctypes
import json
import pathlib
import statistics
import time

import numpy as np

LIBRARY = pathlib.Path(__file__).resolve().parents[2] / "third_party/ncnn/install/lib/libncnn.so"


def declare(lib):
    p = ctypes.c_void_p
    for name, argtypes, restype in [
            ("ncnn_version", [], ctypes.c_char_p), ("ncnn_option_create", [], p),
            ("ncnn_option_set_num_threads", [p, ctypes.c_int], None),
            ("ncnn_option_set_use_vulkan_compute", [p, ctypes.c_int], None),
            ("ncnn_option_set_use_fp16_packed", [p, ctypes.c_int], None),
            ("ncnn_option_set_use_fp16_storage", [p, ctypes.c_int], None),
            ("ncnn_option_set_use_fp16_arithmetic", [p, ctypes.c_int], None),
            ("ncnn_option_set_use_bf16_storage", [p, ctypes.c_int], None),
            ("ncnn_net_create", [], p), ("ncnn_net_set_option", [p, p], None),
            ("ncnn_net_load_param", [p, ctypes.c_char_p], ctypes.c_int),
            ("ncnn_net_load_model", [p, ctypes.c_char_p], ctypes.c_int),
            ("ncnn_mat_create_3d", [ctypes.c_int, ctypes.c_int, ctypes.c_int, p], p),
            ("ncnn_mat_get_channel_data", [p, ctypes.c_int], p), ("ncnn_mat_destroy", [p], None),
            ("ncnn_extractor_create", [p], p), ("ncnn_extractor_destroy", [p], None),
            ("ncnn_extractor_input", [p, ctypes.c_char_p, p], ctypes.c_int),
            ("ncnn_extractor_extract", [p, ctypes.c_char_p, ctypes.POINTER(p)], ctypes.c_int)]:
        function = getattr(lib, name)
        function.argtypes, function.restype = argtypes, restype


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=pathlib.Path)
    parser.add_argument("input", type=pathlib.Path, help="a [1, C, H, W] float32 .npy")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--library", default=str(LIBRARY))
    args = parser.parse_args()

    lib = ctypes.CDLL(args.library)
    declare(lib)
    opt = lib.ncnn_option_create()
    lib.ncnn_option_set_num_threads(opt, args.threads)
    lib.ncnn_option_set_use_vulkan_compute(opt, 0)
    for setter in (lib.ncnn_option_set_use_fp16_packed, lib.ncnn_option_set_use_fp16_storage,
                   lib.ncnn_option_set_use_fp16_arithmetic, lib.ncnn_option_set_use_bf16_storage):
        setter(opt, 0)
    net = lib.ncnn_net_create()
    lib.ncnn_net_set_option(net, opt)
    weights = args.model.with_name(args.model.name[: -len(".param")] + ".bin")
    if lib.ncnn_net_load_param(net, str(args.model).encode()) or lib.ncnn_net_load_model(net, str(weights).encode()):
        raise SystemExit(f"{args.model}: ncnn cannot load it")
    value = np.load(args.input).astype(np.float32)
    if value.ndim != 4 or value.shape[0] != 1:
        raise SystemExit(f"{args.input}: shape {value.shape}, expected [1, C, H, W]")
    _, channels, height, width = value.shape
    mat = lib.ncnn_mat_create_3d(width, height, channels, None)
    for q in range(channels):  # channel by channel: a Mat's channels are 16-byte aligned
        ctypes.memmove(lib.ncnn_mat_get_channel_data(mat, q), value[0, q].ctypes.data, width * height * 4)

    def once() -> float:
        started = time.perf_counter()
        extractor = lib.ncnn_extractor_create(net)
        lib.ncnn_extractor_input(extractor, b"in0", mat)
        out = ctypes.c_void_p()
        if lib.ncnn_extractor_extract(extractor, b"out0", ctypes.byref(out)) != 0:
            raise SystemExit("ncnn could not extract out0")
        elapsed = time.perf_counter() - started
        lib.ncnn_mat_destroy(out)
        lib.ncnn_extractor_destroy(extractor)
        return elapsed * 1e3

    for _ in range(args.warmup):
        once()
    times = [once() for _ in range(args.runs)]
    print(json.dumps({"p50_ms": statistics.median(times), "mean_ms": statistics.fmean(times), "runs": len(times),
                      "version": lib.ncnn_version().decode()}))


if __name__ == "__main__":
    main()
