// The HTML report in a real browser: Debian's chromium driven by playwright-core (from web/).
// Run: INFERMARK_REPORT_HTML=report.html INFERMARK_REPORT_SCREENSHOT=report.png \
//        node --test tests/e2e/report_html.test.mjs
// ctest runs it through tests/tools/html_report_test.sh (test html_report_in_chromium).
// Skipped when /usr/bin/chromium is absent; any other problem fails.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MIN_CHARTS = 4;
const MIN_SCREENSHOT_BYTES = 20 * 1024;

const chromiumMissing = !existsSync(CHROMIUM);
const skipReason = `${CHROMIUM} not found: install Debian's chromium (scripts/setup does) to run the browser test`;

function requiredEnv(name) {
  const value = process.env[name];
  assert.ok(value, `set ${name} (see the header of ${path.relative(REPO, fileURLToPath(import.meta.url))})`);
  return value;
}

// playwright-core lives in web/node_modules, not beside this file, so resolve it from there.
function loadPlaywright() {
  const webPackage = path.join(REPO, "web", "package.json");
  try {
    return createRequire(webPackage)("playwright-core");
  } catch (error) {
    throw new Error(`playwright-core not installed in web/ (${error.message}); run scripts/setup, which runs npm ci in web/`);
  }
}

// Order of a sortable column as the page shows it: each row's data-sort value.
const columnKeys = (table, column) => table.locator(`tbody tr td:nth-child(${column + 1})`)
  .evaluateAll((cells) => cells.map((cell) => cell.dataset.sort ?? cell.textContent));

// The summary table with the most rows (a model whose only cell failed has a one-row table).
async function largestSummaryTable(page) {
  const rowCounts = await page.$$eval("table.summary", (tables) => tables.map((t) => t.tBodies[0].rows.length));
  const index = rowCounts.indexOf(Math.max(...rowCounts));
  assert.ok(rowCounts[index] >= 2, `no summary table with two rows to sort (rows: ${rowCounts.join(", ")})`);
  return page.locator("table.summary").nth(index);
}

function assertSorted(keys, ascending) {
  const numbers = keys.filter((k) => k !== "").map(Number);
  const expected = [...numbers].sort((a, b) => (ascending ? a - b : b - a));
  assert.deepEqual(numbers, expected, `column not sorted ${ascending ? "ascending" : "descending"}: ${keys.join(", ")}`);
}

// A study or scenario chart panel (web/report_scenarios.js) by its data-chart kind: its data-*
// marks, hint, facts and whether it holds a canvas; one entry per panel of that kind.
const scenarioPanels = (page, kind) => page.$$eval(`[data-chart="${kind}"]`, (panels) => panels.map((panel) => ({
  marks: { ...panel.dataset },
  hint: panel.querySelector(".hint")?.textContent ?? "",
  facts: [...panel.querySelectorAll(".chart-facts li")].map((li) => li.textContent),
  canvases: panel.querySelectorAll("canvas").length,
})));

// Every panel of a kind, asserting there is at least one and each drew its chart.
async function drawnPanels(page, kind) {
  const panels = await scenarioPanels(page, kind);
  assert.ok(panels.length > 0, `no "${kind}" chart in the report`);
  panels.forEach((p, i) => assert.equal(p.canvases, 1, `"${kind}" chart ${i} has no canvas`));
  return panels;
}

// The results the page inlined, every group's cells flattened.
const inlinedCells = (page) => page.evaluate(() =>
  JSON.parse(document.getElementById("infermark-data").textContent).groups.flatMap((g) => g.cells));

const closeTo = (actual, expected, what) =>
  assert.ok(Math.abs(actual - expected) <= 1e-9 + 0.01 * Math.abs(expected), `${what}: ${actual}, expected ${expected}`);

// Opens the page named by the environment variable `envName` in chromium and waits for its charts;
// console errors, page errors and requests go into `problems`. Returns what close() needs.
async function openReport(envName, problems) {
  const html = path.resolve(requiredEnv(envName));
  assert.ok(existsSync(html), `${html}: report not found`);
  const userDataDir = mkdtempSync(path.join(tmpdir(), "infermark-chromium-"));
  const context = await loadPlaywright().chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, viewport: { width: 1400, height: 1000 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (message) => { if (message.type() === "error") problems.console.push(message.text()); });
  page.on("pageerror", (error) => problems.page.push(error.message));
  page.on("request", (request) => problems.requests.push(request.url()));
  await page.goto(pathToFileURL(html).href);
  await page.waitForSelector("body[data-charts-ready]", { timeout: 30_000 });
  return { context, page, userDataDir };
}

async function closeReport(opened) {
  await opened?.context.close();
  if (opened?.userDataDir) rmSync(opened.userDataDir, { recursive: true, force: true });
}

describe("HTML report in chromium", () => {
  const problems = { console: [], page: [], requests: [] };
  let opened;
  let page;

  before(async () => {
    if (chromiumMissing) return;
    opened = await openReport("INFERMARK_REPORT_HTML", problems);
    page = opened.page;
  });

  after(() => closeReport(opened));

  test("draws the charts", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const drawn = Number(await page.getAttribute("body", "data-charts-ready"));
    assert.ok(drawn >= MIN_CHARTS, `${drawn} charts drawn, expected at least ${MIN_CHARTS}`);
    assert.equal(await page.locator("canvas").count(), drawn, "one canvas per chart");
  });

  test("raises no console or page errors", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    assert.deepEqual(problems.page, [], "page errors");
    assert.deepEqual(problems.console, [], "console errors");
  });

  test("loads nothing but the file itself", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const external = problems.requests.filter((url) => !url.startsWith("file:") && !url.startsWith("data:"));
    assert.deepEqual(external, [], "requests beyond the report file");
  });

  test("every chart has data and distinct legend labels", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const charts = await page.$$eval("canvas", (canvases) => canvases.map((canvas) => {
      const title = canvas.closest(".panel")?.querySelector("h3")?.textContent ?? "(untitled)";
      const chart = Chart.getChart(canvas);
      if (!chart) return { title, missing: true };
      const finite = (v) => typeof v === "number" && Number.isFinite(v);
      // A number, or {x, y} with a finite y and an x that is a number or a category name.
      const point = (d) => finite(d) ||
        (d !== null && typeof d === "object" && finite(d.y) && (d.x === undefined || finite(d.x) || typeof d.x === "string"));
      return {
        title, missing: false,
        labels: chart.data.datasets.map((d) => d.label),
        points: chart.data.datasets.map((d) => (d.data || []).filter(point).length),
      };
    }));
    assert.ok(charts.length > 0, "no canvas in the page");
    for (const chart of charts) {
      assert.ok(!chart.missing, `"${chart.title}": canvas without a Chart`);
      assert.ok(chart.points.some((n) => n > 0), `"${chart.title}": no dataset with a finite data point (${chart.points.join(", ")})`);
      const duplicated = chart.labels.filter((label, i) => chart.labels.indexOf(label) !== i);
      assert.deepEqual(duplicated, [], `"${chart.title}": legend labels alike`);
    }
  });

  test("LLM cells have their own table and charts, each concurrency level named", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const tables = await page.$$eval("table.llm", (all) => all.map((table) =>
      [...table.tBodies[0].rows].map((row) => ({ label: row.cells[0].textContent, ttft: row.cells[3].dataset.sort }))));
    assert.ok(tables.length >= 3, `${tables.length} LLM tables, expected one per precision`);
    for (const rows of tables) {
      assert.ok(rows.length >= 3, `an LLM table has ${rows.length} rows, expected one per concurrency level`);
      assert.equal(new Set(rows.map((r) => r.label)).size, rows.length, `LLM rows alike: ${rows.map((r) => r.label).join(", ")}`);
      assert.ok(rows.every((r) => Number(r.ttft) > 0), "every LLM row has a TTFT");
    }
    const titles = await page.$$eval(".llm .panel h3", (hs) => hs.map((h) => h.textContent));
    for (const title of ["Inter-token latency distribution", "TTFT vs concurrency", "Throughput vs latency"])
      assert.ok(titles.includes(title), `no "${title}" chart in the LLM sections (${titles.join(", ")})`);
  });

  test("precision variants of one model are compared in one section", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const family = page.locator("section.family", { hasText: "llama-tiny" });
    assert.equal(await family.count(), 1, "no family section for llama-tiny");
    const precisions = await family.locator("table.family tbody tr td:nth-child(2)").allTextContents();
    assert.deepEqual([...new Set(precisions)].sort(), ["fp16", "q4_0", "q8_0"]);
    assert.ok(await family.locator("canvas").count() >= 1, "the family section draws no chart");
    // tiny_cnn as exported, FP16 and INT8: only the configurations every variant measured.
    const tensors = page.locator("section.family", { hasText: "tiny_cnn" });
    assert.equal(await tensors.count(), 1, "no family section for tiny_cnn");
    const rows = await tensors.locator("table.family tbody tr").evaluateAll((trs) => trs.map((tr) =>
      ({ precision: tr.cells[1].textContent, cell: tr.cells[2].textContent, agreement: tr.cells[9].textContent })));
    assert.deepEqual([...new Set(rows.map((r) => r.precision))].sort(), ["as exported", "fp16", "int8"]);
    assert.equal(new Set(rows.map((r) => r.cell)).size, rows.length, "family rows alike");
    assert.ok(rows.some((r) => r.agreement.startsWith("cos ") || r.agreement.startsWith("top-1 ")),
      `no agreement figure: ${rows.map((r) => r.agreement).join("; ")}`);
    assert.ok(await tensors.locator("canvas").count() >= 1, "the tiny_cnn family draws no chart");
  });

  test("serving results show per-variant and per-run tables", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    assert.ok(await page.locator("table.serve tbody tr").count() >= 1, "no infermark serve variant table");
    const loads = await page.locator("table.load tbody tr").count();
    assert.ok(loads >= 2, `${loads} infermark load rows, expected one per concurrency level`);
    // The A/B comparison of the two serve variants: a sortable table like the others, not Markdown.
    assert.equal(await page.locator(".serving pre").count(), 0, "A/B section as preformatted text");
    const ab = page.locator("table.ab");
    assert.equal(await ab.count(), 1, "no A/B table");
    assert.equal(await ab.locator("tbody tr").count(), 1, "one variant against the control");
    assert.ok(await ab.locator("th.sortable").count() >= 7, "A/B headers not sortable");
    assert.match(await ab.locator("tbody tr td:nth-child(3)").textContent(), /^[+-]\d+\.\d%/);
  });

  test("each model has a recommendation naming the decision trees and their guides", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const panels = page.locator(".recommendation");
    assert.ok(await panels.count() >= 1, "no recommendation");
    const picks = await page.locator(".recommendation p strong").allTextContents();
    assert.ok(picks.length >= 1 && picks.every((p) => p.length > 0), "no pick named");
    const trees = await page.locator("table.decision-branches tbody tr td:first-child").allTextContents();
    const scenario = "Which framework for the deployment scenarioAI model inference framework performance evaluation, decision tree §5";
    assert.ok(trees.some((s) => s === scenario), `no deployment-scenario branch (${trees.slice(0, 5).join(", ")})`);
    assert.ok(trees.every((s) => !/\bseed\b/i.test(s)), `a branch cites a seed (${trees.slice(0, 5).join(", ")})`);
  });

  test("paints every canvas", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const painted = await page.$$eval("canvas", (canvases) => canvases.map((canvas) => {
      const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      let count = 0;
      for (let alpha = 3; alpha < pixels.length; alpha += 4) if (pixels[alpha] !== 0) count += 1;
      return count;
    }));
    assert.ok(painted.length > 0, "no canvas in the page");
    painted.forEach((count, i) => assert.ok(count > 500, `canvas ${i} is blank (${count} painted pixels)`));
  });

  test("sorts a table by the clicked header", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const table = await largestSummaryTable(page);
    const header = table.locator("th", { hasText: "mean ms" });
    const column = await header.evaluate((th) => th.cellIndex);
    const before = await columnKeys(table, column);
    await header.click();
    const ascending = await columnKeys(table, column);
    assertSorted(ascending, true);
    await header.click();
    const descending = await columnKeys(table, column);
    assertSorted(descending, false);
    assert.notDeepEqual(ascending, descending, "rows did not move");
    assert.equal(before.length, ascending.length, "rows lost while sorting");
  });

  test("threads chart marks the 1.5 x physical cores rule", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const [threads] = await drawnPanels(page, "threads");
    const cores = (await inlinedCells(page)).map((c) => c.result.environment?.physical_cores).find((n) => n > 0);
    assert.equal(threads.marks.rule, String(Math.round(1.5 * cores)), "rule line at 1.5 x physical cores");
    assert.match(threads.hint, new RegExp(`1\\.5 \u00d7 ${cores} physical cores = ${threads.marks.rule} threads`));
    assert.ok(threads.facts.every((f) => /best at \d+ threads? \(/.test(f)), threads.facts.join("; "));
  });

  test("ramp chart marks the knee the analysis found, or says none was", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const [ramp] = await drawnPanels(page, "ramp");
    const cell = (await inlinedCells(page)).find((c) => c.result.scenario.name === "ramp");
    const knee = cell.result.phases[cell.result.analysis.knee_step ?? -1];
    assert.equal(ramp.marks.knee, knee ? `knee: ${knee.label}` : "none");
    assert.match(ramp.facts[0], knee ? /knee at / : /no knee found/);
  });

  test("Pareto chart highlights the frontier the cells make", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const panels = await drawnPanels(page, "pareto");
    const frontier = panels.reduce((n, p) => n + Number(p.marks.frontier), 0);
    assert.ok(panels.every((p) => Number(p.marks.frontier) >= 1), "a group without a frontier point");
    assert.ok(panels.some((p) => Number(p.marks.dominated) >= 1), "no dominated point in any group");
    assert.equal(panels.flatMap((p) => p.facts).filter((f) => f.startsWith("frontier:")).length, frontier);
    // Only like cells share a frontier: each chart names one origin and one batch, and the served
    // and remote tiny_cnn cells never join the in-process ones.
    assert.ok(panels.every((p) => p.marks.origin && p.marks.batch), "a Pareto chart without its origin and batch");
    const cells = await inlinedCells(page);
    const kinds = new Map();  // label -> "origin batch" of every cell so labelled (labels repeat across models)
    for (const c of cells) kinds.set(c.label, [...(kinds.get(c.label) || []), `${c.result.origin} ${c.result.scenario.batch}`]);
    for (const panel of panels)
      for (const fact of panel.facts.filter((f) => f.startsWith("frontier: "))) {
        const label = fact.slice("frontier: ".length, fact.indexOf(" \u2014 "));
        assert.ok((kinds.get(label) || []).includes(`${panel.marks.origin} ${panel.marks.batch}`),
          `${fact}: not a ${panel.marks.origin} cell at batch ${panel.marks.batch}`);
      }
    assert.ok(cells.some((c) => c.result.origin === "served") && cells.some((c) => c.result.origin === "remote"),
      "the fixture lacks served or remote results");
    const groups = await page.evaluate(() => ScenarioCharts.likeGroups([
      { result: { origin: "in_process", scenario: { batch: 1 } } }, { result: { origin: "served", scenario: { batch: 1 } } },
      { result: { origin: "in_process", scenario: { batch: 7 } } }, { result: { origin: "in_process", scenario: { batch: 1 } } }]));
    assert.deepEqual(groups.map((g) => [g.origin, g.batch, g.cells.length]),
      [["in_process", 1, 2], ["served", 1, 1], ["in_process", 7, 1]]);
    // The rule on made-up points: (10/s, 5 ms) is beaten by (20/s, 4 ms); (30/s, 9 ms) by none.
    const indices = await page.evaluate(() => ScenarioCharts.paretoFrontier(
      [{ rate: 10, p99: 5 }, { rate: 20, p99: 4 }, { rate: 30, p99: 9 }, { rate: 20, p99: 4 }]));
    assert.deepEqual(indices, [1, 2, 3]);
  });

  test("LLM Pareto fronts are the ones the cells make, per origin and metric", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const fronts = await page.$$eval('[data-chart="llm-pareto"]', (panels) => panels.map((panel) => ({
      group: [...document.querySelectorAll("section.group")].indexOf(panel.closest("section.group")),
      ...panel.dataset,
      frontier: [...panel.querySelectorAll(".chart-facts li")].map((li) => li.textContent)
        .map((f) => f.slice("frontier: ".length, f.indexOf(" \u2014 "))),
      canvases: panel.querySelectorAll("canvas").length,
    })));
    assert.ok(fronts.some((f) => f.metric === "ttft") && fronts.some((f) => f.metric === "tpot"), "no TTFT or TPOT front");
    assert.ok(fronts.some((f) => Number(f.dominated) >= 1), "no dominated LLM cell anywhere");
    const groups = await page.evaluate(() => JSON.parse(document.getElementById("infermark-data").textContent).groups);
    for (const front of fronts) {
      assert.equal(front.canvases, 1);
      const points = groups[front.group].cells
        .filter((c) => c.result.generation && (c.result.origin ?? "in_process") === front.origin)
        .map((c) => ({ label: c.label, rate: c.result.generation.output_tokens_per_s,
                       p99: c.result.generation[`${front.metric}_ms`]?.percentiles?.p99?.value }))
        .filter((p) => Number.isFinite(p.rate) && p.rate > 0 && Number.isFinite(p.p99));
      const beaten = (a) => points.some((b) => b !== a && b.p99 <= a.p99 && b.rate >= a.rate && (b.p99 < a.p99 || b.rate > a.rate));
      assert.deepEqual([...front.frontier].sort(), points.filter((p) => !beaten(p)).map((p) => p.label).sort(),
        `${front.metric} front of group ${front.group}`);
      assert.equal(Number(front.frontier.length) + Number(front.dominated), points.length);
    }
  });

  test("SLO panel counts goodput and verdicts again as the run did, and follows the limits moved", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const groups = await page.evaluate(() => JSON.parse(document.getElementById("infermark-data").textContent).groups);
    const groupIndex = groups.findIndex((g) => g.cells.some((c) => c.result.scenario?.parameters?.ttft_ms === 50));
    assert.ok(groupIndex >= 0, "the fixture lacks the LLM run with TTFT and TPOT limits");
    const cellOf = (label) => groups[groupIndex].cells.find((c) => c.label === label);
    const panel = page.locator(`#model-${groupIndex} [data-panel="slo"]`);
    const rows = () => panel.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => ({ ...tr.dataset })));
    const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a}, expected ${b}`);

    // Opens with the limits of the first cell that ran with any.
    const first = groups[groupIndex].cells.map((c) => c.result.scenario.parameters).find((p) => p.ttft_ms || p.tpot_ms || p.sla_p99_ms);
    assert.equal(await panel.locator('input[name="ttft_ms"]').inputValue(), first.ttft_ms ? String(first.ttft_ms) : "");
    assert.equal(await panel.locator('input[name="tpot_ms"]').inputValue(), first.tpot_ms ? String(first.tpot_ms) : "");
    // Under the limited run's own limits: its goodput and verdict exactly.
    await panel.locator('input[name="ttft_ms"]').fill("50");
    await panel.locator('input[name="tpot_ms"]').fill("5");
    await panel.locator('input[name="e2e_ms"]').fill("");
    const limited = (await rows()).find((r) => cellOf(r.label)?.result.scenario.parameters.ttft_ms === 50);
    assert.ok(limited, "no SLO row for the limited run");
    const own = cellOf(limited.label).result;
    assert.ok(own.generation.request_latencies, "the run kept no per-request latencies");
    close(Number(limited.goodput), own.generation.goodput_rps, `${limited.label} goodput`);
    close(Number(limited.ttftP99), own.generation.ttft_ms.percentiles.p99.value, `${limited.label} TTFT P99`);
    assert.equal(limited.verdict, own.analysis.sla.passed ? "meets" : "misses", `${limited.label} verdict`);

    // No limits: every request is good, which is the goodput of every run made without any.
    for (const name of ["ttft_ms", "tpot_ms", "e2e_ms"]) await panel.locator(`input[name="${name}"]`).fill("");
    const open = await rows();
    assert.ok(open.length >= 4, `${open.length} SLO rows`);
    for (const row of open) {
      const r = cellOf(row.label).result;
      close(Number(row.good), r.generation.request_latencies.ttft_ns.length, `${row.label} good requests without limits`);
      close(Number(row.goodput), r.generation.request_latencies.ttft_ns.length / r.generation.wall_s, `${row.label} goodput`);
      const p = r.scenario.parameters;
      if (!p.ttft_ms && !p.tpot_ms && !p.sla_p99_ms) close(Number(row.goodput), r.generation.goodput_rps, `${row.label} own goodput`);
    }

    // A TTFT limit no request can meet: nothing is good and every cell misses it.
    await panel.locator('input[name="ttft_ms"]').fill("0.000001");
    for (const row of await rows()) {
      assert.equal(row.good, "0", `${row.label}: good requests under a 1 ns TTFT limit`);
      assert.equal(row.verdict, "misses", `${row.label}: verdict under a 1 ns TTFT limit`);
    }
    await panel.locator('input[name="ttft_ms"]').fill("50");
    await panel.locator('input[name="tpot_ms"]').fill("5");

    // The rule on made-up requests: nearest rank, a one-token request cannot miss a TPOT limit.
    const judged = await page.evaluate(() => LlmCharts.judge(
      { generation: { wall_s: 2, requests_per_s: 1.5, request_latencies: { ttft_ns: [10e6, 30e6, 20e6], tpot_ns: [1e6, null, 3e6], e2e_ns: [20e6, 31e6, 60e6] } } },
      { ttft_ms: 25, tpot_ms: 2, e2e_ms: 0 }));
    assert.deepEqual([judged.good, judged.goodput, judged.p99.ttft, judged.p99.tpot, judged.meets], [1, 0.5, 30, 3, false]);
    assert.equal(await page.evaluate(() => LlmCharts.nearestRank([5, 1, 3, 2], 50)), 2);
  });

  test("conversation turns, shared-prefix warmth and the sweep's saturation are drawn", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const [turns] = await drawnPanels(page, "llm-turns");
    assert.equal(turns.marks.turns, "3");
    assert.ok(turns.facts.some((f) => /turn 3 [\d.]+ ms/.test(f)), turns.facts.join("; "));
    const [prefix] = await drawnPanels(page, "llm-prefix");
    assert.ok(prefix.facts.some((f) => /warm [\d.]+ ms \(\d+ requests\), cold [\d.]+ ms \([1-9]/.test(f)), prefix.facts.join("; "));
    const ramps = await drawnPanels(page, "ramp");
    assert.ok(ramps.some((p) => p.marks.saturation?.startsWith("saturated: rate ")), ramps.map((p) => p.marks.saturation).join("; "));
    // The sweep ran with a TTFT limit: its goodput per step is drawn beside the throughput.
    assert.ok(ramps.some((p) => Number(p.marks.goodputCells) >= 1), "no ramp chart draws goodput per step");
  });

  test("soak chart draws the trends the verdict came from", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const [soak] = await drawnPanels(page, "soak");
    const analysis = (await inlinedCells(page)).find((c) => c.result.scenario.name === "soak").result.analysis.soak;
    assert.equal(soak.marks.verdict, analysis.verdict);
    assert.ok(soak.facts.includes(`verdict: ${analysis.verdict}`), soak.facts.join("; "));
    // The lines drawn are least-squares fits of the points the analysis used: same slopes.
    closeTo(Number(soak.marks.latencySlopePerMin), analysis.latency.slope_per_min, "P99 slope per minute");
    closeTo(Number(soak.marks.memorySlopePerMin), analysis.memory.slope_per_min, "RSS slope per minute");
  });

  test("pulse chart marks the burst's recovery", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const [pulse] = await drawnPanels(page, "pulse");
    const analysis = (await inlinedCells(page)).find((c) => c.result.scenario.name === "pulse").result.analysis.pulse;
    const recovered = analysis.time_to_recover_s !== null;
    assert.equal(pulse.marks.recovery, recovered ? String(analysis.time_to_recover_s) : "none");
    assert.ok(pulse.facts.some((f) => f.startsWith(recovered ? "recovery: P99 back within" : "recovery: none")), pulse.facts.join("; "));
    assert.ok(pulse.facts.some((f) => f.startsWith("queue depth is not measured here")), "the backlog is not called an estimate");
  });

  test("batch, per-shape and pipeline charts draw their runs", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const [batch] = await drawnPanels(page, "batch");
    assert.ok(batch.facts.some((f) => /most inferences\/s at batch (1|4|16) /.test(f)), batch.facts.join("; "));
    const [shapes] = await drawnPanels(page, "shapes");
    assert.ok(Number(shapes.marks.shapes) >= 2, `${shapes.marks.shapes} shapes`);
    const [pipeline] = await drawnPanels(page, "pipeline");
    assert.equal(pipeline.marks.modes, "2");
    assert.match(pipeline.facts[0], /^serial: .* queries\/s measured vs .* predicted/);
  });

  test("scenario charts skip results lacking fields with a note, never an exception", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const outcome = await page.evaluate(() => {
      const box = document.createElement("div");
      document.body.append(box);
      const bare = (name) => ({ label: `bare ${name}`, index: 0, result: { scenario: { name } } });
      ScenarioCharts.draw(box, [bare("soak"), bare("pulse"), bare("ramp"), { label: "empty", index: 1, result: {} }]);
      const result = { canvases: box.querySelectorAll("canvas").length,
                       notes: [...box.querySelectorAll('[data-chart="notes"] li')].map((li) => li.textContent) };
      box.remove();
      return result;
    });
    assert.equal(outcome.canvases, 0, "a chart drawn without data");
    assert.equal(outcome.notes.length, 3, outcome.notes.join("; "));
    assert.ok(outcome.notes.every((n) => /bare (soak|pulse|ramp)/.test(n) && !/chart not drawn:/.test(n)), outcome.notes.join("; "));
  });

  test("screenshot is not blank", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    const screenshot = path.resolve(requiredEnv("INFERMARK_REPORT_SCREENSHOT"));
    await page.screenshot({ path: screenshot, fullPage: true });
    const png = readFileSync(screenshot);
    assert.equal(png.subarray(1, 4).toString(), "PNG", `${screenshot}: not a PNG`);
    assert.ok(statSync(screenshot).size > MIN_SCREENSHOT_BYTES,
      `${screenshot}: ${png.length} bytes, a blank page compresses below ${MIN_SCREENSHOT_BYTES}`);
  });
});

// `infermark evaluate`'s page (INFERMARK_EVALUATION_HTML): a section per experiment in the
// suite's order, its summary as tables, its models' groups after it, the decision last.
describe("evaluation report in chromium", () => {
  const problems = { console: [], page: [], requests: [] };
  let opened;
  let page;

  before(async () => {
    if (chromiumMissing) return;
    opened = await openReport("INFERMARK_EVALUATION_HTML", problems);
    page = opened.page;
  });

  after(() => closeReport(opened));

  test("sections follow the suite, each with its summary and its groups, the decision last", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    assert.deepEqual(problems.page, [], "page errors");
    assert.deepEqual(problems.console, [], "console errors");
    const order = await page.$$eval("#report > section", (sections) => sections.map((s) => ({
      id: s.id, title: s.querySelector("h2")?.textContent ?? "", meta: s.querySelector(".model-meta")?.textContent ?? "",
      summaryTables: s.querySelectorAll(".markdown table").length,
      charts: s.querySelectorAll("canvas").length,
    })));
    const titles = order.map((s) => s.title);
    const at = (title) => titles.indexOf(title);
    assert.ok(at("1. Batch") >= 0 && at("2. Pipeline") > at("1. Batch") && at("3. Left out") > at("2. Pipeline"), titles.join(" | "));
    assert.equal(order[order.length - 1].id, "decision", titles.join(" | "));
    const batch = order[at("1. Batch")];
    assert.ok(batch.summaryTables >= 1, "the batch study's summary has no table");
    assert.match(batch.meta, /3 cells · measured/);
    assert.match(order[at("3. Left out")].meta, /skipped \(left out of --quick\)/);
    // The batch study's model group (with its charts) comes between its experiment and the next.
    const group = order.findIndex((s, i) => i > at("1. Batch") && i < at("2. Pipeline") && s.id.startsWith("model-"));
    assert.ok(group > 0 && order[group].charts > 0, titles.join(" | "));
    const decision = await page.locator("#decision").textContent();
    assert.match(decision, /with the suite's limits: P99 <= 1000 ms/);
    assert.ok(await page.locator("#decision .recommendation").count() >= 1, "no recommendation panel in the decision");
    const picks = await page.$$eval("#decision table.verdicts tbody tr", (rows) => rows.map((r) => r.cells[2].textContent));
    assert.ok(picks.length >= 2 && picks.every((p) => p.length > 0), `verdict rows: ${picks.join(", ")}`);
    const nav = await page.$$eval("#model-nav a", (links) => links.map((a) => a.getAttribute("href")));
    assert.deepEqual(nav.slice(0, 3), ["#experiment-0", "#experiment-1", "#experiment-2"]);
    assert.ok(nav.includes("#decision"), nav.join(" "));
  });
});

// The same evaluation under `mpirun -np 2 evaluate --per-host` (INFERMARK_EVALUATION_HOSTS_HTML,
// empty where the build has no MPI or the test is not root): each verdict names its machine and the
// decision puts the machines side by side, each machine's pick marked.
describe("evaluation report of two hosts in chromium", () => {
  const problems = { console: [], page: [], requests: [] };
  const hostsMissing = !process.env.INFERMARK_EVALUATION_HOSTS_HTML;
  let opened;
  let page;

  before(async () => {
    if (chromiumMissing || hostsMissing) return;
    opened = await openReport("INFERMARK_EVALUATION_HOSTS_HTML", problems);
    page = opened.page;
  });

  after(() => closeReport(opened));

  test("verdicts per machine and the framework x machine matrix", async (t) => {
    if (chromiumMissing) return t.skip(skipReason);
    if (hostsMissing) return t.skip("no two-host evaluation (needs MPI, root and unshare)");
    assert.deepEqual(problems.page, [], "page errors");
    assert.deepEqual(problems.console, [], "console errors");
    const header = await page.$$eval("#decision table.verdicts thead th", (cells) => cells.map((c) => c.textContent));
    assert.deepEqual(header.slice(0, 3), ["model", "machine", "objective"]);
    const machines = await page.$$eval("#decision table.verdicts tbody tr", (rows) => rows.map((r) => r.cells[1].textContent));
    assert.ok(machines.some((m) => m.startsWith("host0")) && machines.some((m) => m.startsWith("host1")), machines.join(", "));
    const columns = await page.$$eval("#decision table.machine-matrix thead th", (cells) => cells.map((c) => c.textContent));
    assert.equal(columns.length, 4, columns.join(" | "));
    assert.match(columns[2], /^host0 /);
    assert.match(columns[3], /^host1 /);
    const rows = await page.$$eval("#decision table.machine-matrix tbody tr",
      (trs) => trs.map((tr) => Array.from(tr.cells, (c) => c.textContent)));
    assert.ok(rows.length >= 2, JSON.stringify(rows));
    for (const column of [2, 3])
      assert.ok(rows.some((row) => row[column].endsWith("(pick)")), `no pick on ${columns[column]}: ${JSON.stringify(rows)}`);
  });
});
