/**
 * A chain younger than a week: its report covers its whole life, says so, and is marked incomplete;
 * the pages of a service that has no report to show yet are pages, not JSON errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { ReportSchema } from "../../src/reports/schema.ts";
import { reportRoutes } from "../../src/reports/serve/http.ts";
import { ReportService } from "../../src/reports/serve/service.ts";
import { addr, analyticsWith, checkpoint, payment, tempAnalytics, timeOf } from "../helpers/data.ts";

const m = addr("young-merchant");
const HEAD = 28;

describe("a chain 28 blocks old", () => {
  let analytics: Analytics;
  let app: ReturnType<typeof reportRoutes>;

  beforeAll(async () => {
    analytics = await analyticsWith([
      payment({ payer: addr("a"), payTo: m, amount: 1_250_000, block: 3 }),
      payment({ payer: addr("b"), payTo: m, amount: 2_000_000, block: 20 }),
      payment({ payer: addr("a"), payTo: m, amount: 10_000, block: HEAD }),
      checkpoint(HEAD),
    ]);
    app = reportRoutes(new ReportService(analytics, { publicUrl: "https://reports.test" }));
  });
  afterAll(() => analytics.close());

  it("has a report covering the chain's whole life, incomplete, with the real span in days", async () => {
    const res = await app.request(`/v1/reports/base/${m}`);
    expect(res.status).toBe(200);
    const report = ReportSchema.parse(await res.json());
    expect(report.window).toEqual({
      start_block: 0,
      end_block: HEAD,
      complete: false,
      start: new Date(timeOf(0) * 1000).toISOString().replace(".000Z", "+00:00"),
      end: new Date(timeOf(HEAD) * 1000).toISOString().replace(".000Z", "+00:00"),
      days: 0.000648,
    });
    expect(report).toMatchObject({ tx: 3, usd: 3.26, real_tx: 3, buyers: 2 });
    expect(report.claim).toContain("in the 56 seconds to");
    // Every payment of the chain is in the only window there is.
    expect(report.daily.reduce((n, d) => n + d.tx, 0)).toBe(3);
  });

  it("says on the page why the window is short", async () => {
    const res = await app.request(`/reports/base/${m}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain("the chain is younger than a week: this report covers its whole life, 56 seconds");
    expect(page).not.toContain("Complete: every block");
    const home = await (await app.request("/")).text();
    expect(home).toContain("the chain is younger than a week");
    expect(home).toContain(m);
  });

  it("still renders the badge, over the real span", async () => {
    const res = await app.request(`/badges/base/${m}.svg`);
    expect(res.status).toBe(200);
    const svg = await res.text();
    expect(svg).toMatch(/^<svg/);
    expect(svg).toContain("$3.26/56s");
  });

  it("answers an unknown merchant's page with an HTML 404 page, and its JSON with a JSON 404", async () => {
    const nobody = addr("nobody");
    const page = await app.request(`/reports/base/${nobody}`);
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain(`no merchant ${nobody} is known on Base`);
    expect(html).toContain('<a href="/">');

    const bad = await app.request("/reports/base/0x12");
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toMatch(/text\/html/);

    const other = await app.request("/reports/ethereum/0x12");
    expect(other.status).toBe(404);
    expect(other.headers.get("content-type")).toMatch(/text\/html/);

    const json = await app.request(`/v1/reports/base/${nobody}`);
    expect(json.status).toBe(404);
    expect(await json.json()).toMatchObject({ error: { code: "unknown_merchant" } });
    const route = await app.request("/v1/nothing");
    expect(route.status).toBe(404);
    expect(route.headers.get("content-type")).toMatch(/application\/json/);
  });
});

describe("a service with no data yet", () => {
  let analytics: Analytics;
  let app: ReturnType<typeof reportRoutes>;

  beforeAll(async () => {
    analytics = await tempAnalytics();
    app = reportRoutes(new ReportService(analytics, { publicUrl: "https://reports.test" }), {
      notice: async () => "DEVNET DEMO",
    });
  });
  afterAll(() => analytics.close());

  it("shows the leaderboard's empty state as an HTML 200 page saying indexing is in progress", async () => {
    const res = await app.request("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toContain("No data yet");
    expect(html).toContain("Indexing in progress");
    expect(html).toContain("DEVNET DEMO");
    expect(html).toMatch(/<meta http-equiv="refresh" content="\d+">/);
  });

  it("answers a report page with an HTML 404 page and keeps the JSON endpoints' JSON errors", async () => {
    const page = await app.request(`/reports/base/${m}`);
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(await page.text()).toContain("holds no Base data yet");

    for (const path of ["/v1/leaderboard/base", `/v1/reports/base/${m}`]) {
      const res = await app.request(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: "no_data" } });
    }
  });
});
