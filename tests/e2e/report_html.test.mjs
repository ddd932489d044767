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

describe("HTML report in chromium", () => {
  const problems = { console: [], page: [], requests: [] };
  let context;
  let page;
  let userDataDir;

  before(async () => {
    if (chromiumMissing) return;
    const html = path.resolve(requiredEnv("INFERMARK_REPORT_HTML"));
    assert.ok(existsSync(html), `${html}: report not found`);
    userDataDir = mkdtempSync(path.join(tmpdir(), "infermark-chromium-"));
    context = await loadPlaywright().chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, viewport: { width: 1400, height: 1000 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (message) => { if (message.type() === "error") problems.console.push(message.text()); });
    page.on("pageerror", (error) => problems.page.push(error.message));
    page.on("request", (request) => problems.requests.push(request.url()));
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector("body[data-charts-ready]", { timeout: 30_000 });
  });

  after(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

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
