"""Triton Inference Server (bundled with PyTriton) serving one ONNX model through a Python callable
that calls ONNX Runtime: the peer `tools/peers/triton_vs_serve.py` stands beside `infermark serve`.

Runs in third_party/pytriton-venv (`scripts/setup`). No dynamic batching (one
request per ONNX Runtime call), one model instance, ONNX Runtime with 1 intra-op thread: the same as
`infermark serve -b onnxruntime --threads 1` without --max-batch. Prints `listening on
http://127.0.0.1:PORT` once the model is ready, then serves until SIGTERM or SIGINT.

The statistics and model-repository endpoints, which PyTriton restricts by default, are open:
perf_analyzer reads them.

Usage: pytriton_onnx_server.py MODEL.onnx --http-port P --grpc-port P --metrics-port P [--threads N]
"""

import argparse
import os
import signal
import sys
import threading

import numpy as np
import onnxruntime
from pytriton.model_config import ModelConfig, Tensor
from pytriton.triton import Triton, TritonConfig, TritonSecurityConfig

from onnx_session import open_session

NUMPY_TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64,
               "tensor(int32)": np.int32, "tensor(uint8)": np.uint8, "tensor(int8)": np.int8,
               "tensor(float16)": np.float16, "tensor(bool)": np.bool_}


def tensor(arg):
    shape = tuple(d if isinstance(d, int) and d > 0 else -1 for d in arg.shape)
    return Tensor(name=arg.name, dtype=NUMPY_TYPES[arg.type], shape=shape)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, required=True)
    parser.add_argument("--metrics-port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    args = parser.parse_args()

    session = open_session(args.model, args.threads)
    input_names = [i.name for i in session.get_inputs()]
    output_names = [o.name for o in session.get_outputs()]

    def infer(requests):
        return [dict(zip(output_names, session.run(output_names, {n: request[n] for n in input_names})))
                for request in requests]

    name = os.path.splitext(os.path.basename(args.model))[0]
    config = TritonConfig(http_address="127.0.0.1", http_port=args.http_port, grpc_address="127.0.0.1",
                          grpc_port=args.grpc_port, metrics_port=args.metrics_port, allow_gpu_metrics=False)
    security = TritonSecurityConfig(restricted_endpoints=[])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with Triton(config=config, security_config=security) as triton:
        triton.bind(model_name=name, infer_func=infer, inputs=[tensor(i) for i in session.get_inputs()],
                    outputs=[tensor(o) for o in session.get_outputs()], config=ModelConfig(batching=False),
                    strict=True)
        triton.run()  # returns once the model is loaded and ready
        print(f"onnxruntime {onnxruntime.__version__}, model '{name}' ready", flush=True)
        print(f"listening on http://127.0.0.1:{args.http_port}", flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
