"""A soak of `infermark serve`: start it, drive it with `infermark load` at a steady open-loop rate
for N minutes, sample the server's resident memory (VmRSS in /proc/PID/status) every few seconds
and give a leak verdict from it.

The verdict is infermark's own soak method (`trend_verdict` in src/loadgen/patterns.cpp, on
`stats::fit_trend` in src/stats/trend.cpp), applied to the samples after the warm-up: a
least-squares line through RSS over time, the 95% confidence interval of its slope (Student t,
n - 2 degrees of freedom); "leak suspected" when the interval lies above zero and the growth it
implies over the measured span exceeds max(10 MB, 5% of the mean RSS), as `infermark load
--scenario soak` judges its own process. Beside it, the mean RSS of the first and last thirds.

The binary and its backend plugins are copied to a temporary folder first, so rebuilds of the
build folder during the soak do not touch the process under test.

Usage: serve_soak.py INFERMARK MODEL_FILE [--minutes 30] [--rate 75] [--sample-s 5]
                     [--warmup-min 3] [--backend onnxruntime] [--threads 1] [--io-threads 1]
                     [--samples FILE] [--json FILE]
Prints the commands it runs on stderr and the figures and verdict on stdout (also as JSON with
--json FILE). Exit code 0 for "no leak", 1 for "leak suspected", 2 when it could not run.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "e2e"))
from serve_support import http, start_server, stop_server  # noqa: E402


def rss_mb(pid):
    """The process's resident set size in MB (VmRSS), or None once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except FileNotFoundError:
        return None
    return None


def student_t95(degrees):
    """Two-sided 95% quantile of Student's t (what stats::student_t95 gives)."""
    from scipy.stats import t  # the test venv has it; only needed for the verdict
    return float(t.ppf(0.975, degrees))


def trend_verdict(times_s, values_mb):
    """src/loadgen/patterns.cpp trend_verdict on src/stats/trend.cpp fit_trend, for RSS in MB."""
    n = len(times_s)
    if n < 3:
        return {"verdict": "not enough data", "points": n}
    mean_t = sum(times_s) / n
    mean_y = sum(values_mb) / n
    sxx = sum((t - mean_t) ** 2 for t in times_s)
    sxy = sum((t - mean_t) * (y - mean_y) for t, y in zip(times_s, values_mb))
    syy = sum((y - mean_y) ** 2 for y in values_mb)
    slope = sxy / sxx
    residual = max(0.0, syy - slope * sxy)
    half = student_t95(n - 2) * math.sqrt(residual / (n - 2) / sxx)
    low, high = slope - half, slope + half
    span = times_s[-1] - times_s[0]
    change = slope * span
    material = max(10.0, 0.05 * mean_y)  # a leak is growth beyond 5% of the mean RSS, at least 10 MB
    significant = low > 0 or high < 0
    rising = significant and low > 0 and change > material
    return {"verdict": "leak suspected" if rising else "no leak",
            "finding": "rising" if rising else "significant but small" if significant else "flat",
            "points": n, "slope_mb_per_min": slope * 60, "slope_ci95_mb_per_min": [low * 60, high * 60],
            "change_over_span_mb": change, "material_mb": material,
            "r_squared": 1.0 - residual / syy if syy > 0 else 1.0}


def thirds(values):
    third = max(1, len(values) // 3)
    return sum(values[:third]) / third, sum(values[-third:]) / third


def private_copy(infermark, backend, folder):
    """The binary and the one backend plugin it needs, copied (the plugins are found beside the binary)."""
    source = os.path.dirname(os.path.abspath(infermark))
    os.makedirs(os.path.join(folder, "backends"))
    binary = os.path.join(folder, "infermark")
    shutil.copy2(infermark, binary)
    plugin = f"libinfermark_backend_{backend}.so"
    shutil.copy2(os.path.join(source, "backends", plugin), os.path.join(folder, "backends", plugin))
    return binary


def sample_loop(pid, interval_s, started, samples, stop):
    while not stop.wait(interval_s):
        value = rss_mb(pid)
        if value is None:
            return
        samples.append((time.monotonic() - started, value))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("infermark")
    parser.add_argument("model")
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rate", type=float, default=75, help="requests/s, open loop, constant arrivals")
    parser.add_argument("--sample-s", type=float, default=5, help="seconds between RSS samples")
    parser.add_argument("--warmup-min", type=float, default=None,
                        help="minutes left out of the fit (default: a tenth of the run, at most 3)")
    parser.add_argument("--backend", default="onnxruntime")
    parser.add_argument("--io-threads", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="the model's intra-op threads")
    parser.add_argument("--samples", help="write the RSS samples here (CSV: seconds, MB)")
    parser.add_argument("--json", help="write the figures and verdict here")
    args = parser.parse_args()
    warmup_min = args.warmup_min if args.warmup_min is not None else min(3.0, args.minutes / 10)
    duration_s = args.minutes * 60

    work = tempfile.mkdtemp(prefix="serve-soak-")
    binary = private_copy(args.infermark, args.backend, os.path.join(work, "bin"))
    serve_args = ["--model", args.model, "-b", args.backend, "--threads", str(args.threads), "--port", "0", "--no-grpc",
                  "--io-threads", str(args.io_threads), "--out", os.path.join(work, "serve-results")]
    print("$ infermark serve " + " ".join(serve_args), file=sys.stderr)
    process, address = start_server(binary, serve_args)
    samples, stop = [], threading.Event()
    started = time.monotonic()
    samples.append((0.0, rss_mb(process.pid)))
    sampler = threading.Thread(target=sample_loop, args=(process.pid, args.sample_s, started, samples, stop), daemon=True)
    sampler.start()
    model_name = os.path.splitext(os.path.basename(args.model))[0]
    load = [binary, "load", f"http://{address}", "--model", model_name, "--scenario", "server", "--qps", str(args.rate),
            "--arrivals", "constant", "--pacing", "sleep", "--duration", str(duration_s), "--concurrency", "8",
            "--warmup", "10", "--out", os.path.join(work, "load-results")]
    print("$ " + " ".join(load), file=sys.stderr)
    try:
        done = subprocess.run(load, capture_output=True, text=True, timeout=duration_s + 300)
    finally:
        stop.set()
        sampler.join()
        server_alive = process.poll() is None
        _, _, metrics = http(address, "GET", "/metrics") if server_alive else (0, {}, b"")
        exit_code = stop_server(process)
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        print(f"infermark load failed with exit code {done.returncode}", file=sys.stderr)
        return 2
    requests = {}
    for line in metrics.decode(errors="replace").splitlines():
        if line.startswith("infermark_requests_total{"):
            code = line.split('code="', 1)[1].split('"', 1)[0]
            requests[code] = requests.get(code, 0) + float(line.rsplit(" ", 1)[1])

    fitted = [(t, v) for t, v in samples if t >= warmup_min * 60 and v is not None]
    verdict = trend_verdict([t for t, _ in fitted], [v for _, v in fitted])
    first_third, last_third = thirds([v for _, v in fitted]) if fitted else (float("nan"), float("nan"))
    figures = {
        "serve": "infermark serve " + " ".join(serve_args), "load": " ".join(["infermark", *load[1:]]),
        "rate_per_s": args.rate, "minutes": args.minutes, "warmup_min": warmup_min, "sample_s": args.sample_s,
        "server_exit_code": exit_code, "requests_by_code": requests,
        "rss_mb": {"start": samples[0][1], "after_warmup": fitted[0][1] if fitted else None, "end": samples[-1][1],
                   "max": max(v for _, v in samples), "first_third_mean": first_third, "last_third_mean": last_third},
        "trend": verdict,
    }
    if args.samples:
        with open(args.samples, "w") as out:
            out.write("t_s,rss_mb\n" + "".join(f"{t:.1f},{v:.1f}\n" for t, v in samples))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=2)
    rss = figures["rss_mb"]
    print(f"{args.minutes:g} min at {args.rate:g} requests/s; server answered {requests}; exit code {exit_code}")
    print(f"RSS: {rss['start']:.1f} MB at start, {rss['after_warmup']:.1f} MB after {warmup_min:g} min warm-up, "
          f"{rss['end']:.1f} MB at the end (max {rss['max']:.1f}); thirds {first_third:.1f} -> {last_third:.1f} MB")
    if "slope_mb_per_min" in verdict:
        print(f"trend over {verdict['points']} samples: {verdict['slope_mb_per_min']:+.4f} MB/min "
              f"(95% CI {verdict['slope_ci95_mb_per_min'][0]:+.4f} .. {verdict['slope_ci95_mb_per_min'][1]:+.4f}), "
              f"{verdict['change_over_span_mb']:+.2f} MB over the fit against a material {verdict['material_mb']:.1f} MB "
              f"({verdict['finding']})")
    print(f"verdict: {verdict['verdict']}")
    shutil.rmtree(work, ignore_errors=True)
    return 1 if verdict["verdict"] == "leak suspected" else 0


if __name__ == "__main__":
    sys.exit(main())
