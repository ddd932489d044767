// infermark HTML report: the language-model charts of one model group (Pareto fronts of output
// tokens/s against TTFT and TPOT P99, latency per conversation turn, TTFT of warm and cold shared
// prefixes) and the SLO panel, whose limits the reader can move: goodput and each cell's verdict
// are counted again in the page from the per-request latencies the results keep
// (generation.request_latencies), by the rule the run itself used (src/loadgen/service_targets.hpp).
// src/report/html_report.cpp inlines this file after report_scenarios.js; the page's helpers (el,
// chartPanel, drawChart, axis, readable, isNumber, summaryAt, numberCell, countCell) and
// ScenarioCharts (paretoFrontier, panel, drawEach) are looked up when used. One global name, LlmCharts.
"use strict";

const LlmCharts = (() => {
  const FADED = "rgba(87, 96, 110, 0.35)";
  const MARK = "#cf222e";
  const ORIGIN_TEXT = { in_process: "in-process", served: "served", remote: "remote (client-side)" };

  // ------------------------------------------------------------ pure computations (unit-testable)

  // Nearest-rank percentile of unsorted values (the run's exact method: the smallest value with at
  // least p% of the values at or below it); null when there are none.
  function nearestRank(values, p) {
    if (!values.length) return null;
    const sorted = [...values].sort((a, b) => a - b);
    const k = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
    return sorted[k - 1];
  }

  // A limit in ms as the run turns it into ns (static_cast<int64_t>(ms * 1e6)); 0 is none.
  const limitNs = (ms) => (isNumber(ms) && ms > 0 ? Math.trunc(ms * 1e6) : 0);
  const within = (targetNs, valueNs) => targetNs === 0 || valueNs <= targetNs;

  // The request columns of a result as rows, or null when the result kept none (older files).
  function requestsOf(result) {
    const columns = result?.generation?.request_latencies;
    if (!columns || !Array.isArray(columns.ttft_ns)) return null;
    return columns.ttft_ns.map((ttft, i) => ({ ttft, tpot: columns.tpot_ns[i], e2e: columns.e2e_ns[i] }));
  }

  // Goodput and the P99 verdict of one result under `limits` {ttft_ms, tpot_ms, e2e_ms} (a missing
  // or non-positive limit is none). A request is good when it meets every limit (one without a
  // TPOT cannot miss that one); goodput is good requests per second of the headline phase. The
  // cell meets the limits when it completed requests, each P99 (nearest rank over the requests)
  // is within its limit, and the run reported no errors or rejections and achieved 95% of an
  // asked rate, as the run's own SLA verdict rules.
  function judge(result, limits) {
    const requests = requestsOf(result);
    if (!requests) return null;
    const targets = { ttft: limitNs(limits.ttft_ms), tpot: limitNs(limits.tpot_ms), e2e: limitNs(limits.e2e_ms) };
    const good = requests.filter((r) => within(targets.e2e, r.e2e) && within(targets.ttft, r.ttft) &&
                                        (r.tpot === null || within(targets.tpot, r.tpot))).length;
    const wall = result.generation.wall_s;
    const ms = (ns) => (ns === null ? null : ns / 1e6);
    const p99 = {
      ttft: ms(nearestRank(requests.map((r) => r.ttft), 99)),
      tpot: ms(nearestRank(requests.filter((r) => r.tpot !== null).map((r) => r.tpot), 99)),
      e2e: ms(nearestRank(requests.map((r) => r.e2e), 99)),
    };
    const misses = [];
    if (!requests.length) misses.push("no request completed");
    for (const [key, name] of [["ttft", "TTFT"], ["tpot", "TPOT"], ["e2e", "end-to-end"]])
      if (targets[key] && p99[key] !== null && p99[key] * 1e6 > targets[key])
        misses.push(`${name} P99 ${readable(p99[key])} ms > ${readable(limits[`${key}_ms`])}`);
    const sla = result.analysis?.sla;
    if (sla && (sla.errors > 0 || sla.rejected > 0)) misses.push(`${sla.errors + sla.rejected} errors or rejections`);
    const asked = result.scenario?.parameters?.qps;
    const openLoop = ["server", "interactive"].includes(result.scenario?.name);
    if (openLoop && asked > 0 && result.generation.requests_per_s < 0.95 * asked)
      misses.push(`${readable(result.generation.requests_per_s)} requests/s < 95% of ${readable(asked)} asked`);
    return { requests: requests.length, good, goodput: wall > 0 ? good / wall : 0, p99, meets: misses.length === 0, misses };
  }

  // The limits a page opens with: the first result that ran with any, else none.
  function initialLimits(results) {
    for (const r of results) {
      const p = r.scenario?.parameters || {};
      const limits = { ttft_ms: p.ttft_ms || 0, tpot_ms: p.tpot_ms || 0, e2e_ms: p.sla_p99_ms || 0 };
      if (limits.ttft_ms || limits.tpot_ms || limits.e2e_ms) return limits;
    }
    return { ttft_ms: 0, tpot_ms: 0, e2e_ms: 0 };
  }

  // ------------------------------------------------------------ Pareto fronts

  const METRICS = [
    { key: "ttft", name: "TTFT", of: (g) => summaryAt(g.ttft_ms, "p99") },
    { key: "tpot", name: "TPOT", of: (g) => summaryAt(g.tpot_ms, "p99") },
  ];

  // A chart panel with its data-chart kind and its facts listed under the chart (report_scenarios.js).
  const llmPanel = (...args) => ScenarioCharts.panel(...args);

  // Per origin (in-process, served and remote cells time different spans), one chart for each of
  // TTFT P99 and TPOT P99 against output tokens/s, one point per cell (engine x precision x
  // concurrency or rate), the frontier highlighted and the dominated cells faded.
  function drawParetoFronts(container, items, notes) {
    const byOrigin = new Map();
    for (const item of items) {
      const origin = item.result.origin ?? "in_process";
      if (!byOrigin.has(origin)) byOrigin.set(origin, []);
      byOrigin.get(origin).push(item);
    }
    for (const [origin, group] of byOrigin)
      for (const metric of METRICS) {
        const points = group.map((item) => ({ item, rate: item.result.generation.output_tokens_per_s, p99: metric.of(item.result.generation) }))
          .filter((p) => isNumber(p.rate) && p.rate > 0 && isNumber(p.p99));
        if (points.length < 2) {
          if (points.length) notes.push(`LLM ${metric.name} Pareto front (${ORIGIN_TEXT[origin] ?? origin}): one cell only, nothing to compare.`);
          continue;
        }
        drawFront(container, origin, metric, points, byOrigin.size > 1);
      }
  }

  function drawFront(container, origin, metric, points, named) {
    const frontier = new Set(ScenarioCharts.paretoFrontier(points));
    const onFrontier = points.filter((_, i) => frontier.has(i)).sort((a, b) => a.p99 - b.p99);
    const dominated = points.filter((_, i) => !frontier.has(i));
    const asPoint = (p) => ({ x: p.p99, y: p.rate, label: p.item.label });
    const chart = llmPanel(container, "llm-pareto",
      `Output tokens/s vs ${metric.name} P99 (Pareto front)${named ? `: ${ORIGIN_TEXT[origin] ?? origin} cells` : ""}`,
      `One point per cell (engine, precision, concurrency or rate). Highlighted: the front, the cells no other beats on both ` +
      `(as high a throughput at as low a ${metric.name} P99, one strictly better); faded: the dominated ones. Up and to the left is better.`,
      onFrontier.map((p) => `frontier: ${p.item.label} \u2014 ${metric.name} P99 ${readable(p.p99)} ms at ${readable(p.rate)} tok/s`));
    Object.assign(chart.panel.dataset, { metric: metric.key, origin, frontier: String(onFrontier.length), dominated: String(dominated.length) });
    chart.draw({
      type: "scatter",
      data: {
        datasets: [
          { label: `front (${onFrontier.length})`, data: onFrontier.map(asPoint), showLine: true, borderColor: MARK, backgroundColor: MARK,
            pointRadius: 6, borderWidth: 2 },
          { label: `dominated (${dominated.length})`, data: dominated.map(asPoint), borderColor: FADED, backgroundColor: FADED, pointRadius: 4 },
        ],
      },
      options: {
        plugins: { tooltip: { callbacks: { label: (c) => `${c.raw.label}: ${readable(c.raw.y)} tok/s, ${metric.name} P99 ${readable(c.raw.x)} ms` } } },
        scales: { x: axis(`${metric.name} P99 (ms, lower is better)`, { beginAtZero: true }),
                  y: axis("output tokens/s (higher is better)", { beginAtZero: true }) },
      },
    });
  }

  // ------------------------------------------------------------ conversations and prefixes

  // TTFT P50 and P99 by turn for every cell that ran conversations (generation.by_group).
  function drawTurns(container, items) {
    const withTurns = items.filter((i) => Array.isArray(i.result.generation.by_group) && i.result.generation.by_group.length > 1);
    if (!withTurns.length) return;
    const labels = withTurns[0].result.generation.by_group.map((g) => g.label);
    const line = (item, key, dashed) => ({
      label: `${item.label} ${key.toUpperCase()}`, borderColor: item.color, backgroundColor: item.color, borderDash: dashed ? [6, 3] : [],
      data: item.result.generation.by_group.map((g) => summaryAt(g.ttft_ms, key)), pointRadius: 4,
    });
    const chart = llmPanel(container, "llm-turns", "TTFT by conversation turn",
      "Each turn's prompt is the whole history so far plus a new message: TTFT grows with the turn unless the engine reuses the " +
      "history's KV cache. Solid P50, dashed P99.",
      withTurns.map((i) => `${i.label}: ${i.result.generation.by_group.map((g) => `${g.label} ${readable(summaryAt(g.ttft_ms, "p50"))} ms`).join(", ")}`));
    chart.panel.dataset.cells = String(withTurns.length);
    chart.panel.dataset.turns = String(labels.length);
    chart.draw({
      type: "line",
      data: { labels, datasets: [...withTurns.map((i) => line(i, "p50", false)), ...withTurns.map((i) => line(i, "p99", true))] },
      options: { scales: { x: axis("turn"), y: axis("TTFT (ms)", { beginAtZero: true }) } },
    });
  }

  // TTFT P50 of requests whose shared prefix was warm and cold, per cell with a shared prefix.
  function drawPrefixWarmth(container, items) {
    const withPrefix = items.filter((i) => i.result.generation.shared_prefix);
    if (!withPrefix.length) return;
    const p50 = (i, kind) => summaryAt(i.result.generation.shared_prefix[`ttft_${kind}_ms`], "p50");
    const chart = llmPanel(container, "llm-prefix", "TTFT with a warm and a cold shared prefix",
      "P50 time to first token of requests whose prefix had been sent before (warm) and of the first of each prefix (cold). " +
      "An engine that keeps prefixes shows warm well below cold; one that does not shows them alike.",
      withPrefix.map((i) => {
        const p = i.result.generation.shared_prefix;
        return `${i.label}: warm ${readable(p50(i, "warm"))} ms (${p.warm_requests} requests), cold ${readable(p50(i, "cold"))} ms (${p.cold_requests})`;
      }));
    chart.panel.dataset.cells = String(withPrefix.length);
    chart.draw({
      type: "bar",
      data: {
        labels: withPrefix.map((i) => i.label),
        datasets: [{ label: "warm prefix P50", data: withPrefix.map((i) => p50(i, "warm")), backgroundColor: "#1f77b4" },
                   { label: "cold prefix P50", data: withPrefix.map((i) => p50(i, "cold")), backgroundColor: "#ff7f0e" }],
      },
      options: { scales: { y: axis("TTFT P50 (ms)", { beginAtZero: true }) } },
    });
  }

  // ------------------------------------------------------------ SLOs the reader moves

  const SLO_COLUMNS = ["cell", "requests", "good", "goodput req/s", "good share", "TTFT P99 ms", "TPOT P99 ms", "e2e P99 ms", "verdict"];

  function sloRow(item, limits) {
    const verdict = judge(item.result, limits);
    if (!verdict)
      return el("tr", { dataset: { label: item.label, verdict: "no records" } }, el("td", {}, item.label),
                el("td", { colspan: String(SLO_COLUMNS.length - 1), class: "unavailable" },
                   "no per-request latencies in this result (written before they were kept): not judged here"));
    return el("tr", { dataset: { label: item.label, verdict: verdict.meets ? "meets" : "misses", goodput: String(verdict.goodput),
                                 good: String(verdict.good), ttftP99: String(verdict.p99.ttft ?? ""), tpotP99: String(verdict.p99.tpot ?? "") } },
      el("td", {}, item.label), countCell(verdict.requests), countCell(verdict.good), numberCell(verdict.goodput),
      numberCell(verdict.requests ? verdict.good / verdict.requests : null), numberCell(verdict.p99.ttft), numberCell(verdict.p99.tpot),
      numberCell(verdict.p99.e2e),
      el("td", { class: verdict.meets ? "status-ok" : "status-bad", title: verdict.misses.join("; ") || null },
         verdict.meets ? "meets" : `misses: ${verdict.misses.join("; ")}`));
  }

  function sloPanel(items) {
    // The group's first run with limits, in the order the results were given (the table sorts its rows).
    const limits = initialLimits([...items].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((i) => i.result));
    const body = el("tbody");
    const render = () => body.replaceChildren(...items.map((item) => sloRow(item, limits)));
    const input = (key, label) => {
      const field = el("input", { type: "number", min: "0", step: "any", name: key, value: limits[key] ? String(limits[key]) : "",
                                  placeholder: "none", "aria-label": `${label} limit in ms` });
      field.addEventListener("input", () => {
        const value = Number(field.value);
        limits[key] = field.value.trim() === "" || !(value > 0) ? 0 : value;
        render();
      });
      return el("label", {}, `${label} \u2264 `, field, " ms");
    };
    render();
    return el("div", { class: "panel slo", dataset: { panel: "slo" } },
      el("h3", {}, "Service-level objectives you can move"),
      el("p", { class: "hint" },
         "Limits on each request's time to first token, time per output token and end-to-end latency (empty: none). " +
         "Goodput counts the requests within every limit per second of the measured phase; a cell meets the limits when each P99 " +
         "(nearest rank over its requests) is within its limit, with no errors and, under an arrival rate, 95% of it achieved. " +
         "Counted here from every request's latencies, as the run counts its own goodput. Opens with the limits the first run used."),
      el("div", { class: "slo-limits" }, input("ttft_ms", "TTFT"), " ", input("tpot_ms", "TPOT"), " ",
         input("e2e_ms", "end to end")),
      el("div", { class: "table-wrap" },
         el("table", { class: "slo" }, el("thead", {}, el("tr", {}, SLO_COLUMNS.map((c, i) => el("th", { class: i > 0 && i < 8 ? "num" : null }, c)))),
            body)));
  }

  // ------------------------------------------------------------ entry point

  function draw(container, items) {
    const notes = [];
    ScenarioCharts.drawEach(container, [
      ["LLM Pareto", () => drawParetoFronts(container, items, notes)],
      ["Turns", () => drawTurns(container, items)],
      ["Prefix warmth", () => drawPrefixWarmth(container, items)],
    ], notes, "llm-notes", "LLM charts not drawn");
  }

  return { draw, sloPanel, judge, nearestRank, initialLimits };
})();
