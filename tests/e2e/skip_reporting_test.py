"""A skip is reported as a skip, never as a pass: the exit status of tests/e2e/unittest_main.py
(which every Python end-to-end file ends in), what real ctest makes of it with the SKIP_RETURN_CODE
tests/CMakeLists.txt sets, and the "N tests skipped" summary `make test` prints from ctest's JUnit
file (tests/tools/ctest_skip_summary.py), a GoogleTest skip included.

    skip_reporting_test.py INFERMARK MODELS   (both unused: the arguments every e2e file gets)"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import unittest_main

HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = os.path.join(os.path.dirname(HERE), "tools", "ctest_skip_summary.py")

PASSES = """
    class T(unittest.TestCase):
        def test_a(self): pass
        def test_b(self): pass
"""
ONE_SKIPPED = """
    class T(unittest.TestCase):
        def test_a(self): pass
        @unittest.skipUnless(False, "model.gguf not built")
        def test_b(self): pass
"""
ALL_SKIPPED = """
    @unittest.skipUnless(False, "model.gguf not built")
    class T(unittest.TestCase):
        def test_a(self): pass
"""
SKIPPED_AND_FAILED = """
    class T(unittest.TestCase):
        def test_a(self): self.fail("wrong")
        def test_b(self): self.skipTest("no cluster")
"""
SET_UP_CLASS_SKIPS = """
    class T(unittest.TestCase):
        @classmethod
        def setUpClass(cls): raise unittest.SkipTest("no server")
        def test_a(self): pass
"""
NO_TESTS = """
    x = 1
"""


def write_test_file(folder: str, name: str, body: str) -> str:
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(f"import sys\nimport unittest\nsys.path.insert(0, {HERE!r})\nimport unittest_main\n"
                + textwrap.dedent(body) + "\nif __name__ == '__main__':\n    unittest_main.main()\n")
    return path


class RunnerExitStatus(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="infermark_skips_")
        self.addCleanup(shutil.rmtree, self.folder)

    def run_file(self, body: str):
        return subprocess.run([sys.executable, write_test_file(self.folder, "t", body)], capture_output=True, text=True,
                              timeout=60)

    def test_zero_only_when_every_test_ran_and_passed(self):
        self.assertEqual(self.run_file(PASSES).returncode, 0)

    def test_one_skip_makes_the_file_skipped_and_says_why(self):
        r = self.run_file(ONE_SKIPPED)
        self.assertEqual(r.returncode, unittest_main.SKIP, r.stdout + r.stderr)
        self.assertIn("SKIP: T.test_b: model.gguf not built", r.stdout)
        self.assertIn("1 of 2 tests skipped", r.stdout)

    def test_every_test_skipped_is_skipped(self):
        self.assertEqual(self.run_file(ALL_SKIPPED).returncode, unittest_main.SKIP)
        self.assertEqual(self.run_file(SET_UP_CLASS_SKIPS).returncode, unittest_main.SKIP)

    def test_a_failure_outranks_a_skip(self):
        self.assertEqual(self.run_file(SKIPPED_AND_FAILED).returncode, 1)

    def test_a_file_that_ran_nothing_fails(self):
        self.assertEqual(self.run_file(NO_TESTS).returncode, 1)


# What ctest 3.25 writes with --output-junit for a SKIP_RETURN_CODE skip, a GTEST_SKIP (matched by
# gtest_discover_tests' SKIP_REGULAR_EXPRESSION), a pass, a failure and a missing executable.
JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="5" failures="1" disabled="0" skipped="3" hostname="" time="0">
  <testcase name="llm_real_text" classname="llm_real_text" time="0.4" status="notrun">
    <skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>test_perplexity (__main__.RealText.test_perplexity) ... skipped 'smollm2-135m.gguf not built'
SKIP: RealText.test_perplexity: smollm2-135m.gguf not built
1 of 1 tests skipped: exit 77, ctest reports the file skipped
</system-out>
  </testcase>
  <testcase name="RealBackend/openvino.Runs" classname="RealBackend/openvino.Runs" time="0.1" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>[ RUN      ] RealBackend/openvino.Runs
tests/integration/test_backends.cpp:40: Skipped
openvino not built

[  SKIPPED ] RealBackend/openvino.Runs (0 ms)
</system-out>
  </testcase>
  <testcase name="passes" classname="passes" time="0.1" status="run"><system-out>ok</system-out></testcase>
  <testcase name="fails" classname="fails" time="0.1" status="fail"><failure message=""/><system-out>bad</system-out></testcase>
  <testcase name="missing" classname="missing" time="0" status="notrun">
    <skipped message="Unable to find executable"/>
    <system-out>Unable to find executable: /nonexistent</system-out>
  </testcase>
</testsuite>
"""


class SkipSummary(unittest.TestCase):
    def summarise(self, junit_path: str) -> str:
        r = subprocess.run([sys.executable, SUMMARY, junit_path], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_counts_skips_with_their_reasons_and_not_failures(self):
        with tempfile.NamedTemporaryFile("w", suffix=".xml") as f:
            f.write(JUNIT)
            f.flush()
            out = self.summarise(f.name)
        self.assertEqual(out.splitlines(), [
            "2 tests skipped (not run, so not passed):",
            "  llm_real_text: RealText.test_perplexity: smollm2-135m.gguf not built",
            "  RealBackend/openvino.Runs: openvino not built",
        ])

    @unittest.skipUnless(shutil.which("cmake") and shutil.which("ctest"), "cmake and ctest not on PATH")
    def test_real_ctest_reports_a_skipping_file_as_skipped(self):
        folder = tempfile.mkdtemp(prefix="infermark_ctest_skips_")
        self.addCleanup(shutil.rmtree, folder)
        skipping = write_test_file(folder, "skipping", ONE_SKIPPED)
        passing = write_test_file(folder, "passing", PASSES)
        with open(os.path.join(folder, "CMakeLists.txt"), "w") as f:
            f.write(textwrap.dedent(f"""\
                cmake_minimum_required(VERSION 3.25)
                project(skips LANGUAGES NONE)
                enable_testing()
                add_test(NAME skipping COMMAND "{sys.executable}" "{skipping}")
                add_test(NAME passing COMMAND "{sys.executable}" "{passing}")
                set_tests_properties(skipping passing PROPERTIES SKIP_RETURN_CODE {unittest_main.SKIP})
                """))
        build = os.path.join(folder, "build")
        subprocess.run(["cmake", "-S", folder, "-B", build], check=True, capture_output=True, timeout=60)
        junit = os.path.join(folder, "junit.xml")
        r = subprocess.run(["ctest", "--test-dir", build, "--output-junit", junit], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertRegex(r.stdout, r"skipping \.+\*+Skipped")
        self.assertRegex(r.stdout, r"passing \.+ +Passed")
        self.assertEqual(self.summarise(junit).splitlines(),
                         ["1 test skipped (not run, so not passed):", "  skipping: T.test_b: model.gguf not built"])


if __name__ == "__main__":
    unittest_main.main()
