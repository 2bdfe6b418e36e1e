import { describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { importNdjson } from "../../../src/analytics/import.ts";
import { dataVersion } from "../../../src/analytics/migrations.ts";
import type { Params } from "../../../src/analytics/sql.ts";
import { MAX_USDC_AMOUNT } from "../../../src/chain/base.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { windowDates } from "../../../src/reports/week/window.ts";
import {
  addr,
  analyticsWith,
  checkpoint,
  END,
  END_TIME,
  ndjsonFile,
  payment,
  repeat,
  START,
  timeOf,
} from "../../helpers/data.ts";
import { SideBySide } from "../../helpers/reports.ts";

const m = addr("merchant");
// The cases that read one report of a world of their own build their worlds side by side in one store and
// one build (`SideBySide`): the same reports as `reportOf`'s (SIDE_BY_SIDE_ALONE=1 checks) for a fraction of
// the CPU.
const worlds = new SideBySide();

describe("report", () => {
  const named = worlds.world([
    { type: "merchant", address: m, name: "api.shop.example" },
    payment({ payer: addr("a"), payTo: m, amount: 1_234_560_000 }),
    payment({ payer: addr("b"), payTo: m, amount: 10_000_000 }),
    payment({ payer: m, payTo: m, amount: 400_000_000 }),
  ]);
  it("writes the claim sentence word for word", async () => {
    const { report } = await named(m);
    expect(report.claim).toBe(
      "api.shop.example received $1244.56 of x402 payments passing every screen (76% of $1644.56 reported) from 2 of 3 buyer wallets on Base in the 7 days to 2026-11-22.",
    );
  });

  const framed = worlds.world([payment({ payer: addr("a"), payTo: m, amount: 1 })]);
  it("frames the window: 302,400 blocks, 7 days, 8 dates, UTC with +00:00", async () => {
    const { report } = await framed(m);
    expect(report.window).toEqual({
      start_block: START,
      end_block: END,
      complete: true,
      start: "2026-11-15T00:00:00+00:00",
      end: "2026-11-22T00:00:00+00:00",
      days: 7,
    });
    expect(report.last_seen_week).toBe("2026-11-22");
    expect(report.daily.map((d) => d.date)).toEqual([
      "2026-11-15",
      "2026-11-16",
      "2026-11-17",
      "2026-11-18",
      "2026-11-19",
      "2026-11-20",
      "2026-11-21",
      "2026-11-22",
    ]);
    expect(report.generated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
    expect(report.license).toBe("https://creativecommons.org/licenses/by/4.0/");
    expect(report.page).toBe(`https://reports.test/reports/base/${framed.address(m)}`);
    expect(report.badge).toBe(`https://reports.test/badges/base/${framed.address(m)}.svg`);
  });

  it("gives 8 dates for a window that starts mid-day", () => {
    expect(
      windowDates({ start: "2026-11-14T13:20:02+00:00", end: "2026-11-21T13:20:02+00:00" }),
    ).toHaveLength(8);
  });

  const daily = worlds.world([
    payment({ payer: addr("a"), payTo: m, amount: 1_000_000, block: START + 1 }),
    payment({ payer: addr("a"), payTo: m, amount: 2_000_000, block: START + 43_200 }),
    payment({ payer: m, payTo: m, amount: 4_000_000, block: END }),
  ]);
  it("sums each payment into the day of its block", async () => {
    const { report } = await daily(m);
    expect(report.daily[0]).toEqual({ date: "2026-11-15", tx: 1, usd: 1, real_usd: 1 });
    expect(report.daily[1]).toEqual({ date: "2026-11-16", tx: 1, usd: 2, real_usd: 2 });
    expect(report.daily[7]).toEqual({ date: "2026-11-22", tx: 1, usd: 4, real_usd: 0 });
    expect(report.daily.slice(2, 7).every((d) => d.tx === 0)).toBe(true);
  });

  // Day 0: $230.185521, all real. Day 1: 12 flagged payments of $0.000462, $0.005544. Reported: 23,019
  // cents, whose extra cent has the larger remainder on day 1; real: 23,019 cents, all from day 0. Found
  // by the property test: the reported cent went to day 1, the real one to day 0, which then showed
  // $230.19 real of $230.18 reported.
  const leftOverCent = worlds.world([
    payment({ payer: addr("customer"), payTo: m, amount: 230_185_521, block: START + 10 }),
    ...Array.from({ length: 12 }, (_, i) =>
      payment({ payer: addr("farm"), payTo: m, amount: 462, block: START + 43_200 + i }),
    ),
  ]);
  it("never shows a day more real than reported, even where the reported cent left over went to another day", async () => {
    const { report } = await leftOverCent(m);
    expect([report.usd, report.real_usd]).toEqual([230.19, 230.19]);
    expect(report.daily.slice(0, 2).map((d) => [d.usd, d.real_usd])).toEqual([
      [230.19, 230.19],
      [0, 0],
    ]);
  });

  const long = `${"Returns the full tweet with author profile and engagement metrics. ".repeat(6)}End.`;
  const listing = (resource: string, price_usd: number, description = "d") => ({
    type: "listing",
    pay_to: m,
    resource,
    price_usd,
    description,
  });
  const listed = worlds.world([
    listing("https://social.example/tweets", 0.01, long),
    listing("https://social.example/users/by/username", 0.005),
    listing("https://social.example/tweets/by/id", 0.0025),
  ]);
  it("sorts listings by price and cuts long descriptions near 240 characters at a word", async () => {
    const { report } = await listed(m);
    expect(report.bazaar_listings.map((l) => l.price_usd)).toEqual([0.0025, 0.005, 0.01]);
    const cut = report.bazaar_listings[2]?.description ?? "";
    expect(cut.length).toBeLessThanOrEqual(241);
    expect(cut.length).toBeGreaterThan(200);
    expect(cut.endsWith("…")).toBe(true);
    expect(long.startsWith(cut.slice(0, -1))).toBe(true);
    expect(long[cut.length - 1]).toMatch(/[\s.]/);
    expect(report.name).toBe("social.example");
  });

  const addingUp = worlds.world([
    payment({ payer: m, payTo: m, amount: 1_004_999 }),
    payment({ payer: addr("a"), payTo: m, amount: 1_005_000 }),
    payment({ payer: addr("p"), payTo: m, amount: 2_003_000 }),
    payment({ payer: m, payTo: addr("p"), amount: 2_000_000 }),
  ]);
  it("makes flags add up exactly to the reported minus the real figures", async () => {
    const { report } = await addingUp(m);
    expect(Object.keys(report.flags).sort()).toEqual(["ring", "self_payment"]);
    const flagged = Object.values(report.flags).reduce((s, f) => s + (f?.usd ?? 0), 0);
    expect(Math.round((report.usd - report.real_usd) * 100)).toBe(Math.round(flagged * 100));
    expect(report.usd).toBe(4.01);
    expect(report.real_usd).toBe(1.01);
  });

  const quiet = worlds.world([
    { type: "merchant", address: m, name: "quiet.example" },
    payment({ payer: addr("a"), payTo: addr("x"), amount: 5 }),
  ]);
  it("reports zeros for a known merchant without payments in the window", async () => {
    const { report } = await quiet(m);
    expect(report).toMatchObject({
      tx: 0,
      usd: 0,
      real_usd: 0,
      buyers: 0,
      top_buyer_share: 0,
      rank_by_real_revenue: null,
      flags: {},
    });
    expect(report.claim).toContain(
      "received $0.00 of x402 payments passing every screen (0% of $0.00 reported) from 0 of 0",
    );
    expect(report.paid).toEqual({ median: 0, p25: 0, p75: 0, median_passing: 0 });
  });

  // A `merchant` line names no chain: one with a base58 address was reported in Base's week with nothing
  // paid, and that week's seal refused it ("not an address"), stopping Base's attestation.
  const solana = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
  const withSolana = worlds.world([
    { type: "merchant", address: m, name: "quiet.example" },
    { type: "merchant", address: solana, name: "solana.example" },
    payment({ payer: addr("a"), payTo: addr("x"), amount: 5 }),
  ]);
  it("leaves a known merchant with a Solana address and no payments out of Base's week", async () => {
    expect((await withSolana(m)).report).toMatchObject({ tx: 0, usd: 0 });
    await expect(withSolana(solana)).rejects.toThrow(`no merchant ${solana} is known on Base`);
  });

  const quantiles = worlds.world(
    [1_000, 2_000, 3_000, 10_000].map((amount, i) => payment({ payer: addr(`b${i}`), payTo: m, amount })),
  );
  it("computes paid quantiles by linear interpolation at USDC precision", async () => {
    const { report } = await quantiles(m);
    expect(report.paid).toEqual({ median: 0.0025, p25: 0.00175, p75: 0.00475, median_passing: 0.0025 });
  });
});

describe("rank and states", () => {
  it("ranks by real revenue, leaves held and zero-revenue merchants unranked", async () => {
    const [a, b, c, d] = ["a", "b", "c", "d"].map((x) => addr(`shop-${x}`)) as [
      string,
      string,
      string,
      string,
    ];
    const analytics = await analyticsWith([
      payment({ payer: addr("1"), payTo: a, amount: 5_000_000 }),
      payment({ payer: addr("2"), payTo: b, amount: 9_000_000 }),
      payment({ payer: addr("3"), payTo: c, amount: 20_000_000 }),
      { type: "merchant", address: c, held: true },
      payment({ payer: d, payTo: d, amount: 50_000_000 }),
    ]);
    try {
      const service = new ReportService(analytics, { publicUrl: "https://r.test" });
      const ranks = Object.fromEntries(
        (await service.reports(END)).reports.map((r) => [r.address, r.rank_by_real_revenue]),
      );
      expect(ranks).toEqual({ [b]: 1, [a]: 2, [c]: null, [d]: null });
      const board = await service.leaderboard();
      expect(board.merchants.map((e) => [e.rank, e.address])).toEqual([
        [1, b],
        [2, a],
      ]);
      // The hold is the merchant's; `frozen` says whether the week is attested, which it is not.
      expect(board.unranked.map((e) => [e.address, e.reason])).toEqual([
        [c, "held"],
        [d, "no_passing_payment"],
      ]);
      const { report } = await service.report(c);
      expect([report.held, report.frozen, report.rank_by_real_revenue]).toEqual([true, false, null]);
      expect((await service.report(a)).report).toMatchObject({ held: false, frozen: false });
    } finally {
      analytics.close();
    }
  });

  it("is incomplete past the latest checkpoint, and defaults to the latest checkpoint", async () => {
    const analytics = await analyticsWith([
      checkpoint(END - 10),
      payment({ payer: addr("a"), payTo: m, amount: 1, block: END }),
    ]);
    try {
      const service = new ReportService(analytics, { publicUrl: "https://r.test" });
      expect((await service.report(m)).report.window.end_block).toBe(END - 10);
      expect((await service.report(m, END)).report.window.complete).toBe(false);
      await expect(service.report(m, END + 1)).rejects.toThrow(/latest known block is 40000000/);
      await expect(service.report(addr("nobody"))).rejects.toThrow(/no merchant/);
      await expect(service.report("0x12")).rejects.toThrow(/not an address/);
    } finally {
      analytics.close();
    }
  });

  it("keeps generated_at until the data changes", async () => {
    const analytics = await analyticsWith([payment({ payer: addr("a"), payTo: m, amount: 1 })]);
    try {
      let now = END_TIME * 1000;
      const service = new ReportService(analytics, { publicUrl: "https://r.test", now: () => new Date(now) });
      const first = (await service.report(m)).report.generated_at;
      now += 60_000;
      expect((await service.report(m)).report.generated_at).toBe(first);
      await importNdjson(
        analytics,
        ndjsonFile([
          payment({ payer: addr("b"), payTo: m, amount: 2, block: timeOf(END) > 0 ? END - 5 : END }),
        ]),
      );
      const rebuilt = (await service.report(m)).report;
      expect(rebuilt.generated_at).not.toBe(first);
      expect(rebuilt.tx).toBe(2);
    } finally {
      analytics.close();
    }
  });
});

describe("stored windows", () => {
  it("keeps the most recent windows' reports and rebuilds a dropped one identically", async () => {
    const analytics = await analyticsWith([
      payment({ payer: addr("a"), payTo: m, amount: 1_000 }),
      checkpoint(END + 10),
    ]);
    try {
      // Four windows kept three: one past the limit drops the first as surely as three past it (a build each).
      const service = new ReportService(analytics, { publicUrl: "https://r.test", keepWindows: 3 });
      const first = (await service.report(m, END)).report;
      for (let end = END + 1; end <= END + 3; end++) await service.report(m, end);
      const windows = await analytics.all<{ end_block: bigint }>(
        "SELECT DISTINCT end_block FROM reports ORDER BY end_block",
      );
      expect(windows.map((w) => Number(w.end_block))).toEqual([END + 1, END + 2, END + 3]);
      expect(await analytics.one("SELECT count(*) AS n FROM report_windows")).toEqual({ n: 3n });
      const again = (await service.report(m, END)).report;
      expect({ ...again, generated_at: "" }).toEqual({ ...first, generated_at: "" });
    } finally {
      analytics.close();
    }
  });
});

describe("a build and the writes beside it", () => {
  /** Runs `before` once, just before the first statement of the analytics database that starts with `prefix`. */
  function beforeStatement(analytics: Analytics, prefix: string, before: () => Promise<void>): void {
    const run = analytics.run.bind(analytics);
    let done = false;
    analytics.run = async (sql: string, params?: Params) => {
      if (!done && sql.trimStart().startsWith(prefix)) {
        done = true;
        await before();
      }
      return run(sql, params);
    };
  }

  const windowTables = (analytics: Analytics) =>
    analytics.one<{ n: bigint }>(
      "SELECT count(*) AS n FROM duckdb_tables() WHERE temporary AND table_name LIKE 'rw\\_%' ESCAPE '\\'",
    );

  it("builds again in one transaction when data lands while the window is aggregated", async () => {
    const analytics = await analyticsWith([payment({ payer: addr("a"), payTo: m, amount: 1_000_000 })]);
    const other = await analytics.fork();
    try {
      // Another connection (the indexer beside the service) imports a payment once the groups have been
      // read from the payments: without the version check, the report would miss it.
      beforeStatement(analytics, "CREATE OR REPLACE TEMP TABLE rw_pair_tiny", async () => {
        await importNdjson(other, ndjsonFile([payment({ payer: addr("b"), payTo: m, amount: 2_000_000 })]));
      });
      const service = new ReportService(analytics, { publicUrl: "https://r.test" });
      const { report } = await service.report(m);
      expect([report.tx, report.buyers, report.usd]).toEqual([2, 2, 3]);
      expect(report.daily.reduce((n, d) => n + d.tx, 0)).toBe(2);
      const stored = await analytics.one<{ data_version: bigint }>("SELECT data_version FROM report_windows");
      expect(stored?.data_version).toBe(await dataVersion(analytics));
      expect((await windowTables(analytics))?.n).toBe(0n);
    } finally {
      other.close();
      analytics.close();
    }
  });

  it("shows the listings and the name of the current listings after they change", async () => {
    const listing = (resource: string, description: string) => ({
      type: "listing",
      pay_to: m,
      resource,
      price_usd: 0.01,
      description,
    });
    const analytics = await analyticsWith([
      listing("https://old.example/api", "Old."),
      payment({ payer: addr("a"), payTo: m, amount: 1_000 }),
    ]);
    try {
      const service = new ReportService(analytics, { publicUrl: "https://r.test" });
      const before = (await service.report(m)).report;
      expect([before.name, before.bazaar_listings.map((l) => l.description)]).toEqual([
        "old.example",
        ["Old."],
      ]);
      await importNdjson(
        analytics,
        ndjsonFile([listing("https://new.example/api", "New."), listing("https://new.example/b", "B.")]),
      );
      const after = (await service.report(m)).report;
      expect(after.name).toBe("new.example");
      expect(after.bazaar_listings.map((l) => l.resource)).toEqual([
        "https://new.example/api",
        "https://new.example/b",
        "https://old.example/api",
      ]);
      expect((await service.report(m)).report).toEqual(after);
    } finally {
      analytics.close();
    }
  });

  it("resolves a window once per data version", async () => {
    const analytics = await analyticsWith([payment({ payer: addr("a"), payTo: m, amount: 1_000 })]);
    try {
      const all = analytics.all.bind(analytics);
      let resolved = 0;
      analytics.all = ((sql: string, params?: Params) => {
        if (sql.includes("max(block_number) FROM payments")) resolved++;
        return all(sql, params);
      }) as Analytics["all"];
      const service = new ReportService(analytics, { publicUrl: "https://r.test" });
      await service.report(m);
      await service.report(m);
      await service.leaderboard();
      expect(resolved).toBe(1);
      await importNdjson(analytics, ndjsonFile([payment({ payer: addr("b"), payTo: m, amount: 2_000 })]));
      expect((await service.report(m)).report.tx).toBe(2);
      expect(resolved).toBe(2);
    } finally {
      analytics.close();
    }
  });

  it("keeps nothing of a build that fails, and builds on the next call", async () => {
    const analytics = await analyticsWith([payment({ payer: addr("a"), payTo: m, amount: 1_000 })]);
    try {
      beforeStatement(analytics, "CREATE OR REPLACE TEMP TABLE rw_figures", async () => {
        throw new Error("disk full");
      });
      const service = new ReportService(analytics, { publicUrl: "https://r.test" });
      await expect(service.report(m)).rejects.toThrow("disk full");
      expect(await analytics.one("SELECT count(*) AS n FROM reports")).toEqual({ n: 0n });
      expect(await analytics.one("SELECT count(*) AS n FROM report_windows")).toEqual({ n: 0n });
      expect((await windowTables(analytics))?.n).toBe(0n);
      expect((await service.report(m)).report.tx).toBe(1);
    } finally {
      analytics.close();
    }
  });
});

describe("sums past 2^63", () => {
  const pricedPast = worlds.world([
    payment({ payer: addr("a"), payTo: m, amount: 1_000_000 }),
    { type: "listing", pay_to: m, resource: "https://shop.example/x", price_usd: 1e300, description: "d" },
  ]);
  it("builds beside a listing priced past any payment, and shows that listing", async () => {
    const { report } = await pricedPast(m);
    expect(report.usd).toBe(1);
    expect(report.bazaar_listings.map((l) => l.price_usd)).toEqual([1e300]);
  });

  it("reports a week of payments at the amount bound exactly: report, leaderboard, JSON, page and dataset", async () => {
    // 1,500 payments of 10^16 units: 1.5 * 10^19, past BIGINT's 9.2 * 10^18. A third are self-payments.
    const big = addr("big-merchant");
    const small = addr("small-merchant");
    const analytics = await analyticsWith([
      ...repeat(1_000, { payer: addr("whale"), payTo: big, amount: MAX_USDC_AMOUNT }),
      ...repeat(500, { payer: big, payTo: big, amount: MAX_USDC_AMOUNT }),
      payment({ payer: addr("b"), payTo: small, amount: 1_000_000 }),
    ]);
    try {
      const service = new ReportService(analytics, { publicUrl: "https://r.test" });
      const { report, details } = await service.report(big, END);
      expect(report).toMatchObject({
        tx: 1_500,
        usd: 15_000_000_000_000,
        real_tx: 1_000,
        real_usd: 10_000_000_000_000,
        buyers: 2,
        real_buyers: 1,
        top_buyer_share: 0.6667,
        rank_by_real_revenue: 1,
        flags: { self_payment: { tx: 500, usd: 5_000_000_000_000 } },
        paid: { median: 10_000_000_000, p25: 10_000_000_000, p75: 10_000_000_000 },
      });
      expect(report.claim).toContain(
        "received $10000000000000.00 of x402 payments passing every screen (67% of $15000000000000.00 reported)",
      );
      expect(details.exact).toEqual({ amount: "15000000000000000000", real_amount: "10000000000000000000" });
      // The days add up to the totals, to the cent.
      const cents = (k: "usd" | "real_usd") =>
        report.daily.reduce((n, d) => n + BigInt(Math.round(d[k] * 100)), 0n);
      expect([cents("usd"), cents("real_usd")]).toEqual([1_500_000_000_000_000n, 1_000_000_000_000_000n]);

      const board = await service.leaderboard(END);
      expect(board.merchants.map((e) => [e.rank, e.address, e.usd, e.real_usd])).toEqual([
        [1, big, 15_000_000_000_000, 10_000_000_000_000],
        [2, small, 1, 1],
      ]);

      const app = reportRoutes(service);
      const json = await app.request(`/v1/reports/base/${big}?end_block=${END}`);
      expect(json.status).toBe(200);
      expect(((await json.json()) as { usd: number }).usd).toBe(15_000_000_000_000);
      const page = await app.request(`/reports/base/${big}?end_block=${END}`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("$15,000,000,000,000.00");
      expect((await app.request("/")).status).toBe(200);
      const csv = await app.request(`/v1/datasets/base/reports.csv?end_block=${END}`);
      expect(csv.status).toBe(200);
      expect(await csv.text()).toContain("15000000000000");
    } finally {
      analytics.close();
    }
  });
});
