"""Real KServe v2 servers as peers of `infermark load` and `infermark serve`, each serving one ONNX
model through ONNX Runtime from its own venv under third_party/ (scripts/setup): Triton 2.51 (the
`tritonserver` PyTriton bundles, Python backend), MLServer and KServe's ModelServer. Each launcher
script (tools/peers/*_onnx_server.py) prints `listening on http://...` once its model is ready.
"""

import os
import signal
import subprocess
import tempfile

from serve_support import free_port, http, wait_until

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# kind -> (venv under third_party/, launcher under tools/peers/)
PEERS = {
    "triton": ("pytriton-venv", "pytriton_onnx_server.py"),
    "mlserver": ("mlserver-venv", "mlserver_onnx_server.py"),
    "kserve": ("kserve-venv", "kserve_onnx_server.py"),
}


class Peer:
    """A running peer: its HTTP and gRPC addresses (host:port), its metrics URL, the command."""

    def __init__(self, kind, process, http_address, grpc_address, metrics_url, command, log_path, log_file):
        self.kind, self.process, self.command, self.log_path, self.log_file = kind, process, command, log_path, log_file
        self.http_address, self.grpc_address, self.metrics_url = http_address, grpc_address, metrics_url

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self, timeout=30):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log_file.close()


def peer_venv(third_party, kind):
    return os.path.join(third_party, PEERS[kind][0])


def start_peer(kind, venv, model, timeout=180):
    """Starts `kind` from `venv` (peer_venv()) serving `model` (an .onnx file; its stem names it) on
    free loopback ports and waits until the model is ready. Raises with the server's log when it
    does not come up."""
    python = os.path.join(venv, "bin", "python")
    name = os.path.splitext(os.path.basename(model))[0]
    http_port, grpc_port, metrics_port = free_port(), free_port(), free_port()
    command = [python, os.path.join(ROOT, "tools", "peers", PEERS[kind][1]), model, "--http-port", str(http_port),
               "--grpc-port", str(grpc_port), "--threads", "1"]
    if kind != "kserve":  # KServe serves /metrics on its HTTP port
        command += ["--metrics-port", str(metrics_port)]
    environment = dict(os.environ)
    if kind == "triton":
        # The Python backend's stub embeds libpython: let it find the venv interpreter's own library first.
        libdir = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('LIBDIR'))"],
                                capture_output=True, text=True, check=True).stdout.strip()
        environment["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [libdir, environment.get("LD_LIBRARY_PATH")]))
    log_path = tempfile.mkstemp(prefix=f"{kind}-", suffix=".log")[1]
    log_file = open(log_path, "w")
    process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, env=environment)
    http_address = f"127.0.0.1:{http_port}"
    metrics = f"http://127.0.0.1:{http_port if kind == 'kserve' else metrics_port}/metrics"
    peer = Peer(kind, process, http_address, f"127.0.0.1:{grpc_port}", metrics, command, log_path, log_file)

    def ready():
        if process.poll() is not None:
            raise RuntimeError(f"{kind} exited with code {process.returncode}:\n{peer.log()[-3000:]}")
        return "listening on" in peer.log() and http(http_address, "GET", f"/v2/models/{name}/ready")[0] == 200
    try:
        wait_until(ready, timeout, f"{kind} ready")
    except BaseException:
        peer.stop()
        raise
    return peer
