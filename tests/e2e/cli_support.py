"""Running `infermark` commands that write results into a fresh folder, and reading those results."""

import glob
import json
import os
import subprocess
import tempfile


def results_in(out):
    """Every result JSON under `out` (one folder per model), in path order."""
    results = []
    for path in sorted(glob.glob(os.path.join(out, "*", "*.json"))):
        with open(path) as f:
            results.append(json.load(f))
    return results


def run_cli(infermark, command, args, prefix, expect_code=0, timeout=300):
    """Runs `infermark COMMAND ARGS --out NEW_FOLDER`; fails on another exit code unless
    expect_code is None. Returns (results, the finished process, the folder)."""
    out = tempfile.mkdtemp(prefix=prefix)
    done = subprocess.run([infermark, command, *args, "--out", out], capture_output=True, text=True, timeout=timeout)
    if expect_code is not None and done.returncode != expect_code:
        raise AssertionError(f"infermark {command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return results_in(out), done, out
