"""MLServer (Seldon) serving one ONNX model through a custom runtime that calls ONNX Runtime: a KServe
v2 peer of `infermark load --protocol kserve`, beside Triton (tools/peers/pytriton_onnx_server.py).

Runs in third_party/mlserver-venv (`scripts/setup`). Started in this process, without `mlserver start`
or settings files: parallel workers 0 (inference in the server's own process, no worker pool), no
adaptive batching (one request per ONNX Runtime call), ONNX Runtime with 1 intra-op thread: the same
as `infermark serve -b onnxruntime --threads 1` without --max-batch. The model metadata declares the
ONNX session's inputs and outputs with KServe datatypes and shapes (-1 for a dynamic dimension), so a
client can build requests from `GET /v2/models/NAME` alone. Prints `listening on
http://127.0.0.1:PORT` once the model is ready, then serves until SIGTERM or SIGINT.

MLServer always serves gRPC (on a free port unless --grpc-port is given); Prometheus metrics are on
--metrics-port (`GET /metrics`) and off without it.

Usage: mlserver_onnx_server.py MODEL.onnx --http-port P [--grpc-port P] [--metrics-port P]
                               [--threads N] [--name NAME]
"""

import argparse
import asyncio
import os
import socket
import sys
import tempfile

import numpy as np
import onnxruntime
from mlserver import MLModel, MLServer
from mlserver.codecs import NumpyCodec
from mlserver.errors import InferenceError
from mlserver.settings import ModelParameters, ModelSettings, Settings
from mlserver.types import InferenceRequest, InferenceResponse, MetadataTensor

from onnx_session import DATATYPES, input_problem, open_session, shape


def metadata(arg):
    return MetadataTensor(name=arg.name, datatype=DATATYPES[arg.type], shape=shape(arg))


class OnnxRuntimeModel(MLModel):
    """The model file is `parameters.uri`, the intra-op thread count `parameters.extra["threads"]`."""

    async def load(self) -> bool:
        parameters = self.settings.parameters
        self._session = open_session(parameters.uri, int(parameters.extra.get("threads", 1)))
        self._inputs = {i.name: i for i in self._session.get_inputs()}
        self._output_names = [o.name for o in self._session.get_outputs()]
        return True

    def _decode(self, request_input):
        problem = input_problem(self.name, self._inputs, request_input.name, request_input.datatype, request_input.shape)
        if problem:
            raise InferenceError(problem)
        try:
            return NumpyCodec.decode_input(request_input)
        except ValueError as error:
            raise InferenceError(f"input '{request_input.name}': {error}") from error

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        feeds = {request_input.name: self._decode(request_input) for request_input in payload.inputs}
        missing = sorted(set(self._inputs) - set(feeds))
        if missing:
            raise InferenceError(f"model '{self.name}' expects inputs {missing} that the request lacks")
        names = [o.name for o in payload.outputs] if payload.outputs else self._output_names
        unknown = sorted(set(names) - set(self._output_names))
        if unknown:
            raise InferenceError(f"unknown outputs {unknown} requested from model '{self.name}'")
        results = self._session.run(names, feeds)
        return InferenceResponse(id=payload.id, model_name=self.name, model_version=self.version,
                                 outputs=[NumpyCodec.encode_output(n, np.ascontiguousarray(r))
                                          for n, r in zip(names, results)])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def announce_when_ready(server, http_port, name):
    # In-process, not over HTTP: another server on the port must not pass for this one.
    while True:
        rest = getattr(server._rest_server, "_server", None)
        if rest is not None and rest.started:
            try:
                if await server._data_plane.model_ready(name):
                    break
            except Exception:  # not registered yet
                pass
        await asyncio.sleep(0.05)
    print(f"onnxruntime {onnxruntime.__version__}, model '{name}' ready", flush=True)
    print(f"listening on http://127.0.0.1:{http_port}", flush=True)


async def serve(settings, model_settings):
    # MLServer installs its SIGTERM/SIGINT handlers on the running loop: start() returns once stopped.
    server = MLServer(settings)
    announce = asyncio.create_task(announce_when_ready(server, settings.http_port, model_settings.name))
    try:
        await server.start([model_settings])
    finally:
        announce.cancel()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, default=0, help="default: a free port")
    parser.add_argument("--metrics-port", type=int, default=0, help="Prometheus /metrics; default: off")
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--name", help="model name (default: the file's stem)")
    args = parser.parse_args()

    path = os.path.abspath(args.model)
    name = args.name or os.path.splitext(os.path.basename(path))[0]
    session = open_session(path, 1)  # only for the metadata; the runtime opens its own in load()
    inputs = [metadata(i) for i in session.get_inputs()]
    outputs = [metadata(o) for o in session.get_outputs()]
    del session

    with tempfile.TemporaryDirectory(prefix="mlserver-") as work:
        settings = Settings(
            host="127.0.0.1", http_port=args.http_port, grpc_port=args.grpc_port or free_port(),
            parallel_workers=0, load_models_at_startup=False, model_repository_root=work,
            metrics_endpoint="/metrics" if args.metrics_port else None, metrics_port=args.metrics_port or 0,
            metrics_dir=os.path.join(work, "metrics"), debug=False)
        model_settings = ModelSettings(
            name=name, implementation=OnnxRuntimeModel, platform="onnxruntime_onnx",
            inputs=inputs, outputs=outputs,
            parameters=ModelParameters(uri=path, extra={"threads": args.threads}))
        try:
            asyncio.run(serve(settings, model_settings))
        except SystemExit as error:  # uvicorn exits 3 when the port is taken
            print(f"mlserver_onnx_server: the server stopped with exit status {error.code}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
