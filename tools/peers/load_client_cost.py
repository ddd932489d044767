"""What `infermark load` itself costs, beside `wrk` in the same run (sides alternated; the machines
are shared and noisy): both drive the minimal Beast server (bench/http_reference_server.cpp, one io
thread) on /v2/health/ready, with the same connections and one client thread.

For each connection count: requests/s of each (the issue's bar: infermark ≥ 0.8x wrk) and CPU
seconds per request of each client process (wrk: user+sys from wait4; infermark: the result's
resources.process_cpu_seconds over its requests, warm-up excluded from neither). Then
infermark's open loop (`--scenario server`) at a fixed rate with each pacing.

Usage: load_client_cost.py BUILD_DIR [--rounds N] [--seconds S] [--connections 1 8] [--qps 10000]
Prints Markdown tables and the commands it ran.
"""

import argparse
import glob
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "e2e"))
from serve_support import free_port  # noqa: E402


def timed(command):
    """Runs `command`; returns its stdout and the CPU seconds (user + sys) of the child."""
    print("$ " + " ".join(command), file=sys.stderr)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def wrk(url, connections, seconds):
    out, cpu = timed(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", url])
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    return rps, cpu / requests * 1e6


def infermark_load(build, url, out_dir, flags):
    timed([os.path.join(build, "infermark"), "load", url, "--protocol", "http", "--client-threads", "1",
           "--out", out_dir] + flags)
    newest = max(glob.glob(os.path.join(out_dir, "*", "*.json")), key=os.path.getmtime)
    with open(newest) as f:
        result = json.load(f)
    resources = result["resources"]
    phase = result["phases"][0] if result.get("phases") else {}
    return (result["throughput"]["queries_per_s"], resources["process_cpu_seconds"] / resources["inferences"] * 1e6,
            phase.get("issue_lateness_us", {}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--qps", type=float, default=10000)
    args = parser.parse_args()

    port = free_port()
    server = subprocess.Popen([os.path.join(args.build, "bench", "infermark_http_reference_server"), str(port), "1"],
                              stdout=subprocess.PIPE, text=True)
    if "listening" not in server.stdout.readline():
        raise RuntimeError("the reference server did not start")
    url = f"http://127.0.0.1:{port}/v2/health/ready"
    rows, open_rows = [], []
    try:
        with tempfile.TemporaryDirectory() as out_dir:
            for connections in args.connections:
                for r in range(args.rounds):
                    load_flags = ["--scenario", "concurrency", "--concurrency", str(connections), "--runs", "0",
                                  "--max-duration", str(args.seconds)]
                    sides = [("wrk", lambda: wrk(url, connections, args.seconds)),
                             ("infermark", lambda: infermark_load(args.build, url, out_dir, load_flags)[:2])]
                    if r % 2:
                        sides.reverse()
                    measured = {name: run() for name, run in sides}
                    rows.append((connections, r + 1, measured["wrk"], measured["infermark"]))
            for r in range(args.rounds):
                for pacing in (["spin", "sleep"] if r % 2 == 0 else ["sleep", "spin"]):
                    rps, cpu_us, lateness = infermark_load(
                        args.build, url, out_dir, ["--scenario", "server", "--qps", str(args.qps), "--duration",
                                                   str(args.seconds), "--pacing", pacing])
                    open_rows.append((pacing, r + 1, rps, cpu_us, lateness))
    finally:
        server.kill()
        server.wait()

    print("| connections | round | wrk req/s | infermark req/s | ratio | wrk CPU µs/req | infermark CPU µs/req |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for connections, r, (w_rps, w_cpu), (i_rps, i_cpu) in rows:
        print(f"| {connections} | {r} | {w_rps:,.0f} | {i_rps:,.0f} | {i_rps / w_rps:.3f} | {w_cpu:.1f} | {i_cpu:.1f} |")
    print()
    print("| connections | median rate ratio (infermark / wrk) | median CPU ratio |")
    print("|---:|---:|---:|")
    for connections in args.connections:
        mine = [row for row in rows if row[0] == connections]
        print(f"| {connections} | {statistics.median(i[0] / w[0] for _, _, w, i in mine):.3f} | "
              f"{statistics.median(i[1] / w[1] for _, _, w, i in mine):.3f} |")
    print()
    print(f"Open loop, {args.qps:,.0f} req/s Poisson:")
    print()
    print("| pacing | round | achieved req/s | CPU µs/req | issue lateness P50 µs | P99 µs |")
    print("|---|---:|---:|---:|---:|---:|")
    for pacing, r, rps, cpu_us, lateness in open_rows:
        print(f"| {pacing} | {r} | {rps:,.0f} | {cpu_us:.1f} | {lateness.get('p50', float('nan')):.1f} | "
              f"{lateness.get('p99', float('nan')):.1f} |")


if __name__ == "__main__":
    main()
