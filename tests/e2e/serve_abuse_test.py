"""`infermark serve` under abuse: 10,000 idle connections at once, slowloris clients, oversized and
malformed requests, a 200% pulse from `infermark load`. The server must keep serving, keep its
memory bounded and answer every abuse with a clear status and a JSON error.

Memory is checked as a generous bound over the server's own baseline (VmRSS from /proc and
`process_resident_memory_bytes` from /metrics); nothing here asserts a timing.

Usage: serve_abuse_test.py INFERMARK MODELS_DIR
"""

import glob
import json
import os
import resource
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

from serve_support import http, infer_body, metric_values, start_server, stop_server, wait_until
import unittest_main

INFERMARK, MODELS = sys.argv[1], sys.argv[2]
MODEL_FILE = os.path.join(MODELS, "tiny_cnn.onnx")
RESULTS = tempfile.mkdtemp(prefix="serve-abuse-results-")
IDLE_CONNECTIONS = 10_000
MEMORY_BOUND = 1 << 30  # bytes a server may grow by over its baseline under any abuse here
INFER = "/v2/models/tiny_cnn/infer"


def raise_open_file_limit(wanted):
    """This process's (and the servers' it starts, which inherit it) soft limit on open files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, wanted), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def serve(*extra):
    return start_server(INFERMARK, ["--model", MODEL_FILE, "-b", "onnxruntime", "--threads", "1", "--port", "0",
                                    "--no-grpc", "--io-threads", "2", "--out", RESULTS, *extra])


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def connect(address, timeout=30):
    host, port = address.split(":")
    return socket.create_connection((host, int(port)), timeout=timeout)


def exchange(address, data, half_close=False, timeout=30):
    """Sends raw bytes, reads until the server closes (or `timeout`); returns (status, headers, body)."""
    with connect(address, timeout) as raw:
        try:
            raw.sendall(data)
            if half_close:
                raw.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server refused early; its answer is still there to read
        received = b""
        try:
            while True:
                chunk = raw.recv(65536)
                if not chunk:
                    break
                received += chunk
                if parse_response(received)[0] and b"connection: close" not in received.lower():
                    break  # a complete keep-alive answer
        except (ConnectionResetError, socket.timeout):
            pass
    return parse_response(received)


def parse_response(data):
    """(status, {lower-case header: value}, body) of the first response in `data`; status 0 if incomplete."""
    head, separator, body = data.partition(b"\r\n\r\n")
    if not separator:
        return 0, {}, b""
    lines = head.decode(errors="replace").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    if len(body) < length:
        return 0, {}, b""
    return int(lines[0].split()[1]), headers, body[:length]


def request(method, path, body=b"", headers=()):
    lines = [f"{method} {path} HTTP/1.1", "Host: test", *headers]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class ServeUnderAbuse(unittest.TestCase):
    """One server with short read and idle timeouts, a 1 MiB body limit and a small queue."""

    @classmethod
    def setUpClass(cls):
        cls.process, cls.address = serve("--max-body-mb", "1", "--read-timeout-s", "3", "--idle-timeout-s", "3",
                                         "--max-queue", "2")
        cls.x = np.random.default_rng(3).random((1, 3, 32, 32), dtype=np.float32)
        cls.assert_serves(cls)
        cls.baseline = rss_bytes(cls.process.pid)

    @classmethod
    def tearDownClass(cls):
        stop_server(cls.process)

    def assert_serves(self):
        status, _, body = http(self.address, "POST", INFER, infer_body(self.x), timeout=30)
        assert status == 200, (status, body)
        assert len(json.loads(body)["outputs"][0]["data"]) == 10

    def assert_memory_bounded(self):
        self.assertIsNone(self.process.poll(), "the server exited")
        self.assertLess(rss_bytes(self.process.pid), self.baseline + MEMORY_BOUND)
        exported = metric_values(self.address, "process_resident_memory_bytes")["process_resident_memory_bytes"]
        self.assertLess(exported, self.baseline + MEMORY_BOUND)

    def assert_error(self, answer, status, message):
        got, headers, body = answer
        self.assertEqual(got, status, body)
        self.assertEqual(headers.get("content-type"), "application/json")
        self.assertIn(message, json.loads(body)["error"])

    def test_oversized_requests_get_413_431_and_400(self):
        big_header = request("GET", "/v2/health/live", headers=["X-Filler: " + "a" * (20 << 10)])
        self.assert_error(exchange(self.address, big_header), 431, "limit of 16384 bytes")
        # The body limit is checked against Content-Length before the body is read...
        too_long = request("POST", INFER, headers=[f"Content-Length: {2 << 20}"]) + b"{" * 1000
        self.assert_error(exchange(self.address, too_long), 413, "limit of 1048576 bytes")
        # ...and while reading a chunked body, which names no length.
        chunk = b"x" * 65536
        chunked = request("POST", INFER, headers=["Transfer-Encoding: chunked"]) + (b"10000\r\n" + chunk + b"\r\n") * 20
        self.assert_error(exchange(self.address, chunked), 413, "limit of 1048576 bytes")
        # Content-Length lying: more than was sent (the client then stops sending), unparsable, twice.
        short = request("POST", INFER, headers=["Content-Length: 5000"]) + b'{"inputs": []}'
        self.assert_error(exchange(self.address, short, half_close=True), 400, "ended before")
        self.assert_error(exchange(self.address, short), 408, "request body not received within the server's read timeout")
        self.assert_error(exchange(self.address, request("POST", INFER, headers=["Content-Length: ten"]) + b"0123456789"),
                          400, "malformed HTTP request")
        self.assert_error(exchange(self.address, request("POST", INFER, headers=["Content-Length: 2", "Content-Length: 3"])
                                   + b"{}"), 400, "malformed HTTP request")
        # Content-Length shorter than the body: the rest is read as the next request, which is garbage.
        with connect(self.address) as raw:
            raw.sendall(request("POST", INFER, headers=["Content-Length: 2"]) + b"{}GARBAGE AFTER THE BODY\r\n\r\n")
            received = b""
            while received.count(b"HTTP/1.1 ") < 2:
                chunk = raw.recv(65536)
                if not chunk:
                    break
                received += chunk
        first, rest = received.split(b"HTTP/1.1 ", 2)[1:]
        self.assertTrue(first.startswith(b"400 "), received)  # {} has no "inputs"
        self.assertTrue(rest.startswith(b"400 "), received)
        self.assertIn(b"malformed HTTP request", rest)
        self.assert_serves()
        self.assert_memory_bounded()

    def test_malformed_requests_get_400_with_a_json_error(self):
        cases = [
            (b"\x00\xff\x13\x37 garbage bytes \xfe\r\n\r\n", "malformed HTTP request"),
            (b"GET /v2 HTTX/1.1\r\nHost: test\r\n\r\n", "malformed HTTP request"),
            (b"GET\r\n\r\n", "malformed HTTP request"),
            (b"GET /v2 HTTP/1.1\r\nNo colon here\r\n\r\n", "malformed HTTP request"),
            (request("POST", INFER, b'{"inputs": [{"name": "input", '), "JSON"),
            (request("POST", INFER, b"[1, 2, 3]"), "not a JSON object"),
            (request("POST", INFER, json.dumps({"inputs": [{"name": "input", "shape": [1, 3, 32, 32], "datatype": "FP32",
                                                            "data": [0.5] * 10}]}).encode()), "10"),
            (request("POST", INFER, json.dumps({"inputs": [{"name": "input", "shape": [1, 3, 32, -32],
                                                            "datatype": "FP32", "data": [0.5]}]}).encode()), "shape"),
        ]
        binary_header = json.dumps({"inputs": [{"name": "input", "shape": [1, 3, 32, 32], "datatype": "FP32",
                                                "parameters": {"binary_data_size": 12288}}]}).encode()
        cases.append((request("POST", INFER, binary_header + b"\0" * 64, ["Inference-Header-Content-Length: 999999"]),
                      "Inference-Header-Content-Length"))
        cases.append((request("POST", INFER, binary_header + b"\0" * 64,
                              [f"Inference-Header-Content-Length: {len(binary_header)}"]), "binary data ends after 64"))
        cases.append((request("POST", INFER, binary_header, ["Inference-Header-Content-Length: -5"]),
                      "Inference-Header-Content-Length"))
        for data, message in cases:
            with self.subTest(data=data[:60]):
                self.assert_error(exchange(self.address, data), 400, message)
        self.assert_serves()
        self.assert_memory_bounded()

    def test_slowloris_clients_are_cut_off_and_others_served(self):
        # Each sends its request line, then one header byte every 0.2 s, and never ends the header.
        clients = [connect(self.address) for _ in range(50)]
        answers = {client: b"" for client in clients}
        open_ = set(clients)
        drip = b"X-Slow: " + b"a" * 100000
        sent = 0
        for client in clients:
            client.sendall(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: test\r\n")
        stop = threading.Event()

        def normal_requests():
            while not stop.is_set():
                self.assert_serves()
                time.sleep(0.2)

        served = threading.Thread(target=normal_requests)
        served.start()
        try:
            deadline = time.monotonic() + 120  # a bound on the wait, far beyond the 3 s header timeout
            while open_ and time.monotonic() < deadline:
                readable, _, _ = select.select(list(open_), [], [], 0.2)
                for client in readable:
                    try:
                        chunk = client.recv(4096)
                    except ConnectionResetError:
                        chunk = b""
                    answers[client] += chunk
                    if not chunk:
                        open_.discard(client)
                for client in list(open_):
                    try:
                        client.send(drip[sent:sent + 1])
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # closed by the server: recv sees it next
                sent += 1
        finally:
            stop.set()
            served.join()
            for client in clients:
                client.close()
        self.assertFalse(open_, f"{len(open_)} slowloris connections still open after {sent} bytes each")
        for client, answer in answers.items():
            self.assert_error(parse_response(answer), 408, "request headers not received within the server's idle timeout")
        self.assert_serves()
        self.assert_memory_bounded()

    def test_a_200_percent_pulse_is_answered_with_200_429_or_503(self):
        before = metric_values(self.address, "infermark_requests_total")
        out = tempfile.mkdtemp(prefix="serve-abuse-pulse-")
        command = [INFERMARK, "load", f"http://{self.address}", "--model", "tiny_cnn", "--scenario", "pulse",
                   "--capacity-probe", "2", "--pulse-times", "3,3,3", "--pulse-burst", "2", "--concurrency", "8",
                   "--warmup", "5", "--pacing", "sleep", "--out", out]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        [result_file] = glob.glob(os.path.join(out, "*", "*.json"))
        with open(result_file) as f:
            result = json.load(f)
        after = metric_values(self.address, "infermark_requests_total")
        answered = {}
        for series, value in after.items():
            code = series.split('code="', 1)[1].split('"', 1)[0]
            answered[code] = answered.get(code, 0) + value - before.get(series, 0)
        self.assertGreater(answered.get("200", 0), 0, answered)
        self.assertEqual(set(answered) - {"200", "429", "503"}, set(), answered)
        client_errors = result["remote"]["errors"]
        self.assertFalse(client_errors["transport"], client_errors)
        self.assertEqual(set(client_errors["http_status"]) - {"429", "503"}, set(), client_errors)
        self.assertIsNone(self.process.poll())
        self.assert_serves()
        self.assert_memory_bounded()


class TenThousandIdleConnections(unittest.TestCase):
    def test_idle_connections_leave_the_server_serving_with_bounded_memory(self):
        limit = raise_open_file_limit(IDLE_CONNECTIONS + 2000)
        if limit < IDLE_CONNECTIONS + 200:
            self.skipTest(f"open files limited to {limit}")
        process, address = serve()
        x = np.random.default_rng(5).random((1, 3, 32, 32), dtype=np.float32)
        idle = []
        try:
            self.assertEqual(http(address, "POST", INFER, infer_body(x))[0], 200)
            baseline, fds_before = rss_bytes(process.pid), open_fds(process.pid)
            for _ in range(IDLE_CONNECTIONS):
                idle.append(connect(address, timeout=60))
            # Accepted, not only queued by the kernel: the server holds a descriptor for each (less a
            # few: the first request's connection may still have been open when they were counted).
            wait_until(lambda: open_fds(process.pid) >= fds_before + IDLE_CONNECTIONS - 5, 120, "10,000 connections accepted")
            status, _, body = http(address, "POST", INFER, infer_body(x))
            self.assertEqual(status, 200, body)
            self.assertLess(rss_bytes(process.pid), baseline + MEMORY_BOUND)
            exported = metric_values(address, "process_resident_memory_bytes")["process_resident_memory_bytes"]
            self.assertLess(exported, baseline + MEMORY_BOUND)
            for connection in idle:
                connection.close()
            idle.clear()
            # Every connection's state is released once its client leaves.
            wait_until(lambda: open_fds(process.pid) <= fds_before + 10, 120, "idle connections released")
            self.assertEqual(http(address, "POST", INFER, infer_body(x))[0], 200)
            self.assertLess(rss_bytes(process.pid), baseline + MEMORY_BOUND)
        finally:
            for connection in idle:
                connection.close()
            self.assertEqual(stop_server(process), 0)

    def test_connections_beyond_max_connections_are_refused_with_503(self):
        process, address = serve("--max-connections", "20")
        held = []
        try:
            for _ in range(20):
                held.append(connect(address))
            wait_until(lambda: http(address, "GET", "/v2/health/live")[0] == 503, 60, "the 21st connection refused")
            answer = exchange(address, request("GET", "/v2/health/live"))
            self.assertEqual(answer[0], 503)
            self.assertIn("Retry-After".lower(), answer[1])
            self.assertIn("limit of 20 open connections", json.loads(answer[2])["error"])
            held.pop().close()
            wait_until(lambda: http(address, "GET", "/v2/health/live")[0] == 200, 60, "a freed slot serves again")
        finally:
            for connection in held:
                connection.close()
            stop_server(process)


if __name__ == "__main__":
    unittest_main.main()
