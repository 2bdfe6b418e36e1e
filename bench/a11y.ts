/**
 * `/api/a11y/check` against axe-core in a browser (`npx tsx bench/a11y.ts [-- --products 50,430]`):
 *
 * 1. **Agreement**: the corpus of the tests (`test/merchants/utility/pages/a11y-corpus.ts`) and the saved
 *    WCAG page, audited by the endpoint's engine (axe-core on jsdom, in process) and by the same axe-core in
 *    headless Chromium (Debian's, through playwright-core: `test/helpers/browser.ts`), with the same rules
 *    (AA and best practices, frames not entered). A failing element is a (rule, selector) pair; agreement is
 *    the pairs both report over the pairs either reports, over the rules both ran (the rules the engine does
 *    not run on jsdom, `NOT_RUN`, are counted apart: what the browser finds there is what `not_checked`
 *    says is left to it).
 * 2. **Time**: the generated shop page (`shopPage`) at each `--products` size, engine and browser, one
 *    warm-up audit first; CPU time of this process beside the wall time (the host may be busy).
 *
 * One JSON line on stdout; a table on stderr.
 */
import { createRequire } from "node:module";
import os from "node:os";
import type { AxeResults } from "axe-core";
import type { BrowserContext, Page } from "playwright-core";
import { auditHtml } from "../src/merchants/utility/pages/a11y-engine.ts";
import type { A11yReport } from "../src/merchants/utility/pages/a11y-report.ts";
import { CUSTOM_RULES, NOT_RUN, tagsUpTo } from "../src/merchants/utility/pages/a11y-rules.ts";
import { launchChromium } from "../test/helpers/browser.ts";
import { CORPUS, shopPage } from "../test/merchants/utility/pages/a11y-corpus.ts";
import { fixtureHtml } from "../test/merchants/utility/pages/fixtures.ts";

const axeSource = (createRequire(import.meta.url)("axe-core") as { source: string }).source;
const flag = process.argv.indexOf("--products");
const sizes = ((flag >= 0 && process.argv[flag + 1]) || "50,430").split(",").map(Number);

const custom = new Set(CUSTOM_RULES.map((r) => r.rule.id));
const pairsOf = (report: A11yReport) =>
  new Set(report.findings.flatMap((f) => f.nodes.map((n) => `${f.rule} ${n.selector}`)));

/** A fresh tab each time: a page's `<meta http-equiv=refresh>` would navigate a reused one mid-run. */
async function inBrowser(context: BrowserContext, html: string): Promise<AxeResults> {
  const page = await context.newPage();
  try {
    return await axeIn(page, html);
  } finally {
    await page.close();
  }
}

async function axeIn(page: Page, html: string): Promise<AxeResults> {
  await page.setContent(html, { waitUntil: "domcontentloaded" });
  await page.addScriptTag({ content: axeSource });
  return page.evaluate(
    (tags) =>
      (globalThis as unknown as { axe: { run(c: unknown, o: unknown): Promise<AxeResults> } }).axe.run(
        document,
        {
          runOnly: { type: "tag", values: tags },
          resultTypes: ["violations", "incomplete"],
          iframes: false,
        },
      ),
    tagsUpTo("AA"),
  );
}

const browser = await launchChromium();
try {
  const context = await browser.newContext({ javaScriptEnabled: true });
  // The pages' images, frames and stylesheets are not fetched, as the engine fetches none.
  await context.route("**/*", (route) => route.abort());
  const pages = { ...CORPUS, wcag: fixtureHtml("wcag") };
  let both = 0;
  let either = 0;
  let browserOnNotRun = 0;
  let browserOnlyReviewed = 0;
  const rows: string[] = [];
  for (const [name, html] of Object.entries(pages)) {
    const report = await auditHtml({ html, url: `https://corpus.example/${name}`, level: "AA" });
    const ours = pairsOf(report);
    const reviewed = new Set(
      report.not_checked.flatMap((n) => n.nodes.map((e) => `${n.rule} ${e.selector}`)),
    );
    const theirs = new Set<string>();
    for (const v of (await inBrowser(context, html)).violations) {
      for (const n of v.nodes) {
        const pair = `${v.id} ${n.target.join(" ")}`;
        if (NOT_RUN[v.id]) browserOnNotRun += 1;
        else theirs.add(pair);
      }
    }
    for (const p of ours) if (custom.has(p.split(" ")[0] ?? "")) ours.delete(p);
    const common = [...ours].filter((p) => theirs.has(p));
    both += common.length;
    either += new Set([...ours, ...theirs]).size;
    const onlyOurs = [...ours].filter((p) => !theirs.has(p));
    const onlyTheirs = [...theirs].filter((p) => !ours.has(p));
    browserOnlyReviewed += onlyTheirs.filter((p) => reviewed.has(p)).length;
    rows.push(
      `${name.padEnd(10)} both ${common.length}  engine only [${onlyOurs.join(", ")}]  browser only [${onlyTheirs.join(", ")}]`,
    );
  }
  const times: {
    products: number;
    elements: number;
    engine_ms: number;
    engine_cpu_ms: number;
    browser_ms: number;
  }[] = [];
  await auditHtml({ html: shopPage(5), url: "https://shop.example/", level: "AA" });
  for (const products of sizes) {
    const html = shopPage(products);
    const elements = html.match(/<[a-zA-Z]/g)?.length ?? 0;
    const cpu = process.cpuUsage();
    let started = performance.now();
    await auditHtml({ html, url: "https://shop.example/", level: "AA" });
    const engineMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    started = performance.now();
    await inBrowser(context, html);
    times.push({
      products,
      elements,
      engine_ms: Math.round(engineMs),
      engine_cpu_ms: Math.round((used.user + used.system) / 1000),
      browser_ms: Math.round(performance.now() - started),
    });
  }
  const agreement = both / either;
  console.error(rows.join("\n"));
  console.error(
    `agreement ${(agreement * 100).toFixed(1)}% (${both} of ${either} failing elements; of the browser's others, ${browserOnlyReviewed} are in not_checked as needing review), browser findings on rules not run here: ${browserOnNotRun}`,
  );
  for (const t of times)
    console.error(
      `${t.elements} elements: engine ${t.engine_ms} ms (CPU ${t.engine_cpu_ms} ms), Chromium ${t.browser_ms} ms`,
    );
  console.log(
    JSON.stringify({
      date: new Date().toISOString(),
      cpu: os.cpus()[0]?.model,
      cores: os.cpus().length,
      load: os.loadavg()[0],
      agreement,
      both,
      either,
      browser_only_reviewed: browserOnlyReviewed,
      browser_on_not_run: browserOnNotRun,
      times,
    }),
  );
} finally {
  await browser.close();
}
