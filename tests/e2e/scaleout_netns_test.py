"""The scale-out must-shows across separate "hosts": Linux network namespaces joined by veth
pairs (tests/e2e/netns_cluster.py), each with its own address and host name, reached by Open MPI
as remote nodes over TCP.

- `mpirun -np 2 infermark load URL --scenario server --qps R`, one rank on host-1 and one on
  host-2, against `infermark serve` on host-0 by its namespace address: one merged result whose
  count equals the sum of the ranks' and the server's own request counter, listing both hosts.
- `mpirun -np 2 infermark sweep studies/threads.yaml --per-host` on host-1 and host-2: a report
  grouped by the two hosts (a framework × machine table and one section per machine).

Usage: scaleout_netns_test.py INFERMARK MODELS_DIR SOURCE_DIR
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_cluster  # noqa: E402
from serve_support import metric_values, start_server, stop_server  # noqa: E402
import unittest_main

INFERMARK, MODELS, SOURCE = sys.argv[1], sys.argv[2], sys.argv[3]
# Each test of this file has its own cluster (subnet 10.78.<id>.0/24); other tests use other IDs.
LOAD_CLUSTER, SWEEP_CLUSTER = 21, 22


def run(command, timeout):
    out = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise AssertionError(f"{' '.join(command)} exited {out.returncode}:\n{out.stdout}\n{out.stderr}")
    return out.stdout


class AcrossNetworkNamespaces(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="infermark-netns-")

    def tearDown(self):
        shutil.rmtree(self.out, ignore_errors=True)

    def test_load_from_two_hosts_gives_one_merged_result_counted_as_the_server_counts(self):
        with netns_cluster.Cluster(LOAD_CLUSTER, 3) as cluster:
            # serve on host-0, on its own network stack: every address there is its own.
            server, _ = start_server(INFERMARK, ["--model", os.path.join(MODELS, "tiny_cnn.onnx"), "-b", "onnxruntime",
                                                 "--host", "0.0.0.0", "--port", "8000", "--no-grpc", "--out", self.out],
                                     launcher=cluster.launcher(0))
            address = f"{cluster.address(0)}:8000"  # how the other hosts (and this test, on the bridge) reach it
            try:
                series = 'nv_inference_request_success{model="tiny_cnn",variant="onnxruntime",version="1"}'
                before = metric_values(address, "nv_inference_request_success").get(series, 0)
                warmup = 5
                load = cluster.mpirun([1, 2], [INFERMARK, "load", f"http://{address}", "--model", "tiny_cnn", "--scenario",
                                               "server", "--qps", "100", "--duration", "3", "--warmup", str(warmup),
                                               "--out", self.out])
                printed = subprocess.run(load, capture_output=True, text=True, timeout=300)
                self.assertEqual(printed.returncode, 0, printed.stdout + printed.stderr)
                served = metric_values(address, "nv_inference_request_success").get(series, 0) - before
            finally:
                stop_server(server)
        files = glob.glob(os.path.join(self.out, "*", "remote-*.json"))
        self.assertEqual(len(files), 1, files)  # rank 0 alone writes: one merged result
        with open(files[0]) as f:
            result = json.load(f)
        self.assertEqual(result["status"], "ok", result.get("error"))
        scaleout = result["scaleout"]
        self.assertEqual(scaleout["ranks"], 2)
        self.assertTrue(scaleout["valid"], scaleout.get("problems"))
        self.assertEqual([r["host"] for r in scaleout["per_rank"]], ["host-1", "host-2"])
        completed = result["latency_ms"]["count"]
        self.assertEqual(completed, sum(r["completed"] for r in scaleout["per_rank"]))
        for rank in scaleout["per_rank"]:
            self.assertGreater(rank["completed"], 0, rank)
            self.assertEqual(rank["share"], {"qps": 50}, rank)
        # The server answered every measured request and each rank's warm-up, no more.
        self.assertEqual(served, completed + 2 * warmup)

    def test_per_host_sweep_of_the_threads_study_gives_a_report_grouped_by_host(self):
        with netns_cluster.Cluster(SWEEP_CLUSTER, 3) as cluster:
            study = os.path.join(SOURCE, "studies", "threads.yaml")
            sweep = cluster.mpirun([1, 2], [INFERMARK, "sweep", study, "--per-host", "--out", self.out])
            # The study names models/ relative to the source folder.
            printed = subprocess.run(sweep, capture_output=True, text=True, timeout=900, cwd=SOURCE)
            self.assertEqual(printed.returncode, 0, printed.stdout + printed.stderr)
        folder = os.path.join(self.out, "study-threads")
        hosts = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(folder, "*", "*.json")))
        self.assertEqual(sorted(set(hosts)), ["host-1", "host-2"], os.listdir(folder))
        self.assertEqual(hosts.count("host-1"), hosts.count("host-2"))  # every host ran the whole study
        for path in glob.glob(os.path.join(folder, "*", "*.json")):
            with open(path) as f:
                result = json.load(f)
            self.assertEqual(result["environment"]["hostname"], os.path.basename(os.path.dirname(path)), path)
        report = run([INFERMARK, "report", folder], timeout=120)
        self.assertIn("Framework × machine", report)
        for host in ("host-1", "host-2"):
            self.assertRegex(report, rf"### Measured on {host} \(")
        with open(os.path.join(folder, "summary.md")) as f:
            summary = f.read()
        self.assertIn("host-1", summary)
        self.assertIn("host-2", summary)


if __name__ == "__main__":
    why = netns_cluster.available()
    if why:
        print(f"SKIP: {why}")
        sys.exit(netns_cluster.SKIP)
    unittest_main.main()
