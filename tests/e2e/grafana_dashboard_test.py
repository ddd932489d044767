"""The Grafana dashboard deploy/grafana/infermark-serve.json: (a) it is what
deploy/grafana/generate_dashboard.py writes, (b) its structure is sound (unique panel ids, a
24-column grid without overlaps, a data source and PromQL targets on every panel, defined template
variables, expressions promtool parses), and (c) every metric its queries name is exported by a
running `infermark serve`, and every metric the server exports has a place on the dashboard.

Usage: grafana_dashboard_test.py INFERMARK MODELS_DIR
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from serve_support import http, infer_body, sample_names, start_server, stop_server, wait_until

INFERMARK, MODELS = sys.argv[1], sys.argv[2]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRAFANA = os.path.join(ROOT, "deploy", "grafana")
DASHBOARD_FILE = os.path.join(GRAFANA, "infermark-serve.json")
sys.path.insert(0, GRAFANA)
import generate_dashboard  # noqa: E402
import unittest_main

GRID_COLUMNS = 24
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right",
            "inf", "nan"}
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
# A number or duration (0.99, 1e6, 1e-6, 5m, 1h30m), or an identifier and whether a call follows.
TOKEN = re.compile(r"\d[\w.]*(?:(?<=[eE])[+-]\d+)?|([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?")
GRAFANA_BUILTINS = {"__rate_interval", "__interval", "__range"}


def metric_names(expr):
    """The metric names a PromQL expression selects: strings, label matchers, ranges, grouping
    clauses and Grafana variables removed, then every identifier that is not a function, an
    aggregation, a keyword or a number."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = GROUPING.sub(" ", text)
    text = re.sub(r"\$\{[^}]*\}|\$\w+", " ", text)
    names = set()
    for token in TOKEN.finditer(text):
        name, call = token.group(1), token.group(2)
        if name and not call and name.lower() not in KEYWORDS:
            names.add(name)
    return names


def dashboard_queries(dashboard):
    """(where, PromQL) for every panel target and every query template variable; label_values(M, L)
    contributes its series selector M."""
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield f"panel {panel['id']} '{panel['title']}' target {target.get('refId')}", target.get("expr", "")
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            found = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", variable["query"].strip())
            yield f"variable ${variable['name']}", found.group(1) if found else variable["query"]


class CommittedDashboard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(DASHBOARD_FILE) as f:
            cls.text = f.read()
        cls.dashboard = json.loads(cls.text)

    def test_committed_json_is_what_the_generator_writes(self):
        self.assertEqual(self.text, generate_dashboard.render(),
                         "deploy/grafana/infermark-serve.json is stale: run deploy/grafana/generate_dashboard.py")
        checked = subprocess.run([sys.executable, os.path.join(GRAFANA, "generate_dashboard.py"), "--check"],
                                 capture_output=True, text=True)
        self.assertEqual(checked.returncode, 0, checked.stderr)

    def test_panels_ids_grid_datasources_and_targets(self):
        panels = self.dashboard["panels"]
        self.assertGreaterEqual(len(panels), 10)
        ids = [panel.get("id") for panel in panels]
        self.assertEqual(len(ids), len(set(ids)), f"panel ids repeat: {ids}")
        occupied = {}
        for panel in panels:
            where = f"panel {panel.get('id')} '{panel.get('title')}'"
            self.assertTrue(panel.get("title"), where)
            self.assertIsInstance(panel.get("id"), int, where)
            grid = panel.get("gridPos", {})
            for key in ("x", "y", "w", "h"):
                self.assertIsInstance(grid.get(key), int, f"{where}: gridPos.{key}")
            self.assertGreaterEqual(grid["x"], 0, where)
            self.assertGreaterEqual(grid["y"], 0, where)
            self.assertGreaterEqual(grid["w"], 1, where)
            self.assertGreaterEqual(grid["h"], 1, where)
            self.assertLessEqual(grid["x"] + grid["w"], GRID_COLUMNS, f"{where}: wider than {GRID_COLUMNS} columns")
            for x in range(grid["x"], grid["x"] + grid["w"]):
                for y in range(grid["y"], grid["y"] + grid["h"]):
                    self.assertNotIn((x, y), occupied, f"{where} overlaps panel {occupied.get((x, y))}")
                    occupied[(x, y)] = panel["id"]
            datasource = panel.get("datasource")
            self.assertIsInstance(datasource, dict, f"{where}: no datasource")
            self.assertEqual(datasource.get("type"), "prometheus", where)
            self.assertTrue(datasource.get("uid"), where)
            targets = panel.get("targets", [])
            self.assertGreaterEqual(len(targets), 1, f"{where}: no target")
            ref_ids = [target.get("refId") for target in targets]
            self.assertEqual(len(ref_ids), len(set(ref_ids)), f"{where}: refIds repeat")
            for target in targets:
                self.assertTrue(target.get("expr", "").strip(), f"{where}: a target without expr")

    def test_template_variables_are_defined_and_used(self):
        variables = {v["name"]: v for v in self.dashboard["templating"]["list"]}
        for name in ("model", "variant", "datasource"):
            self.assertIn(name, variables)
        self.assertEqual(variables["datasource"]["type"], "datasource")
        for name in ("model", "variant"):
            self.assertEqual(variables[name]["type"], "query")
            self.assertTrue(variables[name]["multi"] and variables[name]["includeAll"], name)
        used = set()
        for where, expr in dashboard_queries(self.dashboard):
            for name in re.findall(r"\$\{?(\w+)", expr):
                used.add(name)
                self.assertTrue(name in variables or name in GRAFANA_BUILTINS, f"{where}: ${name} is not defined")
        self.assertTrue({"model", "variant"} <= used, f"variables used: {used}")

    def test_promtool_parses_every_expression(self):
        """Grafana's variables replaced by what they expand to, each expression becomes a recording
        rule; `promtool check rules` parses the PromQL."""
        rules = []
        for i, (where, expr) in enumerate(dashboard_queries(self.dashboard)):
            promql = expr.replace("$__rate_interval", "1m")
            promql = re.sub(r"\$\{?(\w+)\}?", ".*", promql)
            rules.append({"record": f"dashboard:query_{i}", "expr": promql})
        with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
            json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)  # JSON is YAML
            f.flush()
            checked = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)

    def test_metric_name_parser(self):
        self.assertEqual(metric_names('histogram_quantile(0.99, sum by (le, variant) (rate(a_bucket{phase="total", '
                                      'x=~"$x"}[$__rate_interval])))'), {"a_bucket"})
        self.assertEqual(metric_names("sum by (model, variant) (rate(b[5m])) / on (model) group_left sum by (model) "
                                      "(rate(c{by=\"x\"}[1m])) / 1e6 or vector(0)"), {"b", "c"})
        self.assertEqual(metric_names("max without (instance) (d offset 1h30m) > bool 0.5 * 1e-6"), {"d"})
        self.assertEqual(metric_names('label_replace(up, "dst", "$1", "src", "(.*)")'), {"up"})


SERVER_CONFIG = """\
# Every metric family the dashboard reads gets a series: the weighted split with one variant
# (routing), a one-deep queue with a long batching window (429s: rejections and failures), a
# shadow that compares (comparisons, disagreements, max error) and one that fails (drops).
server:
  io_threads: 2
models:
  - name: tiny_cnn
    file: {models}/tiny_cnn.onnx
    batching: {{max_batch_size: 8, max_queue_delay_us: 200000}}
    max_queue: 1
    variants:
      - {{name: onnxruntime, backend: onnxruntime, weight: 1, shadow: {{to: openvino, share: 1}}}}
      - {{name: openvino, backend: openvino, weight: 0}}
      - {{name: mirrored, backend: onnxruntime, weight: 0, shadow: {{to: broken, share: 1}}}}
      - {{name: broken, backend: onnxruntime, model: {models}/tiny_head.onnx, weight: 0}}
  - name: llama
    file: {models}/llama-tiny.gguf
    variants:
      - {{name: llamacpp, backend: llamacpp, slots: 2}}
"""


class DashboardMetricsAreExported(unittest.TestCase):
    def setUp(self):
        with open(DASHBOARD_FILE) as f:
            self.dashboard = json.load(f)
        self.config = tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="infermark-dashboard-")
        self.addCleanup(self.config.close)
        self.config.write(SERVER_CONFIG.format(models=os.path.abspath(MODELS)))
        self.config.flush()
        self.server, self.address = start_server(INFERMARK, ["--config", self.config.name, "--host", "127.0.0.1",
                                                             "--port", "0"], timeout=60)
        self.addCleanup(self.stop, self.server)

    @staticmethod
    def stop(process):
        if process.poll() is None:
            process.kill()
        stop_server(process)

    def scrape(self):
        status, _, text = http(self.address, "GET", "/metrics")
        self.assertEqual(status, 200)
        return text.decode()

    def drive_traffic(self):
        body = infer_body(np.random.default_rng(5).random((1, 3, 32, 32), dtype=np.float32))
        infer = lambda headers: http(self.address, "POST", "/v2/models/tiny_cnn/infer", body, headers)[0]  # noqa: E731

        def burst():  # four at once into a one-deep queue that waits 200 ms for a batch
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                return list(pool.map(infer, [{}] * 4))

        statuses = wait_until(lambda: (lambda s: s if 200 in s and 429 in s else None)(burst()), 15,
                              "a burst with both a 200 and a 429")
        self.assertLessEqual(set(statuses), {200, 429})
        self.assertEqual(infer({"X-Model-Variant": "mirrored"}), 200)
        completion = json.dumps({"model": "llama", "prompt": "tokens", "max_tokens": 4, "temperature": 0}).encode()
        self.assertEqual(http(self.address, "POST", "/v1/completions", completion)[0], 200)

    def test_every_metric_on_the_dashboard_is_exported(self):
        self.drive_traffic()
        queried = {}
        for where, expr in dashboard_queries(self.dashboard):
            names = metric_names(expr)
            self.assertTrue(names, f"{where}: no metric name in {expr!r}")
            for name in names:
                queried.setdefault(name, []).append(where)

        # Shadow comparisons finish after the response: poll until every name is there.
        def missing():
            exported = sample_names(self.scrape())
            return sorted(set(queried) - exported)

        try:
            wait_until(lambda: not missing(), 15, "every dashboard metric in /metrics")
            absent = []
        except AssertionError:
            absent = missing()
        self.assertEqual(absent, [], "not exported by infermark serve: " +
                         "; ".join(f"{name} (used by {', '.join(queried[name])})" for name in absent))
        text = self.scrape()
        types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.MULTILINE))
        for name in queried:
            if name.endswith(("_bucket", "_sum", "_count")) and name.rsplit("_", 1)[0] in types:
                self.assertEqual(types[name.rsplit("_", 1)[0]], "histogram", f"{name}: not from a histogram")
        # The other direction: every family the server exports has a panel.
        used_families = {re.sub(r"_(bucket|sum|count)$", "", name) if re.sub(r"_(bucket|sum|count)$", "", name) in types
                         else name for name in queried}
        self.assertEqual(sorted(set(types) - used_families), [], "exported but on no panel")
        self.assertEqual(stop_server(self.server), 0)


if __name__ == "__main__":
    unittest_main.main()
