"""`mpirun -np 2 infermark sweep` and `evaluate --per-host` on real ranks: the cells shared out (each cell exactly one result,
each rank its share, summary.md over all of them), an interrupted sweep resumed (only the missing
cells run), a stop on one rank (both ranks end, what was measured is saved, a rerun finishes the
rest), --per-host with each rank in its own UTS namespace standing for a host (`infermark report`
groups the results by the two machines), the evaluation --per-host (each host's study and pipeline
results, one report with the framework x machine matrix and a decision per machine), and the refusals
(--per-host with two ranks on one host, --search under several ranks, evaluate without --per-host).

Usage: scaleout_sweep_test.py INFERMARK MODELS_DIR MPIEXEC
"""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import unittest_main

INFERMARK, MODELS, MPIEXEC = sys.argv[1], sys.argv[2], sys.argv[3]
TINY = os.path.join(MODELS, "tiny_cnn.onnx")
# Open MPI as root, and more ranks than this machine's cores.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def study_file(folder, name, base, axes):
    """A study of tiny_cnn on ONNX Runtime; cells in odometer order, threads turning fastest."""
    path = os.path.join(folder, name + ".yaml")
    lines = [f"name: {name}", f"models: [{TINY}]", "backends: [onnxruntime]", "base:"]
    lines += [f"  {key}: {value}" for key, value in base.items()]
    lines += ["axes:"] + [f"  {flag}: [{', '.join(map(str, values))}]" for flag, values in axes.items()]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


# Four cells of 20 queries each: (t1, b1), (t2, b1), (t1, b2), (t2, b2).
FOUR_CELLS = dict(base={"runs": 20, "warmup": 2}, axes={"threads": [1, 2], "batch": [1, 2]})


def mpirun(ranks, *args, wrapper=(), timeout=120, background=False, command="sweep"):
    # --bind-to none: mpirun would pin each rank, and the cells it measures, to one core.
    command = [MPIEXEC, "-np", str(ranks), "--bind-to", "none", *wrapper, INFERMARK, command, *args]
    env = dict(os.environ, **MPI_ENV)
    if background:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def results(folder):
    """{file name relative to the folder: result} for every result file under it."""
    found = {}
    for path in glob.glob(os.path.join(folder, "**", "*.json"), recursive=True):
        with open(path) as f:
            found[os.path.relpath(path, folder)] = json.load(f)
    return found


def report_rows(summary):
    """The rows of summary.md's first results table (the one with a status column)."""
    rows = [line for line in summary.splitlines() if line.startswith("|")]
    return [row for row in rows if re.search(r"\| (ok|interrupted|failed) +\|$", row)]


class DistributedSweep(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="scaleout-sweep-")
        self.addCleanup(shutil.rmtree, self.folder, True)
        self.out = os.path.join(self.folder, "results")

    def sweep(self, study, *flags, ranks=2, expect=0, **kwargs):
        done = mpirun(ranks, study, "--out", self.out, *flags, **kwargs)
        if expect is not None:
            self.assertEqual(done.returncode, expect, done.stdout + done.stderr)
        return done

    def test_cells_shared_out_once_each_then_resumed(self):
        study = study_file(self.folder, "four", **FOUR_CELLS)
        folder = os.path.join(self.out, "study-four")
        self.sweep(study)
        found = results(folder)
        self.assertEqual(len(found), 4, sorted(found))
        # Equal estimates: plain round-robin by cell index, so rank 0 ran the threads=1 cells.
        for name, result in found.items():
            scaleout = result["environment"]["scaleout"]
            self.assertEqual((scaleout["ranks"], scaleout["spread"]), (2, "share cells"), name)
            self.assertEqual(scaleout["rank"], 0 if ".threads-1." in name else 1, name)
            self.assertEqual(scaleout["host"], result["environment"]["hostname"], name)
            self.assertEqual(scaleout["cpus_allowed"], result["environment"]["logical_cores"], f"{name}: bound")
            self.assertEqual(result["status"], "ok", name)
        with open(os.path.join(folder, "summary.md")) as f:
            summary = f.read()
        self.assertEqual(len(report_rows(summary)), 4, summary)
        ranks = re.findall(r"^\| +(\d) \| \S+ +\| +(\d) \| +(\d) \| +(\d) \|$", summary, re.M)
        self.assertEqual(ranks, [("0", "2", "2", "0"), ("1", "2", "2", "0")], summary)

        # Interrupted: one cell of each rank lost. The rerun measures those two only.
        lost = ["tiny_cnn.onnxruntime.threads-1.batch-2.json", "tiny_cnn.onnxruntime.threads-2.batch-1.json"]
        for name in lost:
            os.remove(os.path.join(folder, name))
        kept = {name: r["started_at"] for name, r in found.items() if name not in lost}
        done = self.sweep(study)
        again = results(folder)
        self.assertEqual(sorted(again), sorted(found))
        for name in kept:
            self.assertEqual(again[name]["started_at"], kept[name], f"{name} measured again")
        self.assertEqual(len(re.findall(r"^\[\d+ measured; rank \d", done.stdout, re.M)), 2, done.stdout)
        with open(os.path.join(folder, "summary.md")) as f:
            summary = f.read()
        self.assertEqual(len(report_rows(summary)), 4, summary)
        ranks = re.findall(r"^\| +(\d) \| \S+ +\| +(\d) \| +(\d) \| +(\d) \|$", summary, re.M)
        self.assertEqual(ranks, [("0", "2", "1", "1"), ("1", "2", "1", "1")], summary)

    def test_a_stop_on_one_rank_ends_both_and_a_rerun_finishes(self):
        # Six cells of about 2 s each, three rounds.
        study = study_file(self.folder, "stop", base={"runs": 0, "max-duration": 2, "warmup": 2},
                           axes={"threads": [1, 2], "batch": [1, 2, 4]})
        folder = os.path.join(self.out, "study-stop")
        job = mpirun(2, study, "--out", self.out, background=True)
        try:
            deadline = time.monotonic() + 60
            while len(glob.glob(os.path.join(folder, "*.json"))) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            rank1 = [pid for pid in sweep_processes(job.pid) if process_env(pid).get("OMPI_COMM_WORLD_RANK") == "1"]
            self.assertEqual(len(rank1), 1, "rank 1's sweep process")
            os.kill(rank1[0], signal.SIGTERM)
            output, _ = job.communicate(timeout=60)  # no rank left waiting in a collective
        finally:
            if job.poll() is None:
                job.kill()
                job.communicate()
        self.assertNotEqual(job.returncode, 0, output)
        self.assertIn("rerun the same command to resume", output)
        first = results(folder)
        self.assertGreaterEqual(len(first), 2, output)
        self.assertLess(len(first), 6, output)
        self.assertTrue(os.path.exists(os.path.join(folder, "summary.md")))
        ok_before = {name for name, r in first.items() if r["status"] == "ok"}

        done = self.sweep(study)
        final = results(folder)
        self.assertEqual(len(final), 6, sorted(final))
        self.assertTrue(all(r["status"] == "ok" for r in final.values()), final.keys())
        for name in ok_before:
            self.assertEqual(final[name]["started_at"], first[name]["started_at"], f"{name} measured again")
        self.assertEqual(len(re.findall(r"^\[\d+ measured;", done.stdout, re.M)), 6 - len(ok_before), done.stdout)

    def own_host_wrapper(self):
        """A launcher wrapper putting each rank in its own UTS namespace, named host<rank>."""
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            self.skipTest("a UTS namespace per rank needs root and unshare")
        wrapper = os.path.join(self.folder, "own_host.sh")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\n# This rank in its own UTS namespace, named host<rank>.\n'
                    'exec unshare --uts sh -c \'hostname "host$OMPI_COMM_WORLD_RANK" && exec "$0" "$@"\' "$@"\n')
        os.chmod(wrapper, 0o755)
        return wrapper

    def test_per_host_keeps_each_hosts_results_and_report_groups_by_machine(self):
        wrapper = self.own_host_wrapper()
        study = study_file(self.folder, "hosts", **FOUR_CELLS)
        folder = os.path.join(self.out, "study-hosts")
        self.sweep(study, "--per-host", wrapper=[wrapper])
        found = results(folder)
        for host in ("host0", "host1"):
            mine = {name: r for name, r in found.items() if name.startswith(host + os.sep)}
            self.assertEqual(len(mine), 4, sorted(found))
            for name, r in mine.items():
                self.assertEqual(r["environment"]["hostname"], host, name)
                self.assertEqual(r["environment"]["scaleout"]["spread"], "per host", name)
        self.assertEqual(len(found), 8, sorted(found))
        with open(os.path.join(folder, "summary.md")) as f:
            summary = f.read()
        self.assertIn("## Host host0", summary)
        self.assertIn("## Host host1", summary)
        report = subprocess.run([INFERMARK, "report", folder], capture_output=True, text=True, timeout=60)
        self.assertEqual(report.returncode, 0, report.stderr)
        machines = re.findall(r"^#* ?Measured on (host\d) ", report.stdout, re.M)
        self.assertEqual(sorted(set(machines)), ["host0", "host1"], report.stdout)

    def evaluation_suite(self):
        """A study of tiny_cnn (threads 1 and 2; --quick keeps 1) and a two-stage pipeline."""
        study_file(self.folder, "threads", base={"runs": 30, "warmup": 2}, axes={"threads": [1, 2]})
        with open(os.path.join(self.folder, "split.yaml"), "w") as f:
            f.write("name: split\npipeline:\n  stages:\n"
                    f"    - {{name: encoder, model: {os.path.join(MODELS, 'tiny_encoder.onnx')}, backend: onnxruntime, threads: 1}}\n"
                    f"    - {{name: head, model: {os.path.join(MODELS, 'tiny_head.onnx')}, backend: onnxruntime, threads: 1}}\n"
                    "modes: [serial, threads]\nrequests: 40\nwarmup: 2\n")
        suite = os.path.join(self.folder, "suite.yaml")
        with open(suite, "w") as f:
            f.write("name: small\ndecision: {p99-ms: 1000}\nexperiments:\n"
                    "  - title: Threads\n    study: threads.yaml\n    quick: {axes: {threads: [1]}, base: {runs: 12}}\n"
                    "  - title: Pipeline\n    study: split.yaml\n    quick: {requests: 10}\n")
        return suite

    def test_evaluate_per_host_puts_the_machines_side_by_side_and_decides_per_machine(self):
        wrapper = self.own_host_wrapper()
        suite = self.evaluation_suite()
        done = mpirun(2, suite, "--quick", "--per-host", "--out", self.out, wrapper=[wrapper], command="evaluate")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        folder = os.path.join(self.out, "evaluation-small-quick")
        self.assertIn("on 2 hosts (--per-host)", done.stdout)
        found = results(folder)
        for host in ("host0", "host1"):
            # The study's cell and the pipeline's two modes, measured on each host, all in rank 0's folder.
            study = [r for name, r in found.items() if name.startswith(os.path.join("01-threads", "study-threads", host, ""))]
            pipeline = [r for name, r in found.items() if name.startswith(os.path.join("02-split", host, ""))]
            self.assertEqual(len(study), 1, sorted(found))
            self.assertEqual(len(pipeline), 2, sorted(found))
            for r in study + pipeline:
                self.assertEqual(r["status"], "ok")
                self.assertEqual(r["environment"]["hostname"], host)
            self.assertTrue(os.path.exists(os.path.join(folder, "02-split", host, "pipeline-split", "summary.md")))
            # Each host checked its own frameworks.
            self.assertTrue(glob.glob(os.path.join(folder, "hosts", host, "check", "*.json")), host)
        with open(os.path.join(folder, "evaluation.md")) as f:
            evaluation = f.read()
        self.assertIn("## Host host0", evaluation)  # the pipeline's summary of each host
        self.assertIn("## Host host1", evaluation)
        # The decision names the machine of each pick, and the matrix has a column per machine.
        verdicts = re.findall(r"^\| (tiny_cnn|split) \| (host\d) \(.*\) \| lowest P99 latency \| \*\*(.+?)\*\*", evaluation, re.M)
        self.assertEqual(sorted((model, host) for model, host, _ in verdicts),
                         [("split", "host0"), ("split", "host1"), ("tiny_cnn", "host0"), ("tiny_cnn", "host1")], evaluation)
        matrix = evaluation[evaluation.index("Which framework on which machine"):]
        header = next(line for line in matrix.splitlines() if line.startswith("| model"))
        self.assertRegex(header, r"\| +host0 \(.*\) \| +host1 \(.*\) \|$")
        self.assertRegex(matrix, r"\| tiny_cnn +\| onnxruntime t1 +\| +P99 [0-9.]+ ms \(pick\) \| +P99 [0-9.]+ ms \(pick\) \|")
        with open(os.path.join(folder, "report.html")) as f:
            html = f.read()
        self.assertIn('"machine_matrix":{"machines":["host0', html)

        # A rerun resumes: nothing measured again on either host.
        before = {name: r.get("started_at") for name, r in found.items()}
        again = mpirun(2, suite, "--quick", "--per-host", "--out", self.out, wrapper=[wrapper], command="evaluate")
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)
        self.assertEqual({name: r.get("started_at") for name, r in results(folder).items()}, before)

    def test_refusals(self):
        study = study_file(self.folder, "refused", **FOUR_CELLS)
        done = self.sweep(study, "--per-host", expect=None)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("--per-host: ranks 0, 1 all run on host", done.stderr)
        done = self.sweep(study, "--search", "--p99-ms", "5", expect=None)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("--search walks the axes one cell after another", done.stderr)
        suite = self.evaluation_suite()
        done = mpirun(2, suite, "--quick", "--out", self.out, command="evaluate")
        self.assertNotEqual(done.returncode, 0)
        self.assertEqual(done.stderr.count("`evaluate` under mpirun (2 ranks) needs --per-host"), 1, done.stderr)
        done = mpirun(2, suite, "--quick", "--per-host", "--out", self.out, command="evaluate")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("--per-host: ranks 0, 1 all run on host", done.stderr)
        self.assertNotIn("drop --per-host", done.stderr)
        self.assertFalse(glob.glob(os.path.join(self.out, "**", "*.json"), recursive=True))


def sweep_processes(launcher):
    """The `infermark sweep` processes (ranks) among the descendants of the launcher's pid."""
    parents, commands = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    commands[int(entry)] = f.read().split(b"\0")
            except (OSError, IndexError, ValueError):
                continue

    def descends(pid):
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == launcher:
                return True
        return False

    return [pid for pid, argv in commands.items()
            if len(argv) > 1 and argv[0].endswith(b"infermark") and argv[1] == b"sweep" and descends(pid)]


def process_env(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            pairs = [item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item]
    except OSError:
        return {}
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


if __name__ == "__main__":
    unittest_main.main()
