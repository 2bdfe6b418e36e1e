/**
 * A published week too large for one page of the leaderboard: every page of the ranking (people's, 100 a
 * page) and of the leaderboard's JSON (1,000 a page) is a file, served by a static host as the service answers
 * it, and following the pages' own links from the first reaches every merchant once.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { publishSite } from "../../../src/reports/publish/publish.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, payment } from "../../helpers/data.ts";
import { staticHost } from "./static-host.ts";

const PUBLIC = "https://reports.test";
const MERCHANTS = 1_001;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-publish-pages-"));
const site = path.join(tmp, "site");
let analytics: Analytics;
let live: ReturnType<typeof reportRoutes>;

beforeAll(async () => {
  // A cent more for each: every merchant ranked, in the reverse of its number.
  analytics = await analyticsWith(
    Array.from({ length: MERCHANTS }, (_, i) =>
      payment({ payer: addr(`pages-buyer${i}`), payTo: addr(`pages-m${i}`), amount: 10_000 * (i + 1) }),
    ),
  );
  const service = new ReportService(analytics, { publicUrl: PUBLIC });
  live = reportRoutes(service);
  await publishSite(async (url) => live.request(url), site, {
    version: "test",
    license: "https://creativecommons.org/licenses/by/4.0/",
    merchants: async (end) => ({ notice: undefined, batches: (await service.readMerchants(end)).batches }),
  });
}, 60_000);
afterAll(() => {
  analytics.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The URL path of a link to one of the site's own pages, query string kept. */
const local = (url: string) => (url.startsWith(PUBLIC) ? url.slice(PUBLIC.length) : url);

describe("publish DIR, a week of many pages", () => {
  it("serves every page of the leaderboard's JSON, its links leading through every merchant once", async () => {
    const host = staticHost(site);
    const seen: string[] = [];
    let url: string | null = "/v1/leaderboard/base";
    while (url) {
      const expected = await live.request(url);
      const got = host(url);
      expect([url, got.status]).toEqual([url, 200]);
      expect(got.body.equals(Buffer.from(await expected.arrayBuffer())), url).toBe(true);
      const page = JSON.parse(got.body.toString("utf8")) as {
        merchants: { address: string; rank: number }[];
        page: { next: string | null };
      };
      seen.push(...page.merchants.map((m) => m.address));
      url = page.page.next && local(page.page.next);
    }
    expect(seen).toHaveLength(MERCHANTS);
    expect(new Set(seen).size).toBe(MERCHANTS);
    expect(seen[0]).toBe(addr(`pages-m${MERCHANTS - 1}`));
    expect(seen.at(-1)).toBe(addr("pages-m0"));
  });

  it("serves every page of the ranking for people, reached by its Next links", async () => {
    const host = staticHost(site);
    const pages: string[] = [];
    let url: string | undefined = "/";
    while (url) {
      pages.push(url);
      const expected = await live.request(url);
      const got = host(url);
      expect([url, got.status]).toEqual([url, 200]);
      const body = Buffer.from(await expected.arrayBuffer());
      expect(got.body.equals(body), url).toBe(true);
      url = /<a rel="next" href="([^"]+)">/.exec(body.toString("utf8"))?.[1];
    }
    expect(pages).toEqual([
      "/",
      ...Array.from({ length: 10 }, (_, i) => `/ranking/${i + 2}?end_block=${END}`),
    ]);
    expect(host("/ranking/11").body.toString("utf8")).toContain("Merchants 1,001 to 1,001 of 1,001");
    expect(fs.readFileSync(path.join(site, "_redirects"), "utf8")).toContain(
      "/v1/leaderboard/base/pages/:page /v1/leaderboard/base/pages/:page/index.json 200",
    );
  });
});
