"""Helpers shared by the Python end-to-end tests of `infermark serve`: start and stop the server,
plain HTTP with urllib, KServe v2 JSON bodies, /metrics parsing, bounded waits."""

import contextlib
import json
import os
import re
import select
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

LISTENING = re.compile(r"listening on http://([0-9.]+):(\d+)")
GRPC_LISTENING = re.compile(r"gRPC \(KServe v2\) on ([0-9.]+):(\d+)")


def start_server(infermark, args, timeout=120, env=None, launcher=()):
    """Runs `infermark serve ARGS` (in `env`, default this process's environment; behind `launcher`,
    e.g. a command that enters a network namespace) and waits at most `timeout` seconds for its
    listening line. Returns (process, "host:port"); the process's stdout stays open for the caller
    to read. gRPC listens on any free port unless ARGS choose."""
    process, address, _ = start_grpc_server(infermark, args, timeout, env, launcher)
    return process, address


def start_grpc_server(infermark, args, timeout=120, env=None, launcher=()):
    """As start_server; returns (process, HTTP "host:port", gRPC "host:port" or None when off)."""
    if not {"--grpc-port", "--no-grpc"} & set(args):
        args = [*args, "--grpc-port", "0"]  # never the fixed default: tests and other servers run side by side
    process = subprocess.Popen([*launcher, infermark, "serve", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=env)
    deadline = time.monotonic() + timeout
    output = b""
    fd = process.stdout.fileno()
    while time.monotonic() < deadline:
        readable, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not readable:
            break
        chunk = os.read(fd, 4096)
        if not chunk:  # the server exited
            break
        output += chunk
        text = output.decode(errors="replace")
        found = LISTENING.search(text)
        if found:  # the gRPC line, when there is one, comes before it
            grpc = GRPC_LISTENING.search(text)
            return process, f"{found.group(1)}:{found.group(2)}", grpc and f"{grpc.group(1)}:{grpc.group(2)}"
    try:  # its output ended: it is exiting
        exited = process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        exited = None
    process.kill()
    process.wait()
    process.stdout.close()
    why = f"exited with code {exited}" if exited is not None else f"did not listen within {timeout} s"
    raise RuntimeError(f"infermark serve {' '.join(args)} {why}:\n{output.decode(errors='replace')}")


def stop_server(process, timeout=60):
    """SIGTERM (the graceful drain), then SIGKILL if it outlives `timeout`. Returns the exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout and not process.stdout.closed:
        process.stdout.close()
    return process.returncode


def http(address, method, path, body=None, headers=None, timeout=60):
    """(status, headers, body); status 0 when nothing answered."""
    request = urllib.request.Request(f"http://{address}{path}", data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError) as error:  # no server: status 0
        return 0, {}, str(error).encode()


def infer_body(array, name="input", datatype="FP32"):
    """A KServe v2 JSON inference request with one input; `array` is anything with .shape and .flatten()."""
    return json.dumps({"inputs": [{"name": name, "shape": list(array.shape), "datatype": datatype,
                                   "data": array.flatten().tolist()}]}).encode()


def output_of(body, name):
    """The output `name` of a KServe v2 JSON inference response, as a numpy array of its shape."""
    import numpy as np  # only the tests that decode outputs need numpy
    output = next(o for o in json.loads(body)["outputs"] if o["name"] == name)
    return np.array(output["data"], dtype=np.float32).reshape(output["shape"])


def parse_metrics(text):
    """{series with labels: value} from a Prometheus text exposition."""
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            values[series] = float(value)
    return values


def metric_values(address, name):
    """{series: value} of one metric name in the server's /metrics."""
    _, _, text = http(address, "GET", "/metrics")
    return {series: value for series, value in parse_metrics(text.decode()).items()
            if series == name or series.startswith(name + "{")}


def metric_total(address, name):
    """The sum of every series of one metric name in the server's /metrics (0 when it has none)."""
    return sum(metric_values(address, name).values())


def sample_names(text):
    """The names of every sample in an exposition (histograms as NAME_bucket, NAME_sum, NAME_count)."""
    return {series.split("{", 1)[0] for series in parse_metrics(text)}


@contextlib.contextmanager
def llama_server(binary, model, *extra, context=1024, slots=2):
    """llama.cpp's llama-server serving `model` on a free loopback port (`-c context -np slots`
    and `extra` flags), ready; yields its HOST:PORT and stops it afterwards."""
    port = free_port()
    server = subprocess.Popen([binary, "-m", model, "--port", str(port), "-c", str(context), "-np", str(slots), *extra],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        address = f"127.0.0.1:{port}"
        wait_until(lambda: http(address, "GET", "/health")[0] == 200, 60, "llama-server ready")
        yield address
    finally:
        server.terminate()
        server.wait(timeout=30)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, timeout, what, interval=0.25):
    """Polls `check` until it returns something truthy; raises AssertionError naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"{what}: not after {timeout} s (last: {last!r})")
