#!/usr/bin/env python3
"""Writes deploy/grafana/infermark-serve.json, the Grafana dashboard for `infermark serve`.

The metric names below are the ones src/serve/serve_metrics.cpp exports; change them together.
tests/e2e/grafana_dashboard_test.py regenerates the dashboard and checks that the committed JSON
is identical and that every metric a panel queries is exported by a running server.

Usage: generate_dashboard.py [--out FILE] [--check]
"""

import argparse
import json
import os
import sys

# Exported by src/serve/serve_metrics.cpp (Triton's names first, then infermark's own).
SUCCESS = "nv_inference_request_success"
FAILURE = "nv_inference_request_failure"
INFERENCES = "nv_inference_count"
EXECUTIONS = "nv_inference_exec_count"
REQUEST_US = "nv_inference_request_duration_us"
QUEUE_US = "nv_inference_queue_duration_us"
COMPUTE_US = "nv_inference_compute_infer_duration_us"
PENDING = "nv_inference_pending_request_count"
DURATION = "infermark_request_duration_seconds"  # histogram, label phase = queue | compute | total
BATCH_SIZE = "infermark_batch_size"  # histogram of rows per executed batch
REQUESTS = "infermark_requests_total"  # label code
REJECTIONS = "infermark_rejections_total"  # label reason
ROUTED = "infermark_routed_total"  # label by = header | version | sticky | weighted
BREAKER = "infermark_circuit_breaker_open"
INLINE = "infermark_inline_executions_total"  # executions on the receiving thread (inline_below_us)
SHADOW_COMPARED = "infermark_shadow_comparisons_total"  # labels shadow, shape
SHADOW_DISAGREED = "infermark_shadow_disagreements_total"
SHADOW_MAX_ERROR = "infermark_shadow_max_abs_error"
SHADOW_DROPPED = "infermark_shadow_dropped_total"
TTFT = "infermark_time_to_first_token_seconds"  # histogram, language models
TPOT = "infermark_time_per_output_token_seconds"  # histogram, language models
PROMPT_TOKENS = "infermark_prompt_tokens_total"
PROMPT_TOKENS_REUSED = "infermark_prompt_tokens_reused_total"
GENERATED_TOKENS = "infermark_generated_tokens_total"
ACTIVE_SEQUENCES = "infermark_active_sequences"  # continuous batching: sequences in the running batch
IN_FLIGHT = "infermark_in_flight_requests"  # per process, no model label
RSS = "process_resident_memory_bytes"
CPU = "process_cpu_seconds_total"

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"
# Label matchers every per-model series gets; process-wide series only have the instance.
MODEL = 'model=~"$model", variant=~"$variant", instance=~"$instance"'
PROCESS = 'instance=~"$instance"'
MODEL_ONLY = 'model=~"$model", instance=~"$instance"'  # every variant of the selected models
GRID_COLUMNS = 24


def sel(name, extra=""):
    """NAME{the dashboard's model, variant and instance filters[, extra]}."""
    return f"{name}{{{MODEL}{', ' + extra if extra else ''}}}"


def rate(name, extra=""):
    return f"rate({sel(name, extra)}[{RATE}])"


def quantile(q, histogram, by="variant", extra=""):
    return f"histogram_quantile({q}, sum by (le, {by}) ({rate(histogram + '_bucket', extra)}))"


def target(expr, legend, instant=False):
    return {"expr": expr, "legendFormat": legend, "range": not instant, "instant": instant}


def panel(title, description, targets, unit="short", kind="timeseries", stack=False, minimum=0):
    defaults = {"unit": unit}
    if minimum is not None:
        defaults["min"] = minimum
    options = {}
    if kind == "timeseries":
        defaults["custom"] = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10, "showPoints": "never",
                              "spanNulls": False, "stacking": {"mode": "normal" if stack else "none", "group": "A"}}
        options = {"legend": {"displayMode": "table", "placement": "bottom", "showLegend": True, "calcs": ["mean", "max"]},
                   "tooltip": {"mode": "multi", "sort": "desc"}}
    elif kind == "stat":
        options = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                   "colorMode": "value", "graphMode": "area", "justifyMode": "auto", "textMode": "auto"}
    return {"type": kind, "title": title, "description": description, "datasource": DATASOURCE,
            "fieldConfig": {"defaults": defaults, "overrides": []}, "options": options,
            "targets": [dict(t, refId=chr(ord("A") + i), datasource=DATASOURCE) for i, t in enumerate(targets)]}


def stat(title, description, expr, unit):
    return panel(title, description, [target(expr, title, instant=True)], unit=unit, kind="stat", minimum=None)


def layout(rows):
    """[(height, [panel, ...]), ...] -> panels with ids and gridPos, left to right, top to bottom."""
    panels, y, next_id = [], 0, 1
    for height, row in rows:
        width = GRID_COLUMNS // len(row)
        for i, p in enumerate(row):
            p = dict(p, id=next_id, gridPos={"h": height, "w": width, "x": i * width, "y": y})
            panels.append(p)
            next_id += 1
        y += height
    return panels


def percentiles(histogram, extra):
    return [target(quantile(q, histogram, extra=extra), f"{{{{variant}}}} {label}") for q, label in
            ((0.5, "P50"), (0.95, "P95"), (0.99, "P99"))]


def per_variant(numerator, denominator, scale=""):
    return f"sum by (variant) ({numerator}) / sum by (variant) ({denominator}){scale}"


def panels():
    total, not_2xx = 'phase="total"', 'code!~"2.."'
    overview = (4, [
        stat("Requests/s", "Successful inference requests per second, all selected variants",
             f"sum({rate(SUCCESS)})", "reqps"),
        stat("P99 latency", "Server-side P99 of whole requests (queue + compute), all selected variants",
             f"histogram_quantile(0.99, sum by (le) ({rate(DURATION + '_bucket', total)}))", "s"),
        stat("Error ratio", "Share of inference requests answered with a status other than 2xx",
             f"sum({rate(REQUESTS, not_2xx)}) / sum({rate(REQUESTS)})", "percentunit"),
        stat("Rejections/s", "Requests refused before inference: queue full or circuit breaker open",
             f"sum({rate(REJECTIONS)}) or vector(0)", "reqps"),
        stat("In flight", "Requests being handled (HTTP and gRPC) by the selected instances", f"sum({IN_FLIGHT}{{{PROCESS}}})", "short"),
        stat("Breakers open", "Variants whose circuit breaker refuses requests", f"sum({sel(BREAKER)})", "short"),
    ])
    latency = (9, [
        panel("Latency P50 / P95 / P99 per variant",
              "Server-side request latency (queue + compute) from infermark_request_duration_seconds{phase=\"total\"}; "
              "the mean comes from Triton's cumulative nv_inference_request_duration_us",
              percentiles(DURATION, total) +
              [target(per_variant(rate(REQUEST_US), rate(SUCCESS), " / 1e6"), "{{variant}} mean")], unit="s"),
        panel("QPS per variant", "Successful inference requests per second (nv_inference_request_success)",
              [target(f"sum by (variant) ({rate(SUCCESS)})", "{{variant}}")], unit="reqps", stack=True),
    ])
    batching = (8, [
        panel("Batch efficiency: inferences per execution",
              "rate(nv_inference_count) / rate(nv_inference_exec_count): rows served per model execution; "
              "1 means dynamic batching found nothing to combine",
              [target(per_variant(rate(INFERENCES), rate(EXECUTIONS)), "{{variant}}")], unit="short"),
        panel("Batch size", "Rows per executed batch from infermark_batch_size: mean and P95",
              [target(per_variant(rate(BATCH_SIZE + "_sum"), rate(BATCH_SIZE + "_count")), "{{variant}} mean"),
               target(quantile(0.95, BATCH_SIZE), "{{variant}} P95")], unit="short"),
        panel("Compute time", "Model execution time: P99 per request and mean per batch execution",
              [target(quantile(0.99, DURATION, extra='phase="compute"'), "{{variant}} P99"),
               target(per_variant(rate(COMPUTE_US), rate(EXECUTIONS), " / 1e6"), "{{variant}} mean per execution")],
              unit="s"),
        panel("Executions run inline",
              "Share of executions run on the receiving thread (fast unbatched models, idle instance; inline_below_us)",
              [target(per_variant(rate(INLINE), rate(EXECUTIONS)), "{{variant}}")], unit="percentunit"),
    ])
    queue = (8, [
        panel("Queue time P50 / P95 / P99 per variant",
              "Time requests waited for a batch and a free instance (infermark_request_duration_seconds{phase=\"queue\"})",
              percentiles(DURATION, 'phase="queue"'), unit="s"),
        panel("Mean queue time", "rate(nv_inference_queue_duration_us) per queued request",
              [target(per_variant(rate(QUEUE_US), rate(DURATION + "_count", 'phase="queue"'), " / 1e6"), "{{variant}}")],
              unit="s"),
        panel("Queue depth", "Requests waiting in each variant's queue (nv_inference_pending_request_count)",
              [target(f"sum by (variant) ({sel(PENDING)})", "{{variant}}")], unit="short"),
    ])
    errors = (8, [
        panel("Responses by status code", "Inference requests answered, by HTTP status (infermark_requests_total)",
              [target(f"sum by (variant, code) ({rate(REQUESTS)})", "{{variant}} {{code}}")], unit="reqps", stack=True),
        panel("Rejections by reason", "Refused before inference: queue_full (429) or breaker_open (503)",
              [target(f"sum by (variant, reason) ({rate(REJECTIONS)})", "{{variant}} {{reason}}")], unit="reqps"),
        panel("Failures by reason", "Triton's nv_inference_request_failure: REJECTED, CANCELED (timeout), BACKEND",
              [target(f"sum by (variant, reason) ({rate(FAILURE)})", "{{variant}} {{reason}}")], unit="reqps"),
    ])
    routing = (8, [
        panel("A/B routing by decision",
              "How requests were routed: X-Model-Variant header, version path, sticky key or the weighted split",
              [target(f"sum by (variant, by) ({rate(ROUTED)})", "{{variant}} by {{by}}")], unit="reqps", stack=True),
        panel("Traffic share per variant", "Each variant's share of its model's routed requests (all variants)",
              [target(f"sum by (model, variant) ({rate(ROUTED)}) / on (model) group_left "
                      f'sum by (model) (rate({ROUTED}{{{MODEL_ONLY}}}[{RATE}]))', "{{model}} {{variant}}")],
              unit="percentunit", stack=True),
        panel("Circuit breakers", "1 while a variant's circuit breaker refuses requests",
              [target(f"max by (variant) ({sel(BREAKER)})", "{{variant}}")], unit="short"),
    ])
    shadow = (8, [
        panel("Shadow disagreement ratio",
              "Mirrored requests whose outputs disagreed with the primary's (top-1, tolerance or cosine, by output kind), per compared request",
              [target(f"sum by (variant, shadow) ({rate(SHADOW_DISAGREED)}) / "
                      f"sum by (variant, shadow) ({rate(SHADOW_COMPARED)})", "{{variant}} vs {{shadow}}")],
              unit="percentunit"),
        panel("Shadow comparisons and drops",
              "Mirrored requests compared, and dropped (shadow queue full or shadow failed) per second",
              [target(f"sum by (variant, shadow) ({rate(SHADOW_COMPARED)})", "{{variant}} vs {{shadow}} compared"),
               target(f"sum by (variant, shadow) ({rate(SHADOW_DROPPED)})", "{{variant}} vs {{shadow}} dropped"),
               target(f"sum by (variant, shadow) ({rate(SHADOW_DISAGREED)})", "{{variant}} vs {{shadow}} disagreed")],
              unit="reqps"),
        panel("Shadow max abs error", "Largest absolute output difference seen between a variant and its shadow",
              [target(f"max by (variant, shadow) ({sel(SHADOW_MAX_ERROR)})", "{{variant}} vs {{shadow}}")],
              unit="short"),
    ])
    language_models = (8, [
        panel("Time to first token P50 / P95 / P99", "Language models: request arrival to the first generated token",
              percentiles(TTFT, ""), unit="s"),
        panel("Time per output token P50 / P95 / P99", "Language models: time between consecutive generated tokens",
              percentiles(TPOT, ""), unit="s"),
        panel("Tokens/s and running batch",
              "Prompt and generated tokens per second, prompt tokens a prefix cache skipped, and sequences in the "
              "running batch",
              [target(f"sum by (variant) ({rate(GENERATED_TOKENS)})", "{{variant}} generated/s"),
               target(f"sum by (variant) ({rate(PROMPT_TOKENS)})", "{{variant}} prompt/s"),
               target(f"sum by (variant) ({rate(PROMPT_TOKENS_REUSED)})", "{{variant}} prompt reused/s"),
               target(f"sum by (variant) ({sel(ACTIVE_SEQUENCES)})", "{{variant}} active sequences")], unit="short"),
    ])
    process = (8, [
        panel("In flight", "Requests being handled (HTTP and gRPC), per instance",
              [target(f"sum by (instance) ({IN_FLIGHT}{{{PROCESS}}})", "{{instance}}")], unit="short"),
        panel("Resident memory", "Resident set size of the server process",
              [target(f"{RSS}{{{PROCESS}}}", "{{instance}}")], unit="bytes"),
        panel("CPU", "CPU seconds per second of the server process (1 = one core busy)",
              [target(f"rate({CPU}{{{PROCESS}}}[{RATE}])", "{{instance}}")], unit="short"),
    ])
    return layout([overview, latency, batching, queue, errors, routing, shadow, language_models, process])


def query_variable(name, label, query, multi=True):
    return {"name": name, "label": label, "type": "query", "datasource": DATASOURCE, "query": query,
            "definition": query, "refresh": 2, "sort": 1, "multi": multi, "includeAll": True, "allValue": ".*",
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]}, "options": [], "hide": 0}


def dashboard():
    return {
        "uid": "infermark-serve",
        "title": "infermark serve",
        "description": "KServe v2 model server: latency, throughput, batching, queueing, errors, A/B routing, shadows "
                       "(generated by deploy/grafana/generate_dashboard.py)",
        "tags": ["infermark", "inference", "kserve"],
        "editable": True,
        "graphTooltip": 1,
        "schemaVersion": 39,
        "version": 1,
        "refresh": "10s",
        "time": {"from": "now-1h", "to": "now"},
        "timezone": "browser",
        "annotations": {"list": []},
        "links": [],
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
             "current": {}, "hide": 0, "refresh": 1, "options": []},
            query_variable("model", "Model", f"label_values({SUCCESS}, model)"),
            query_variable("variant", "Variant", f'label_values({SUCCESS}{{model=~"$model"}}, variant)'),
            query_variable("instance", "Instance", f'label_values({SUCCESS}{{model=~"$model"}}, instance)'),
        ]},
        "panels": panels(),
    }


def render():
    return json.dumps(dashboard(), indent=2) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(here, "infermark-serve.json"))
    parser.add_argument("--check", action="store_true", help="exit 1 if --out differs from what would be written")
    args = parser.parse_args()
    text = render()
    if args.check:
        with open(args.out) as f:
            if f.read() != text:
                print(f"{args.out} is stale: run deploy/grafana/generate_dashboard.py", file=sys.stderr)
                return 1
        return 0
    with open(args.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
