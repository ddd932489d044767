"""Peer for infermark's tflite numbers on the same library: a plain timed loop over TfLite's C API
in third_party/tflite-c (litert-lm-api's TfLite 2.23.0) through ctypes, with the XNNPACK delegate
and the thread count set as infermark sets them, the input written once. It separates what the
harness adds from what differs between TfLite builds (litert-benchmark runs ai-edge-litert's)."""
import argparse
import ctypes
import json
import pathlib
import time

import numpy as np

LIBRARY = pathlib.Path(__file__).resolve().parents[2] / "third_party/tflite-c/lib/liblitert-lm.so"


class XnnpackOptions(ctypes.Structure):
    """TfLiteXNNPackDelegateOptions of TfLite 2.23.0 (src/backends/tflite/tflite_2_23_declarations.hpp), 64 bytes."""
    _fields_ = [("num_threads", ctypes.c_int32), ("runtime_flags", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("weights_cache", ctypes.c_void_p), ("handle_variable_ops", ctypes.c_bool),
                ("weight_cache_file_path", ctypes.c_char_p), ("weight_cache_file_descriptor", ctypes.c_int),
                ("weight_cache_provider", ctypes.c_void_p), ("weight_cache_lock_memory", ctypes.c_bool)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--library", default=str(LIBRARY), help="TfLite C library (default: runtime=c's)")
    args = parser.parse_args()

    lib = ctypes.CDLL(args.library)
    lib.TfLiteVersion.restype = ctypes.c_char_p
    version = lib.TfLiteVersion().decode()
    if version not in ("2.22.0", "2.23.0"):  # the same TfLiteXNNPackDelegateOptionsDefault() code in both
        raise SystemExit(f"{args.library} reports TfLite {version}; XnnpackOptions matches 2.22.0 and 2.23.0 only")
    for name in ["TfLiteModelCreateFromFile", "TfLiteInterpreterOptionsCreate", "TfLiteXNNPackDelegateCreate",
                 "TfLiteInterpreterCreate", "TfLiteInterpreterGetInputTensor"]:
        getattr(lib, name).restype = ctypes.c_void_p
    lib.TfLiteXNNPackDelegateOptionsDefault.restype = XnnpackOptions
    lib.TfLiteInterpreterOptionsSetNumThreads.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    lib.TfLiteInterpreterOptionsAddDelegate.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.TfLiteInterpreterCreate.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.TfLiteInterpreterAllocateTensors.argtypes = [ctypes.c_void_p]
    lib.TfLiteInterpreterInvoke.argtypes = [ctypes.c_void_p]
    lib.TfLiteInterpreterGetInputTensor.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    lib.TfLiteTensorByteSize.argtypes = [ctypes.c_void_p]
    lib.TfLiteTensorByteSize.restype = ctypes.c_size_t
    lib.TfLiteTensorCopyFromBuffer.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]

    model = lib.TfLiteModelCreateFromFile(args.model.encode())
    options = lib.TfLiteInterpreterOptionsCreate()
    lib.TfLiteInterpreterOptionsSetNumThreads(options, args.threads)
    xnnpack = lib.TfLiteXNNPackDelegateOptionsDefault()
    xnnpack.num_threads = args.threads
    delegate = lib.TfLiteXNNPackDelegateCreate(ctypes.byref(xnnpack))
    lib.TfLiteInterpreterOptionsAddDelegate(options, delegate)
    interpreter = lib.TfLiteInterpreterCreate(model, options)
    if not interpreter or lib.TfLiteInterpreterAllocateTensors(interpreter) != 0:
        raise SystemExit(f"TfLite cannot build an interpreter for {args.model}")
    tensor = lib.TfLiteInterpreterGetInputTensor(interpreter, 0)
    data = np.random.default_rng(42).standard_normal(lib.TfLiteTensorByteSize(tensor) // 4, dtype=np.float32)
    lib.TfLiteTensorCopyFromBuffer(tensor, data.ctypes.data, data.nbytes)

    invoke = lib.TfLiteInterpreterInvoke
    for _ in range(args.warmup):
        invoke(interpreter)
    latencies = []
    for _ in range(args.runs):
        start = time.perf_counter()
        invoke(interpreter)
        latencies.append((time.perf_counter() - start) * 1e3)
    latencies.sort()
    print(json.dumps({"tflite_version": version, "runs": args.runs, "mean_ms": sum(latencies) / len(latencies),
                      "p50_ms": latencies[(len(latencies) + 1) // 2 - 1]}))


if __name__ == "__main__":
    main()
