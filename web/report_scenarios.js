// infermark HTML report: the study and scenario charts of one model group (threads, ramp, soak,
// pulse, batch, Pareto frontier of like cells, per-shape latency, pipeline modes). src/report/html_report.cpp
// inlines this file before the page's main script; its helpers (el, chartPanel, drawChart, axis,
// colorOf, isNumber, readable, percentileOf, threadsOf) are looked up when a chart is drawn.
// Only one global name, ScenarioCharts, so nothing here can collide with the main script.
// Every chart reads what it needs defensively: a result lacking a field draws nothing and adds
// one line to the group's "Charts not drawn" note, never an exception.
"use strict";

const ScenarioCharts = (() => {
  const FADED = "rgba(87, 96, 110, 0.35)";
  const MARK = "#cf222e";

  // ------------------------------------------------------------ pure computations (unit-testable)

  // Least-squares line through {x, y} points; null with fewer than 2 distinct x.
  function leastSquares(points) {
    const n = points.length;
    if (n < 2) return null;
    const meanX = points.reduce((s, p) => s + p.x, 0) / n;
    const meanY = points.reduce((s, p) => s + p.y, 0) / n;
    let sxx = 0, sxy = 0;
    for (const p of points) {
      sxx += (p.x - meanX) ** 2;
      sxy += (p.x - meanX) * (p.y - meanY);
    }
    if (!(sxx > 0)) return null;
    const slope = sxy / sxx;
    return { slope, intercept: meanY - slope * meanX };
  }

  // Indices of the cells no other cell beats on both axes: none has a P99 as low and a throughput
  // as high with one of them strictly better (the study summary's frontier, study_summary.cpp).
  function paretoFrontier(points) {
    const dominates = (b, a) => b.p99 <= a.p99 && b.rate >= a.rate && (b.p99 < a.p99 || b.rate > a.rate);
    return points.map((a, i) => (points.some((b, j) => j !== i && dominates(b, a)) ? -1 : i)).filter((i) => i >= 0);
  }

  // Cells that may share one frontier, in first-seen order: the same origin (in-process, served
  // and remote latencies time different spans) and the same batch (a batch-7 query's P99 and rate
  // are not a batch-1 query's). Returns [{origin, batch, cells}].
  function likeGroups(cells) {
    const groups = new Map();
    for (const cell of cells) {
      const origin = cell.result?.origin ?? "in_process";
      const batch = cell.result?.scenario?.batch ?? 1;
      const key = `${origin}\u001f${batch}`;
      if (!groups.has(key)) groups.set(key, { origin, batch, cells: [] });
      groups.get(key).cells.push(cell);
    }
    return [...groups.values()];
  }

  // Expected arrivals by time t of an open-loop schedule [{duration_s, rate_qps}, ...].
  function arrivalsBy(schedule, t) {
    let start = 0, total = 0;
    for (const segment of schedule) {
      total += segment.rate_qps * Math.max(0, Math.min(t, start + segment.duration_s) - start);
      start += segment.duration_s;
    }
    return total;
  }

  // The offered rate as a step line: a point at each segment's start and end.
  function scheduleSteps(schedule) {
    const points = [];
    let start = 0;
    for (const segment of schedule) {
      points.push({ x: start, y: segment.rate_qps }, { x: start + segment.duration_s, y: segment.rate_qps });
      start += segment.duration_s;
    }
    return points;
  }

  // One point per x: where a configuration was measured twice at one x (a thread count in two
  // runs), the later run's, so a curve never zigzags between repeats.
  function latestPerX(points) {
    const byX = new Map();
    for (const p of points) if (!byX.has(p.x) || p.startedAt > byX.get(p.x).startedAt) byX.set(p.x, p);
    return [...byX.values()].sort((a, b) => a.x - b.x);
  }

  const elementsOf = (shapeText) => String(shapeText).match(/\d+/g)?.reduce((product, d) => product * Number(d), 1) ?? 0;

  // ------------------------------------------------------------ drawing helpers

  // Vertical and horizontal guide lines with labels: the thread rule, the knee, the recovery.
  function guidePlugin({ vertical = [], horizontal = [] }) {
    return {
      id: "guides",
      afterDatasetsDraw(chart) {
        const { ctx, chartArea, scales } = chart;
        ctx.save();
        ctx.font = "12px system-ui, sans-serif";
        ctx.lineWidth = 1.5;
        for (const line of vertical) {
          const x = scales.x.getPixelForValue(line.x);
          if (!(x >= chartArea.left - 1 && x <= chartArea.right + 1)) continue;
          ctx.strokeStyle = ctx.fillStyle = line.color || MARK;
          ctx.setLineDash(line.dash || [6, 4]);
          ctx.beginPath(); ctx.moveTo(x, chartArea.top); ctx.lineTo(x, chartArea.bottom); ctx.stroke();
          ctx.setLineDash([]);
          const width = ctx.measureText(line.label).width;
          const textX = x + 4 + width > chartArea.right ? x - 4 - width : x + 4;
          ctx.fillText(line.label, textX, chartArea.top + 14 + 14 * (line.row || 0));
        }
        for (const line of horizontal) {
          const scale = scales[line.axis || "y"];
          const y = scale.getPixelForValue(line.y);
          if (!(y >= chartArea.top - 1 && y <= chartArea.bottom + 1)) continue;
          ctx.strokeStyle = ctx.fillStyle = line.color || MARK;
          ctx.setLineDash(line.dash || [2, 3]);
          ctx.beginPath(); ctx.moveTo(chartArea.left, y); ctx.lineTo(chartArea.right, y); ctx.stroke();
          ctx.setLineDash([]);
          ctx.fillText(line.label, chartArea.left + 4, y - 4);
        }
        ctx.restore();
      },
    };
  }

  // Shaded spans of the x axis (a pulse's burst), each {from, to, label}.
  function bandPlugin(bands) {
    return {
      id: "bands",
      beforeDatasetsDraw(chart) {
        const { ctx, chartArea, scales } = chart;
        ctx.save();
        for (const band of bands) {
          const left = scales.x.getPixelForValue(band.from);
          const right = scales.x.getPixelForValue(band.to);
          ctx.fillStyle = "rgba(207, 34, 46, 0.10)";
          ctx.fillRect(left, chartArea.top, right - left, chartArea.bottom - chartArea.top);
          ctx.fillStyle = MARK;
          ctx.font = "12px system-ui, sans-serif";
          ctx.fillText(band.label, left + 4, chartArea.bottom - 6);
        }
        ctx.restore();
      },
    };
  }

  // A chart panel tagged with its kind (data-chart) and the facts it shows as text under it, so a
  // reader (and the browser test) can read the marked values without the canvas.
  function scenarioPanel(container, kind, title, hint, facts) {
    const panel = chartPanel(container, title, hint);
    panel.dataset.chart = kind;
    return {
      panel,
      draw(config) {
        drawChart(panel, config);
        if (facts.length) panel.append(el("ul", { class: "notes chart-facts" }, facts.map((f) => el("li", {}, f))));
      },
    };
  }

  // The right-hand axis of a chart with two: P99 beside a rate, RSS beside P99.
  const rightAxis = (title, extra) =>
    axis(title, Object.assign({ position: "right", beginAtZero: true, grid: { drawOnChartArea: false } }, extra));

  // A line chart over a linear x with a left (y) and right (y1) value axis.
  function drawTwoAxes(chart, datasets, { x, y, y1, plugins = [] }) {
    chart.draw({ type: "line", data: { datasets }, options: { scales: { x, y, y1 } }, plugins });
  }

  const measuredRate = (r) => (r.throughput?.inferences_per_s > 0 ? r.throughput.inferences_per_s : null);
  const p99Of = (r) => percentileOf(r, "p99")?.value ?? null;
  const signed = (value) => `${value >= 0 ? "+" : ""}${readable(value)}`;

  // ------------------------------------------------------------ threads

  function threadScalingSeries(cells) {
    const series = new Map();
    for (const cell of cells) {
      const r = cell.result;
      const threads = threadsOf(r);
      if (threads === null || !measuredRate(r)) continue;
      const name = [r.backend?.name, r.scenario?.name, r.settings?.requested?.precision, `batch ${r.scenario?.batch}`].join(" ");
      if (!series.has(name)) series.set(name, []);
      series.get(name).push({ x: threads, y: r.throughput.inferences_per_s, startedAt: r.started_at || "" });
    }
    return [...series].map(([name, points]) => ({ name, points: latestPerX(points) })).filter((s) => s.points.length > 1);
  }

  // Inferences/s by thread count, one line per backend and configuration, with the rule of thumb
  // "about 1.5 x physical cores is best" as a vertical line.
  function drawThreads(container, cells, notes) {
    const series = threadScalingSeries(cells);
    if (!series.length) return;
    const cores = cells.map((c) => c.result.environment?.physical_cores).find((n) => isNumber(n) && n > 0);
    const rule = cores ? Math.round(1.5 * cores) : null;
    if (!rule) notes.push("Thread scaling: the 1.5 \u00d7 physical cores rule is not marked: the results record no environment.physical_cores.");
    const facts = series.map((s) => {
      const best = s.points.reduce((a, b) => (b.y > a.y ? b : a));
      const atRule = rule ? s.points.find((p) => p.x === rule) : null;
      const ruleText = !rule ? "" : atRule
        ? `; at ${rule} threads ${readable(atRule.y)}/s (${signed((atRule.y / best.y - 1) * 100)}%), the rule ${atRule.x === best.x ? "holds" : "does not hold here"}`
        : `; ${rule} threads not measured`;
      return `${s.name}: best at ${best.x} thread${best.x === 1 ? "" : "s"} (${readable(best.y)} inferences/s)${ruleText}`;
    });
    const ruleLabel = rule ? `1.5 \u00d7 ${cores} physical cores = ${rule} threads` : null;
    const chart = scenarioPanel(container, "threads", "Thread scaling",
      "Inferences/s by the intra-op thread count each framework really used (a count measured twice: the later run)." + (rule ? ` Dashed: ${ruleLabel} (rule of thumb).` : ""), facts);
    if (rule) chart.panel.dataset.rule = String(rule);
    const maxThreads = Math.max(...series.flatMap((s) => s.points.map((p) => p.x)));
    chart.draw({
      type: "line",
      data: { datasets: series.map((s, i) => ({ label: s.name, data: s.points, borderColor: colorOf(i), backgroundColor: colorOf(i) })) },
      options: {
        scales: { x: axis("intra-op threads", { type: "linear", suggestedMax: Math.max(maxThreads, rule || 0) + 0.5, ticks: { stepSize: 1, precision: 0 } }),
                  y: axis("inferences/s", { beginAtZero: true }) },
      },
      plugins: rule ? [guidePlugin({ vertical: [{ x: rule, label: ruleLabel }] })] : [],
    });
  }

  // ------------------------------------------------------------ ramp

  // Ramp steps: x is what the ramp raised (clients or offered rate), y what was achieved; the knee
  // is the one analysis.knee_step names (the first step past it), never recomputed here.
  function drawRamp(container, cells) {
    const byRate = cells[0].result.analysis?.ramp_by === "rate";
    const levelOf = (phase) => (byRate ? phase.target_qps : phase.concurrency);
    const datasets = [];
    const facts = [];
    const kneeLines = [];
    const saturationLines = [];
    let goodputCells = 0;
    for (const cell of cells) {
      const phases = cell.result.phases;
      const analysis = cell.result.analysis || {};
      const color = colorOf(cell.index);
      datasets.push({ label: `${cell.label} throughput`, data: phases.map((p) => ({ x: levelOf(p), y: p.achieved_qps })),
                      borderColor: color, backgroundColor: color, yAxisID: "y" });
      datasets.push({ label: `${cell.label} P99`, data: phases.map((p) => ({ x: levelOf(p), y: p.latency_ms?.p99 ?? null })),
                      borderColor: color, backgroundColor: color, borderDash: [5, 4], pointStyle: "rect", yAxisID: "y1" });
      // With SLOs the requests within them per second (phases[].goodput_qps); without, it is the throughput.
      const parameters = cell.result.scenario?.parameters || {};
      if (["sla_p99_ms", "ttft_ms", "tpot_ms"].some((key) => parameters[key] > 0) && phases.some((p) => isNumber(p.goodput_qps))) {
        datasets.push({ label: `${cell.label} goodput`, data: phases.map((p) => ({ x: levelOf(p), y: p.goodput_qps ?? null })),
                        borderColor: color, backgroundColor: color, borderDash: [2, 2], pointStyle: "triangle", yAxisID: "y" });
        goodputCells += 1;
      }
      const knee = Number.isInteger(analysis.knee_step) ? phases[analysis.knee_step] : null;
      if (knee) {
        datasets.push({ label: `${cell.label} knee`, data: [{ x: levelOf(knee), y: knee.achieved_qps }], showLine: false,
                        pointStyle: "star", pointRadius: 12, borderWidth: 2, borderColor: MARK, backgroundColor: MARK, yAxisID: "y" });
        kneeLines.push({ x: levelOf(knee), label: `knee: ${knee.label}`, row: kneeLines.length });
        facts.push(`${cell.label}: knee at ${knee.label} (${analysis.knee_reason || "reason not recorded"})`);
      } else {
        facts.push(`${cell.label}: no knee found \u2014 ${analysis.knee_reason || "the result has no ramp analysis"}`);
      }
      // A rate sweep run --until-saturation stopped at its first saturated step (analysis.saturation_step).
      const saturated = Number.isInteger(analysis.saturation_step) ? phases[analysis.saturation_step] : null;
      if (saturated) {
        saturationLines.push({ x: levelOf(saturated), label: `saturated: ${saturated.label}`, row: kneeLines.length + saturationLines.length,
                               color: "#8250df", dash: [2, 3] });
        facts.push(`${cell.label}: saturated at ${saturated.label} (${analysis.saturation_reason || "reason not recorded"})`);
      }
    }
    const chart = scenarioPanel(container, "ramp", `Throughput and P99 vs ${byRate ? "offered rate" : "concurrency"} (ramp)`,
      "Solid: achieved queries/s per step; dashed: step P99 (right axis); dotted, where the run had SLOs: goodput, the " +
      "queries/s within them; star and red line: the knee (analysis.knee_step); a 'saturated' line: the step where a " +
      "rate sweep stopped (analysis.saturation_step).", facts);
    chart.panel.dataset.knee = kneeLines.length ? kneeLines.map((k) => k.label).join("; ") : "none";
    chart.panel.dataset.saturation = saturationLines.length ? saturationLines.map((k) => k.label).join("; ") : "none";
    chart.panel.dataset.goodputCells = String(goodputCells);
    drawTwoAxes(chart, datasets, {
      x: axis(byRate ? "offered rate (queries/s)" : "concurrent clients", { type: "linear" }),
      y: axis("achieved queries/s", { beginAtZero: true }),
      y1: rightAxis("P99 (ms)"),
      plugins: [guidePlugin({ vertical: [...kneeLines, ...saturationLines] })],
    });
  }

  function drawRamps(container, cells, notes) {
    const byAxis = new Map();
    for (const cell of cells.filter((c) => c.result.scenario?.name === "ramp")) {
      if (!cell.result.phases?.length) {
        notes.push(`Ramp of ${cell.label} not drawn: the result has no phases (steps).`);
        continue;
      }
      const by = cell.result.analysis?.ramp_by || "concurrency";
      byAxis.set(by, [...(byAxis.get(by) || []), cell]);
    }
    for (const ramps of byAxis.values()) drawRamp(container, ramps);
  }

  // ------------------------------------------------------------ soak

  function trendFacts(what, trend, fitted, perMinute) {
    if (!trend) return `${what}: no trend in the result's analysis`;
    const stored = isNumber(trend.slope_per_min) ? `${signed(trend.slope_per_min)} ${trend.unit || ""}/min` : "no slope (too few points)";
    const drawn = fitted ? `; line drawn: ${signed(fitted.slope * perMinute)} ${trend.unit || ""}/min` : "";
    return `${what}: ${trend.verdict} (${trend.points} points, slope ${stored}${drawn})`;
  }

  // Endpoints of the least-squares line over the points' time span, as a dataset.
  function trendDataset(points, fit, label, color, yAxisID) {
    const xs = points.map((p) => p.x);
    const [from, to] = [Math.min(...xs), Math.max(...xs)];
    return { label, data: [{ x: from, y: fit.intercept + fit.slope * from }, { x: to, y: fit.intercept + fit.slope * to }],
             borderColor: color, backgroundColor: color, borderDash: [8, 4], borderWidth: 2, pointRadius: 0, yAxisID };
  }

  // P99 per interval and RSS over the soak phase, each with its least-squares trend; the verdict
  // is analysis.soak's. The RSS points are the last `memory.points` resource samples: those the
  // verdict was computed from (the samples from the soak phase's start on), shifted to start at 0.
  function drawSoak(container, cell, notes) {
    const rows = cell.result.time_series;
    const soak = cell.result.analysis?.soak;
    if (!rows?.length) return notes.push(`Soak of ${cell.label} not drawn: the result has no time_series.`);
    const latency = rows.filter((r) => isNumber(r.p99_ms) && r.completed > 0).map((r) => ({ x: r.t_s, y: r.p99_ms }));
    const samples = cell.result.resources?.samples || [];
    const memoryPoints = soak?.memory?.points > 0 ? samples.slice(-soak.memory.points) : [];
    const rss = memoryPoints.map((s) => ({ x: s.t_s - memoryPoints[0].t_s, y: s.rss_mb }));
    if (!rss.length) notes.push(`Soak of ${cell.label}: RSS not drawn: ${samples.length ? "the result has no soak memory trend" : "the result has no resource samples"}.`);
    const latencyFit = leastSquares(latency);
    const memoryFit = leastSquares(rss);
    const datasets = [
      { label: "P99 ms per interval", data: latency, borderColor: "#bc4c00", backgroundColor: "#bc4c00", pointRadius: 2, yAxisID: "y" },
      { label: "RSS MiB", data: rss, borderColor: "#8250df", backgroundColor: "#8250df", pointRadius: 0, borderWidth: 1.5, yAxisID: "y1" },
    ];
    if (latencyFit) datasets.push(trendDataset(latency, latencyFit, "P99 trend", "#9a6700", "y"));
    if (memoryFit) datasets.push(trendDataset(rss, memoryFit, "RSS trend", "#6639ba", "y1"));
    const verdict = soak?.verdict || "no verdict (the result has no soak analysis)";
    const facts = [`verdict: ${verdict}`, trendFacts("P99", soak?.latency, latencyFit, 60), trendFacts("RSS", soak?.memory, memoryFit, 60)];
    // The RSS axis spans at least the material change either side of the mean, so noise of a
    // few hundred KiB does not look like a leak.
    const meanRss = rss.reduce((sum, p) => sum + p.y, 0) / Math.max(rss.length, 1);
    const material = isNumber(soak?.memory?.material_threshold) ? soak.memory.material_threshold : Math.max(10, 0.05 * meanRss);
    const chart = scenarioPanel(container, "soak", `Soak: ${cell.label}`,
      "P99 of each interval (left) and resident memory (right) over the soak phase; dashed: least-squares trend lines. " +
      "The verdict is the result's (a trend is rising when its slope's 95% interval is above 0 and the change over the run is material).", facts);
    chart.panel.dataset.verdict = verdict;
    if (latencyFit) chart.panel.dataset.latencySlopePerMin = String(latencyFit.slope * 60);
    if (memoryFit) chart.panel.dataset.memorySlopePerMin = String(memoryFit.slope * 60);
    drawTwoAxes(chart, datasets, {
      x: axis("seconds since the soak phase began", { type: "linear", min: 0 }),
      y: axis("P99 (ms)", { beginAtZero: true }),
      y1: rightAxis("RSS (MiB)", { beginAtZero: false, suggestedMin: meanRss - material, suggestedMax: meanRss + material }),
    });
  }

  // ------------------------------------------------------------ pulse

  // Offered rate (the schedule), achieved throughput, P99 per interval, and an estimate of the
  // backlog; the burst shaded, the recovery limit and the recovery time marked (analysis.pulse).
  function drawPulse(container, cell, notes) {
    const rows = cell.result.time_series;
    const pulse = cell.result.analysis?.pulse;
    if (!rows?.length) return notes.push(`Pulse of ${cell.label} not drawn: the result has no time_series.`);
    const schedule = (cell.result.scenario?.parameters?.schedule || []).filter((s) => isNumber(s.duration_s) && isNumber(s.rate_qps));
    if (!schedule.length) notes.push(`Pulse of ${cell.label}: offered rate and backlog not drawn: scenario.parameters.schedule is missing.`);
    const interval = rows.length > 1 ? rows[1].t_s - rows[0].t_s : 0.5;
    let finished = 0;
    const backlog = schedule.length ? rows.map((r) => {
      finished += (r.completed || 0) + (r.errors || 0);
      const end = r.t_s + interval;
      return { x: end, y: Math.max(0, arrivalsBy(schedule, end) - finished) };
    }) : [];
    const pointRadius = rows.length > 40 ? 0 : 2;
    const datasets = [
      { label: "offered queries/s", data: scheduleSteps(schedule), borderColor: "#57606a", backgroundColor: "#57606a", pointRadius: 0, borderWidth: 2, yAxisID: "y" },
      { label: "completed queries/s", data: rows.map((r) => ({ x: r.t_s, y: r.throughput_per_s })), borderColor: "#0969da", backgroundColor: "#0969da", pointRadius, yAxisID: "y" },
      { label: "backlog (estimated)", data: backlog, borderColor: "#1a7f37", backgroundColor: "#1a7f37", borderDash: [2, 3], pointRadius: 0, yAxisID: "y" },
      { label: "P99 ms", data: rows.map((r) => ({ x: r.t_s, y: r.p99_ms })), borderColor: "#bc4c00", backgroundColor: "#bc4c00", pointRadius, yAxisID: "y1", spanGaps: false },
    ];
    const facts = [];
    const vertical = [];
    const horizontal = [];
    const bands = [];
    if (pulse && isNumber(pulse.burst_start_s) && isNumber(pulse.burst_end_s)) {
      bands.push({ from: pulse.burst_start_s, to: pulse.burst_end_s, label: "burst" });
      facts.push(`P99 ${readable(pulse.baseline_p99_ms)} ms before the burst, peak ${readable(pulse.peak_p99_ms)} ms; ` +
                 `${pulse.burst_errors_and_rejections ?? 0} errors and rejections during the burst`);
      if (isNumber(pulse.recovery_limit_p99_ms)) horizontal.push({ y: pulse.recovery_limit_p99_ms, axis: "y1", label: "recovery limit (1.5 \u00d7 baseline P99)" });
      if (isNumber(pulse.time_to_recover_s)) {
        vertical.push({ x: pulse.burst_end_s + pulse.time_to_recover_s, label: `recovered after ${readable(pulse.time_to_recover_s)} s`, color: "#1a7f37" });
        facts.push(`recovery: P99 back within ${readable(pulse.recovery_limit_p99_ms)} ms ${readable(pulse.time_to_recover_s)} s after the burst ended`);
      } else {
        facts.push("recovery: none \u2014 P99 did not stay within the limit before the run ended");
      }
    } else {
      notes.push(`Pulse of ${cell.label}: burst and recovery not marked: the result has no pulse analysis.`);
    }
    facts.push("queue depth is not measured here (the load generator records no queue length); the dotted backlog " +
               "estimates it as the schedule's expected arrivals minus the queries finished (completed or failed)");
    const chart = scenarioPanel(container, "pulse", `Pulse: ${cell.label}`,
      "Offered and completed queries/s and the estimated backlog (left), P99 per interval (right). Shaded: the burst; " +
      "green line: where P99 stays within the recovery limit (analysis.pulse).", facts);
    chart.panel.dataset.recovery = isNumber(pulse?.time_to_recover_s) ? String(pulse.time_to_recover_s) : "none";
    drawTwoAxes(chart, datasets, {
      x: axis("seconds since the phase began", { type: "linear", min: 0 }),
      y: axis("queries/s \u00b7 queries waiting", { beginAtZero: true }),
      y1: rightAxis("P99 (ms)"),
      plugins: [bandPlugin(bands), guidePlugin({ vertical, horizontal })],
    });
  }

  // ------------------------------------------------------------ other open-loop runs over time

  function drawTimeSeries(container, cell) {
    const rows = cell.result.time_series;
    const pointRadius = rows.length > 30 ? 0 : 3;  // a short run has few intervals: show each
    const chart = scenarioPanel(container, "time-series", `Over time: ${cell.label}`,
      "Per-interval throughput (left axis) and P99 latency (right axis).", []);
    drawTwoAxes(chart, [
      { label: "throughput/s", data: rows.map((r) => ({ x: r.t_s, y: r.throughput_per_s })),
        borderColor: "#0969da", backgroundColor: "#0969da", pointRadius, yAxisID: "y" },
      { label: "P99 ms", data: rows.map((r) => ({ x: r.t_s, y: r.p99_ms })),
        borderColor: "#bc4c00", backgroundColor: "#bc4c00", pointRadius, yAxisID: "y1", spanGaps: false },
    ], {
      x: axis("seconds since the phase began", { type: "linear", min: 0 }),
      y: axis("queries/s", { beginAtZero: true }),
      y1: rightAxis("P99 (ms)"),
    });
  }

  // ------------------------------------------------------------ batch

  // Cells that differ only in batch: same backend, scenario, precision, threads and shapes.
  function batchSeries(cells) {
    const series = new Map();
    for (const cell of cells) {
      const r = cell.result;
      const batch = r.scenario?.batch;
      if (!isNumber(batch) || !measuredRate(r) || r.pipeline) continue;
      const name = [r.backend?.name, r.scenario?.name, r.settings?.requested?.precision, threadsOf(r) === null ? "" : `t${threadsOf(r)}`]
        .filter(Boolean).join(" ");
      if (!series.has(name)) series.set(name, []);
      series.get(name).push({ x: batch, batch, p99: p99Of(r), rate: r.throughput.inferences_per_s, startedAt: r.started_at || "" });
    }
    return [...series].map(([name, points]) => ({ name, points: latestPerX(points) })).filter((s) => s.points.length > 1);
  }

  function drawBatch(container, cells) {
    const series = batchSeries(cells);
    if (!series.length) return;
    const datasets = series.flatMap((s, i) => [
      { label: `${s.name} inferences/s`, data: s.points.map((p) => ({ x: String(p.batch), y: p.rate })), borderColor: colorOf(i), backgroundColor: colorOf(i), yAxisID: "y" },
      { label: `${s.name} P99 ms`, data: s.points.map((p) => ({ x: String(p.batch), y: p.p99 })), borderColor: colorOf(i), backgroundColor: colorOf(i),
        borderDash: [5, 4], pointStyle: "rect", yAxisID: "y1" },
    ]);
    const facts = series.map((s) => {
      const best = s.points.reduce((a, b) => (b.rate > a.rate ? b : a));
      return `${s.name}: most inferences/s at batch ${best.batch} (${readable(best.rate)}/s, P99 ${readable(best.p99)} ms per query)`;
    });
    const batches = [...new Set(series.flatMap((s) => s.points.map((p) => p.batch)))].sort((a, b) => a - b);
    const chart = scenarioPanel(container, "batch", "Batch size",
      "Solid: inferences/s (queries/s \u00d7 batch); dashed: P99 of a whole batched query (right axis). One line per backend and " +
      "configuration; batch sizes evenly spaced; a batch measured twice shows the later run.", facts);
    drawTwoAxes(chart, datasets, {
      // One slot per batch measured: sizes usually double, and each gets a labelled tick.
      x: axis("batch", { type: "category", labels: batches.map(String) }),
      y: axis("inferences/s", { beginAtZero: true }),
      y1: rightAxis("P99 per query (ms)"),
    });
  }

  // ------------------------------------------------------------ Pareto frontier

  const ORIGIN_TEXT = { in_process: "in-process", served: "served (server-side latency)", remote: "remote (client-side latency)" };

  // One frontier per group of like cells (likeGroups) with two or more measured; a group named in
  // the title when the model's cells fall into several.
  function drawPareto(container, cells, notes) {
    const points = cells.map((cell) => ({ cell, rate: measuredRate(cell.result), p99: p99Of(cell.result) }))
      .filter((p) => isNumber(p.rate) && isNumber(p.p99));
    const groups = likeGroups(points.map((p) => ({ ...p, result: p.cell.result })));
    const alone = groups.filter((g) => g.cells.length < 2);
    if (groups.length > 1 && alone.length)
      notes.push(`Pareto: ${alone.map((g) => `${g.cells[0].cell.label} (${ORIGIN_TEXT[g.origin] ?? g.origin}, batch ${g.batch})`).join(", ")} ` +
                 "not drawn: no other cell of the same origin and batch to compare with.");
    for (const group of groups.filter((g) => g.cells.length >= 2))
      drawParetoGroup(container, group, groups.length > 1);
  }

  function drawParetoGroup(container, group, named) {
    const points = group.cells;
    const frontier = new Set(paretoFrontier(points));
    const onFrontier = points.filter((_, i) => frontier.has(i)).sort((a, b) => a.rate - b.rate);
    const dominated = points.filter((_, i) => !frontier.has(i));
    const asPoint = (p) => ({ x: p.rate, y: p.p99, label: p.cell.label });
    const like = `${ORIGIN_TEXT[group.origin] ?? group.origin} cells at batch ${group.batch}`;
    const chart = scenarioPanel(container, "pareto", `P99 vs throughput (Pareto frontier)${named ? `: ${like}` : ""}`,
      `Each measured cell at its headline inferences/s and P99; only ${like} share this frontier (other origins time other ` +
      "spans, other batches other queries). Highlighted: the frontier, the cells no other cell beats on both " +
      "(none has as low a P99 and as high a throughput, one strictly better); faded: the dominated ones.",
      onFrontier.map((p) => `frontier: ${p.cell.label} \u2014 P99 ${readable(p.p99)} ms at ${readable(p.rate)} inferences/s`));
    chart.panel.dataset.frontier = String(onFrontier.length);
    chart.panel.dataset.dominated = String(dominated.length);
    chart.panel.dataset.origin = group.origin;
    chart.panel.dataset.batch = String(group.batch);
    chart.draw({
      type: "scatter",
      data: {
        datasets: [
          { label: `frontier (${onFrontier.length})`, data: onFrontier.map(asPoint), showLine: true, borderColor: MARK, backgroundColor: MARK,
            pointRadius: 6, pointHoverRadius: 8, borderWidth: 2 },
          { label: `dominated (${dominated.length})`, data: dominated.map(asPoint), borderColor: FADED, backgroundColor: FADED, pointRadius: 4 },
        ],
      },
      options: {
        plugins: { tooltip: { callbacks: { label: (item) => `${item.raw.label}: ${readable(item.raw.x)}/s, P99 ${readable(item.raw.y)} ms` } } },
        scales: { x: axis("inferences/s (higher is better)", { beginAtZero: true }), y: axis("P99 (ms, lower is better)", { beginAtZero: true }) },
      },
    });
  }

  // ------------------------------------------------------------ per-shape latency

  // The phase that split its latency by input shape (one group per distinct shape drawn).
  const shapeGroupsOf = (r) => (r.phases || []).map((p) => p.latency_by_group_ms).find((g) => Array.isArray(g) && g.length > 1) || null;

  function drawShapes(container, cells) {
    const withShapes = cells.map((cell) => ({ cell, groups: shapeGroupsOf(cell.result) })).filter((c) => c.groups);
    if (!withShapes.length) return;
    const shapes = [...new Set(withShapes.flatMap((c) => c.groups.map((g) => g.group)))].sort((a, b) => elementsOf(a) - elementsOf(b));
    const datasets = withShapes.map(({ cell, groups }) => ({
      label: `${cell.label} P99`, backgroundColor: colorOf(cell.index),
      data: shapes.map((shape) => groups.find((g) => g.group === shape)?.p99 ?? null),
    }));
    const facts = withShapes.map(({ cell, groups }) => {
      const p99s = groups.map((g) => g.p99).filter(isNumber);
      return `${cell.label}: ${groups.length} shapes, P99 ${readable(Math.min(...p99s))} to ${readable(Math.max(...p99s))} ms`;
    });
    const chart = scenarioPanel(container, "shapes", "Latency per input shape",
      "P99 of the queries of each input shape drawn (phases[].latency_by_group_ms), shapes ordered by size.", facts);
    chart.panel.dataset.shapes = String(shapes.length);
    chart.draw({
      type: "bar",
      data: { labels: shapes, datasets },
      options: { scales: { x: axis("input shape"), y: axis("P99 (ms)", { beginAtZero: true }) } },
    });
  }

  // ------------------------------------------------------------ pipeline modes

  const PIPELINE_MODES = ["serial", "threads", "processes"];

  function drawPipeline(container, cells, notes) {
    const runs = cells.filter((c) => c.result.pipeline);
    if (!runs.length) return;
    const order = (c) => PIPELINE_MODES.indexOf(c.result.pipeline.mode);
    runs.sort((a, b) => order(a) - order(b));
    for (const run of runs.filter((c) => !isNumber(c.result.pipeline.prediction?.queries_per_s)))
      notes.push(`Pipeline ${run.label}: no prediction in the result, only the measured rate is drawn.`);
    const facts = runs.map((c) => {
      const p = c.result.pipeline;
      const predicted = p.prediction?.queries_per_s;
      return `${p.mode}: ${readable(c.result.throughput?.queries_per_s)} queries/s measured` +
        (isNumber(predicted) ? ` vs ${readable(predicted)} predicted (${p.prediction.rule || "stage service means"})` : "") +
        `, P99 ${readable(p99Of(c.result))} ms; ${p.requests?.completed ?? "\u2013"} completed, ${p.requests?.dropped ?? 0} dropped`;
    });
    const chart = scenarioPanel(container, "pipeline", "Pipeline modes",
      "Measured queries/s of each mode against the prediction from the stages' service times (bars), and end-to-end P99 (points, right axis).", facts);
    chart.panel.dataset.modes = String(runs.length);
    chart.draw({
      type: "bar",
      data: {
        labels: runs.map((c) => c.result.pipeline.mode || c.label),
        datasets: [
          { label: "measured queries/s", backgroundColor: "#0969da", data: runs.map((c) => c.result.throughput?.queries_per_s ?? null), yAxisID: "y" },
          { label: "predicted queries/s", backgroundColor: "#8c959f", data: runs.map((c) => c.result.pipeline.prediction?.queries_per_s ?? null), yAxisID: "y" },
          { type: "line", label: "P99 ms", showLine: false, pointRadius: 6, pointStyle: "rectRot", borderColor: "#bc4c00", backgroundColor: "#bc4c00",
            data: runs.map((c) => p99Of(c.result)), yAxisID: "y1" },
        ],
      },
      options: {
        scales: { y: axis("queries/s", { beginAtZero: true }),
                  y1: rightAxis("P99 (ms)") },
      },
    });
  }

  // ------------------------------------------------------------ entry point

  // Each chart kind on its own: one that fails on odd data leaves a note, and the others draw.
  // Runs each [kind, drawer]: a drawer that throws adds a line to `notes` instead of stopping the
  // others; then one panel (data-chart `notesKind`) lists the notes, if any.
  function drawEach(container, drawers, notes, notesKind, notesTitle) {
    for (const [kind, drawKind] of drawers) {
      try {
        drawKind();
      } catch (error) {
        notes.push(`${kind} chart not drawn: ${error.message}`);
        console.warn(error);
      }
    }
    if (!notes.length) return;
    const panel = chartPanel(container, notesTitle, "What the results lack for a chart that would apply to them.");
    panel.dataset.chart = notesKind;
    panel.append(el("ul", { class: "notes" }, notes.map((n) => el("li", {}, n))));
  }

  function draw(container, measured) {
    const notes = [];
    const drawers = [
      ["Ramp", () => drawRamps(container, measured, notes)],
      ["Thread scaling", () => drawThreads(container, measured, notes)],
      ["Batch", () => drawBatch(container, measured)],
      ["Pareto", () => drawPareto(container, measured, notes)],
      ["Per-shape latency", () => drawShapes(container, measured)],
      ["Pipeline", () => drawPipeline(container, measured, notes)],
    ];
    for (const cell of measured) {
      const scenario = cell.result.scenario?.name;
      if (scenario === "soak") drawers.push(["Soak", () => drawSoak(container, cell, notes)]);
      else if (scenario === "pulse") drawers.push(["Pulse", () => drawPulse(container, cell, notes)]);
      else if ((scenario === "server" || scenario === "interactive") && cell.result.time_series?.length)
        drawers.push(["Time series", () => drawTimeSeries(container, cell)]);
    }
    drawEach(container, drawers, notes, "notes", "Charts not drawn");
  }

  return { draw, drawEach, panel: scenarioPanel, leastSquares, paretoFrontier, likeGroups, arrivalsBy };
})();
