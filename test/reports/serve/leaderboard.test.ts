import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { NotFoundError } from "../../../src/common/errors.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { leaderboardDocument } from "../../../src/reports/serve/routes/leaderboard.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, payment, repeat } from "../../helpers/data.ts";

// Nine merchants: six ranked (two of them tied), one below a cent, one paid only by a tiny-repeat farm, one
// named and never paid.
const ranked = [5, 4, 4, 3, 2, 1].map((dollars, i) => ({ address: addr(`ranked${i}`), dollars }));
const belowCent = addr("below-cent");
const farmed = addr("farmed");
const unpaidName = addr("named-only");

let analytics: Analytics;
let service: ReportService;
let app: ReturnType<typeof reportRoutes>;

beforeAll(async () => {
  analytics = await analyticsWith([
    { type: "merchant", address: unpaidName, name: "listed.example" },
    ...ranked.map(({ address, dollars }, i) =>
      payment({ payer: addr(`buyer${i}`), payTo: address, amount: dollars * 1_000_000 }),
    ),
    payment({ payer: addr("small"), payTo: belowCent, amount: 1_000 }),
    ...repeat(10, { payer: addr("farm"), payTo: farmed, amount: 100 }),
  ]);
  service = new ReportService(analytics, { publicUrl: "https://reports.test" });
  app = reportRoutes(service);
});
afterAll(() => analytics.close());

const addresses = (board: { merchants: { address: string }[]; unranked: { address: string }[] }) => [
  ...board.merchants.map((m) => m.address),
  ...board.unranked.map((m) => m.address),
];

describe("the leaderboard in pages", () => {
  it("pages through every merchant once, ranked first by rank, then the unranked", async () => {
    const whole = await service.leaderboard();
    expect(whole.totals).toEqual({ merchants: 9, ranked: 6, unranked: 3 });
    expect(whole.page).toEqual({ number: 1, size: 1000, pages: 1 });
    expect(whole.merchants.map((m) => m.rank)).toEqual([1, 2, 2, 4, 5, 6]);
    expect(whole.merchants.map((m) => m.address).slice(0, 1)).toEqual([ranked[0]?.address]);
    expect(whole.unranked.map((m) => [m.address, m.reason]).sort()).toEqual(
      [
        [belowCent, "below_one_cent"],
        [farmed, "no_passing_payment"],
        [unpaidName, "no_passing_payment"],
      ].sort(),
    );

    const pages = [];
    for (let page = 1; page <= 3; page++) pages.push(await service.leaderboard(undefined, { page, size: 3 }));
    expect(pages.map((p) => p.page)).toEqual([1, 2, 3].map((number) => ({ number, size: 3, pages: 3 })));
    expect(pages.map((p) => p.merchants.length + p.unranked.length)).toEqual([3, 3, 3]);
    expect(pages.flatMap(addresses)).toEqual(addresses(whole));
    for (const p of pages) expect(p.totals).toEqual(whole.totals);
  });

  it("says how many pages there are when asked for one past the last", async () => {
    const error = await service.leaderboard(undefined, { page: 4, size: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).message).toMatch(/has 3 pages of 3, not 4/);
  });

  it("links each page's neighbours, kept to its window", async () => {
    const middle = leaderboardDocument(
      await service.leaderboard(END, { page: 2, size: 3 }),
      "https://reports.test",
    );
    expect(middle.page).toMatchObject({
      previous: `https://reports.test/v1/leaderboard/base?end_block=${END}`,
      next: `https://reports.test/v1/leaderboard/base/pages/3?end_block=${END}`,
    });
    const body = (await (await app.request("/v1/leaderboard/base")).json()) as { page: object };
    expect(body.page).toEqual({ number: 1, size: 1000, pages: 1, previous: null, next: null });
    expect(await (await app.request("/v1/leaderboard/base/pages/1")).json()).toEqual(body);
  });

  it("answers a page that is not there, or not a page, with a JSON error", async () => {
    const cases: [string, number, string][] = [
      ["/v1/leaderboard/base/pages/2", 404, "no_such_page"],
      ["/v1/leaderboard/base/pages/0", 400, "bad_page"],
      ["/v1/leaderboard/base/pages/two", 400, "bad_page"],
      ["/v1/leaderboard/base/pages/1?end_block=x", 400, "bad_end_block"],
    ];
    for (const [path, status, code] of cases) {
      const response = await app.request(path);
      expect([path, response.status]).toEqual([path, status]);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
    }
  });

  it("serves the ranking for people in pages too: the home page first, a missing page as a page", async () => {
    const home = await (await app.request("/")).text();
    expect(home).toContain("Merchants 1 to 9 of 9 (6 ranked).");
    expect(home).not.toContain('rel="next"');
    expect(await (await app.request("/ranking/1")).text()).toBe(home);
    const missing = await app.request("/ranking/2");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/text\/html/);
    expect(await missing.text()).toMatch(/has 1 page of 100, not 2/);
    expect((await app.request("/ranking/0")).status).toBe(400);
  });

  it("keeps every merchant's place when the window is built again on new data", async () => {
    const before = addresses(await service.leaderboard(END));
    await analytics.run("UPDATE meta SET value = (value::BIGINT + 1)::VARCHAR WHERE key = 'data_version'");
    const after = await service.leaderboard(END, { page: 2, size: 4 });
    expect(addresses(after)).toEqual(before.slice(4, 8));
  });
});
