"""Reads benchmark_app's report on stdin and prints 'mean_ms p50_ms inferences_per_s'."""
import re
import sys

text = sys.stdin.read()


def grab(key: str) -> float:
    match = re.search(key + r"\s*:\s*([\d.]+)", text)
    if not match:
        sys.exit(f"benchmark_app printed no '{key}' figure:\n{text[-2000:]}")
    return float(match.group(1))


print(f"{grab('Average'):.2f} {grab('Median'):.2f} {grab('Throughput'):.2f}")
