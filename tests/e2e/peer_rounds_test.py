"""Peer comparisons alternate for real: tools/peers/rounds.py rotates the order of the sides every
round (each side leads, and takes every other place, equally often), prints each round, and every
comparison script measures its sides through it; the fidelity script gives every side the same
input file.

    peer_rounds_test.py INFERMARK MODELS   (both unused: the arguments every e2e file gets)"""
import ast
import contextlib
import io
import pathlib
import sys
import tempfile
import types
import unittest

import unittest_main

PEERS = pathlib.Path(__file__).resolve().parents[2] / "tools" / "peers"
sys.path.insert(0, str(PEERS))
import rounds  # noqa: E402


class Rotation(unittest.TestCase):
    def test_every_side_takes_every_place_equally_often(self):
        sides = ["a", "b", "c", "d"]
        orders = [rounds.rotated(sides, r) for r in range(8)]
        for order in orders:
            self.assertEqual(sorted(order), sides)
        for place in range(len(sides)):
            taken = [order[place] for order in orders]
            self.assertEqual({side: taken.count(side) for side in sides}, {side: 2 for side in sides})

    def test_run_rounds_measures_in_the_rotated_order_and_prints_each_round(self):
        calls = []
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            results = rounds.run_rounds(["x", "y"], 3, lambda side: calls.append(side) or len(calls))
        self.assertEqual(calls, ["x", "y", "y", "x", "x", "y"])
        self.assertEqual(results, [{"x": 1, "y": 2}, {"y": 3, "x": 4}, {"x": 5, "y": 6}])
        self.assertEqual(stderr.getvalue().count("round "), 3)
        self.assertIn("round 2/3 (y → x)", stderr.getvalue())

    def test_spread_is_median_and_range(self):
        self.assertEqual(rounds.spread([1.0, 3.0, 2.0]), "2.000 (1.000–3.000)")
        self.assertGreaterEqual(rounds.DEFAULT_ROUNDS, 5)


class ComparisonScripts(unittest.TestCase):
    def test_each_comparison_measures_its_sides_through_run_rounds(self):
        for script in ("fidelity.py", "serve_overhead.py", "triton_vs_serve.py"):
            with self.subTest(script=script):
                tree = ast.parse((PEERS / script).read_text())
                called = {node.func.id for node in ast.walk(tree)
                          if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
                self.assertIn("run_rounds", called, f"{script} does not measure through rounds.run_rounds")

    def test_fidelity_gives_every_side_the_same_input_file(self):
        import fidelity
        commands = []

        class Captured(Exception):
            pass

        def capture(command):
            commands.append([str(part) for part in command])
            raise Captured

        with tempfile.TemporaryDirectory() as scratch:
            input_file = pathlib.Path(scratch) / "input.npy"
            args = types.SimpleNamespace(model="m.onnx", infermark="infermark", threads=2, warmup=1, runs=2)
            sides = fidelity.Sides(args, pathlib.Path(scratch), "input", input_file, [1, 3, 8, 8])
            original, fidelity.run = fidelity.run, capture
            try:
                for side in ("benchmark_app", "infermark openvino", "ORT Python loop", "infermark onnxruntime"):
                    with self.assertRaises(Captured):
                        sides.measure(side)
            finally:
                fidelity.run = original
        self.assertEqual(len(commands), 4)
        for command in commands:
            self.assertTrue(any(str(input_file) in part for part in command), " ".join(command))


if __name__ == "__main__":
    unittest_main.main()
