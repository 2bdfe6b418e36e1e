/**
 * One set of figures everywhere: for each merchant, the real share in the JSON claim, on its page, in the
 * leaderboard row and on the badge is one number, the one docs/report.md's "Claim" states (the published
 * real_usd over the published usd, rounded to an integer), computed from what the report publishes. The merchants are chosen where
 * other roundings disagree: 8/9 (88.89% to two decimals), an exact half (87.5%), and a sub-cent real share.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { reportRoutes } from "../../src/reports/serve/http.ts";
import { ReportService } from "../../src/reports/serve/service.ts";
import { addr, analyticsWith, payment, repeat, START, transfer } from "../helpers/data.ts";

const nine = addr("nine-dollars");
const cents = addr("eight-cents");
const dust = addr("dust");
let analytics: Analytics;
let app: ReturnType<typeof reportRoutes>;

beforeAll(async () => {
  analytics = await analyticsWith([
    { type: "merchant", address: nine, name: "nine.example" },
    { type: "merchant", address: cents, name: "cents.example" },
    { type: "merchant", address: dust, name: "dust.example" },
    // $8.00 from eight buyers, $1.00 paid by the merchant to itself: 8/9.
    ...Array.from({ length: 8 }, (_, i) =>
      payment({ payer: addr(`buyer-${i}`), payTo: nine, amount: 1_000_000 }),
    ),
    payment({ payer: nine, payTo: nine, amount: 1_000_000 }),
    // $0.07 real of $0.08: exactly 87.5%.
    payment({ payer: addr("cents-buyer"), payTo: cents, amount: 70_000 }),
    payment({ payer: cents, payTo: cents, amount: 10_000 }),
    // Real payments worth $0.002 beside $3.00 of self-payment: real_usd publishes as 0.00.
    ...repeat(2, { payer: addr("dust-buyer"), payTo: dust, amount: 1_000 }),
    payment({ payer: dust, payTo: dust, amount: 3_000_000 }),
  ]);
  app = reportRoutes(new ReportService(analytics, { publicUrl: "https://reports.test" }));
});
afterAll(() => analytics.close());

const text = async (path: string) => {
  const res = await app.request(path);
  expect(res.status).toBe(200);
  return res.text();
};

describe("the real share", () => {
  it.each([
    [nine, 89],
    [cents, 88],
    [dust, 0],
  ])("is one number in the claim, the page, the leaderboard and the badge (%s)", async (address, percent) => {
    const report = JSON.parse(await text(`/v1/reports/base/${address}`)) as {
      claim: string;
      usd: number;
      real_usd: number;
      rank_by_real_revenue: number | null;
    };
    // Spec 2.3, from the published figures.
    expect(Math.round((report.real_usd / report.usd) * 100)).toBe(percent);
    expect(report.claim).toContain(`(${percent}% of $`);

    const page = await text(`/reports/base/${address}`);
    expect(page).toContain(`<dt>Real share of dollars</dt><dd>${percent}%</dd>`);

    const badge = await text(`/badges/base/${address}.svg`);
    expect(badge).toContain(`· ${percent}%`);

    // Ranked or not, the merchant has a row on the home page (unranked ones below the ranking).
    const home = await text("/");
    const row = home.split("<tr>").find((r) => r.includes(`title="${address}"`));
    expect(row).toContain(`<td class="num">${percent}%</td>`);
    expect(report.rank_by_real_revenue === null).toBe(address === dust);
  });

  it("says why a merchant whose payments passed is not ranked, on its page, the home page and in JSON", async () => {
    const page = await text(`/reports/base/${dust}`);
    expect(page).toContain(
      "Not ranked: the 2 payments that passed every screen add up to less than half a cent ($0.00 once rounded); a rank needs $0.01.",
    );
    const home = await text("/");
    expect(home).toContain("<h2>Not ranked (1)</h2>");
    expect(home).toContain("<td>the passing payments add up to less than half a cent</td>");
    const board = JSON.parse(await text("/v1/leaderboard/base")) as {
      merchants: { address: string; rank: number }[];
      unranked: { address: string; reason: string; real_tx: number }[];
    };
    expect(board.merchants.map((m) => [m.rank, m.address])).toEqual([
      [1, nine],
      [2, cents],
    ]);
    expect(board.unranked).toEqual([
      expect.objectContaining({ address: dust, reason: "below_one_cent", real_tx: 2 }),
    ]);
    expect(board.unranked[0]).not.toHaveProperty("rank");
  });
});

describe("figures a reader can add up", () => {
  it("has days and flag wallets that add up, in cents, to the totals and the flag headings", async () => {
    const m = addr("sub-cent-shop");
    const shop = await analyticsWith([
      // 25 farm wallets of 14 payments each at $0.0007 and up (less than a cent each, one amount per wallet), and
      // customers spread over the week at $0.0126: every daily and per-wallet figure has a remainder.
      ...Array.from({ length: 25 }, (_, w) =>
        repeat(14, { payer: addr(`farm-${w}`), payTo: m, amount: 700 + w }),
      ).flat(),
      // Funded from one wallet: one buyer, whose amounts are no price however many wallets pay them.
      ...Array.from({ length: 25 }, (_, w) =>
        transfer(addr("farmer"), addr(`farm-${w}`), 1_000_000, START - 10),
      ),
      ...Array.from({ length: 9 }, (_, b) =>
        repeat(11, { payer: addr(`customer-${b}`), payTo: m, amount: 12_600 }),
      ).flat(),
    ]);
    try {
      const service = new ReportService(shop, { publicUrl: "https://reports.test" });
      const { report, details } = await service.report(m);
      const c = (usd: number) => Math.round(usd * 100);
      expect(report.flags.tiny_repeat?.tx).toBe(350);
      expect(report.daily.reduce((s, d) => s + c(d.usd), 0)).toBe(c(report.usd));
      expect(report.daily.reduce((s, d) => s + c(d.real_usd), 0)).toBe(c(report.real_usd));
      const wallets = details.flagged_wallets.tiny_repeat ?? [];
      const rest = details.more_wallets?.tiny_repeat;
      expect([wallets.length, rest?.wallets, rest?.tx]).toEqual([20, 5, 70]);
      expect(wallets.reduce((s, w) => s + c(w.usd), 0) + c(rest?.usd ?? 0)).toBe(
        c(report.flags.tiny_repeat?.usd ?? 0),
      );
      expect(c(report.usd) - c(report.real_usd)).toBe(c(report.flags.tiny_repeat?.usd ?? 0));

      const page = await (await reportRoutes(service).request(`/reports/base/${m}`)).text();
      expect(page).toContain("5 more wallets");
      expect(page).toContain("so every column adds up exactly to its total");
    } finally {
      shop.close();
    }
  });
});
