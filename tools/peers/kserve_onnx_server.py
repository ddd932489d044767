"""KServe's Python model server (`kserve.ModelServer`) serving one ONNX model through a `kserve.Model`
that calls ONNX Runtime: a KServe v2 peer of `infermark load --protocol kserve`, beside Triton
(tools/peers/pytriton_onnx_server.py) and MLServer (tools/peers/mlserver_onnx_server.py).

Runs in third_party/kserve-venv (`scripts/setup`). One uvicorn worker (one process), no batching (one
request per ONNX Runtime call), ONNX Runtime with 1 intra-op thread: the same as `infermark serve -b
onnxruntime --threads 1` without --max-batch. The model metadata declares the ONNX session's inputs and
outputs with KServe datatypes and shapes (-1 for a dynamic dimension), so a client can build requests
from `GET /v2/models/NAME` alone. HTTP and gRPC listen on 127.0.0.1 only (KServe binds every address
by default); gRPC is off without --grpc-port; Prometheus metrics are on the HTTP port (`GET /metrics`).
Prints `listening on http://127.0.0.1:PORT` once the model is ready, then serves until SIGTERM or
SIGINT.

Usage: kserve_onnx_server.py MODEL.onnx --http-port P [--grpc-port P] [--threads N] [--name NAME]
"""

import argparse
import os
import sys
import threading
import time
import types


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, default=0, help="default: no gRPC")
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--name", help="model name (default: the file's stem)")
    return parser.parse_args()


# kserve.model_server parses sys.argv with its own flags when imported: parse ours first, then hide them.
ARGS = parse_args()
sys.argv = sys.argv[:1]

import onnxruntime  # noqa: E402
import kserve  # noqa: E402
import kserve.model_server  # noqa: E402
import kserve.protocol.grpc.server  # noqa: E402
from kserve.errors import InvalidInput  # noqa: E402
from kserve.protocol.infer_type import InferOutput, InferRequest, InferResponse  # noqa: E402
from kserve.protocol.rest.server import RESTServer  # noqa: E402
from kserve.utils.utils import generate_uuid  # noqa: E402

from onnx_session import DATATYPES, input_problem, open_session, shape  # noqa: E402


def metadata(arg):
    return {"name": arg.name, "datatype": DATATYPES[arg.type], "shape": shape(arg)}


class OnnxRuntimeModel(kserve.Model):
    def __init__(self, name, path, threads):
        super().__init__(name)
        self.path, self.threads = path, threads

    def load(self) -> bool:
        self.session = open_session(self.path, self.threads)
        self.inputs = {i.name: i for i in self.session.get_inputs()}
        self.output_types = {o.name: DATATYPES[o.type] for o in self.session.get_outputs()}
        self.ready = True
        return self.ready

    # GET /v2/models/NAME and gRPC ModelMetadata take these (kserve.protocol.dataplane.model_metadata).
    def get_input_types(self):
        return [metadata(i) for i in self.session.get_inputs()]

    def get_output_types(self):
        return [metadata(o) for o in self.session.get_outputs()]

    def _decode(self, infer_input):
        problem = input_problem(self.name, self.inputs, infer_input.name, infer_input.datatype, infer_input.shape)
        if problem:
            raise InvalidInput(problem)
        try:
            return infer_input.as_numpy()
        except ValueError as error:
            raise InvalidInput(f"input '{infer_input.name}': {error}") from error

    def predict(self, payload: InferRequest, headers=None) -> InferResponse:
        if not isinstance(payload, InferRequest):
            raise InvalidInput("this model serves the v2 protocol only (POST /v2/models/NAME/infer)")
        feeds = {infer_input.name: self._decode(infer_input) for infer_input in payload.inputs}
        missing = sorted(set(self.inputs) - set(feeds))
        if missing:
            raise InvalidInput(f"model '{self.name}' expects inputs {missing} that the request lacks")
        names = [o.name for o in payload.request_outputs] if payload.request_outputs else list(self.output_types)
        unknown = sorted(set(names) - set(self.output_types))
        if unknown:
            raise InvalidInput(f"unknown outputs {unknown} requested from model '{self.name}'")
        outputs = []
        for name, result in zip(names, self.session.run(names, feeds)):
            output = InferOutput(name=name, shape=list(result.shape), datatype=self.output_types[name])
            output.set_data_from_numpy(result, binary_data=payload.use_binary_outputs)
            outputs.append(output)
        return InferResponse(response_id=payload.id or generate_uuid(), model_name=self.name,
                             infer_outputs=outputs, use_binary_outputs=payload.use_binary_outputs,
                             requested_outputs=payload.request_outputs)


# KServe binds HTTP to 0.0.0.0 and gRPC to [::]; keep both on the loopback interface. The REST server
# subclass also lets main() see when uvicorn is listening.
REST_SERVERS = []


class LoopbackRESTServer(RESTServer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.config.host = "127.0.0.1"
        REST_SERVERS.append(self)


def loopback_grpc_server(*args, **kwargs):
    server = _grpc_aio.server(*args, **kwargs)
    add_insecure_port = server.add_insecure_port
    server.add_insecure_port = lambda address: add_insecure_port(address.replace("[::]", "127.0.0.1", 1))
    return server


_grpc_aio = kserve.protocol.grpc.server.aio
kserve.protocol.grpc.server.aio = types.SimpleNamespace(server=loopback_grpc_server)
kserve.model_server.RESTServer = LoopbackRESTServer


def announce_when_ready(http_port, name):
    while not (REST_SERVERS and REST_SERVERS[0]._server.started):
        time.sleep(0.05)
    print(f"onnxruntime {onnxruntime.__version__}, model '{name}' ready", flush=True)
    print(f"listening on http://127.0.0.1:{http_port}", flush=True)


def main():
    path = os.path.abspath(ARGS.model)
    name = ARGS.name or os.path.splitext(os.path.basename(path))[0]
    model = OnnxRuntimeModel(name, path, ARGS.threads)
    model.load()
    server = kserve.ModelServer(http_port=ARGS.http_port, grpc_port=ARGS.grpc_port or 8081,
                                enable_grpc=bool(ARGS.grpc_port), workers=1, enable_docs_url=False)
    threading.Thread(target=announce_when_ready, args=(ARGS.http_port, name), daemon=True).start()
    try:
        server.start([model])  # returns once SIGTERM/SIGINT has stopped the HTTP and gRPC servers
    except SystemExit as error:  # uvicorn exits 3 when the port is taken
        print(f"kserve_onnx_server: the server stopped with exit status {error.code}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
