/**
 * `npm run screenshots`: the README's pictures, docs/images/leaderboard.png and docs/images/report.png.
 *
 * A synthetic week (scripts/synthetic.ts, seed 1) imported into a store of its own in a temporary
 * directory, its reports built and served by the report service's routes on 127.0.0.1, and the leaderboard
 * and one flagged merchant's report page photographed by the Chromium the browser tests drive
 * (test/helpers/browser.ts: Debian's /usr/bin/chromium through playwright-core), at 1200x800. The tests
 * never run it: pictures change when the pages do, and are remade on purpose.
 *
 *   npm run screenshots                 # both pictures into docs/images/
 *   npm run screenshots -- --out DIR    # elsewhere
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { Analytics } from "../src/analytics/duckdb.ts";
import { importNdjson } from "../src/analytics/import.ts";
import { ReportService, reportRoutes } from "../src/reports/index.ts";
import { launchChromium } from "../test/helpers/browser.ts";
import { DEFAULT_END_BLOCK, DEFAULT_END_TIME, writeSynthetic } from "./synthetic.ts";

const VIEWPORT = { width: 1200, height: 800 };
const NOTICE = "SAMPLE DATA: a synthetic week (scripts/synthetic.ts), not Base's.";

const { values } = parseArgs({ options: { out: { type: "string", default: "docs/images" } } });
const out = path.resolve(values.out);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-screenshots-"));

async function main(): Promise<void> {
  const file = path.join(work, "week.ndjson");
  const week = await writeSynthetic(file, {
    seed: 1,
    merchants: 40,
    buyers: 300,
    payments: 4_000,
    endBlock: DEFAULT_END_BLOCK,
    endTime: DEFAULT_END_TIME,
    names: ["api.weather.example", "tiles.example", "llm-proxy.example", "quotes.example", "fx.example"],
  });
  const analytics = await Analytics.open({
    dataDir: path.join(work, "store"),
    memoryLimit: "1GB",
    threads: 2,
  });
  const server = await (async () => {
    await importNdjson(analytics, file);
    const service = new ReportService(analytics, { publicUrl: "http://127.0.0.1" });
    await service.build();
    const app = reportRoutes(service, { unlogged: true, notice: async () => NOTICE });
    return new Promise<{ url: string; close: () => void }>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) =>
        resolve({ url: `http://127.0.0.1:${info.port}`, close: () => s.close() }),
      );
    });
  })();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: VIEWPORT });
    fs.mkdirSync(out, { recursive: true });
    await page.goto(`${server.url}/`, { waitUntil: "networkidle" });
    await page.screenshot({ path: path.join(out, "leaderboard.png") });
    // A merchant with genuine demand beside a pattern the screens flag: its page shows both figures.
    const merchant = week.roles.merchant_funded[0] ?? week.roles.tiny_repeat[0];
    if (merchant === undefined) throw new Error("the synthetic week planted no flagged merchant");
    await page.goto(`${server.url}/reports/base/${merchant}`, { waitUntil: "networkidle" });
    await page.screenshot({ path: path.join(out, "report.png") });
    for (const name of ["leaderboard.png", "report.png"]) {
      const size = fs.statSync(path.join(out, name)).size;
      process.stdout.write(
        `${path.relative(process.cwd(), path.join(out, name))}  ${Math.round(size / 1024)} KB\n`,
      );
    }
  } finally {
    await browser.close();
    server.close();
    analytics.close();
  }
}

try {
  await main();
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
