/**
 * The flag feed (issue 55): for a week of several merchants flagged by every screen, the feed says what the
 * reports say, to the cent for every merchant and screen, in pages, whole or one merchant's, as JSON, in the
 * dataset and over HTTP; one wallet's history across two stored weeks; the routes' errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { WEEK_BLOCKS } from "../../../src/chain/base.ts";
import type { FlagFeed, FlagRecord } from "../../../src/reports/model.ts";
import type { Report } from "../../../src/reports/schema.ts";
import { FLAG_KINDS } from "../../../src/reports/screens/index.ts";
import { METHODOLOGY_VERSION } from "../../../src/reports/screens/methodology.ts";
import { FlagFeedDocumentSchema, WalletHistorySchema } from "../../../src/reports/serve/document-schemas.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { flagFeedDocument } from "../../../src/reports/serve/routes/flags.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import {
  addr,
  analyticsWith,
  checkpoint,
  END,
  payment,
  repeat,
  START,
  transfer,
} from "../../helpers/data.ts";
import { flaggedPatterns } from "../../helpers/scenarios.ts";

const PUBLIC = "https://reports.test";
/** The next week's window: a week after END. */
const NEXT = END + WEEK_BLOCKS;

const m = addr("feed-merchant");
const farmShop = addr("feed-farm-shop");
const [hopA, hopB, sybil, tiny, prober, customer] = [
  "f-a",
  "f-b",
  "f-sybil",
  "f-tiny",
  "f-prober",
  "f-customer",
].map(addr) as [string, string, string, string, string, string];
const [r1, r2, r3] = ["f-r1", "f-r2", "f-r3"].map(addr) as [string, string, string];
/** 25 wallets of one farmer: one cluster, more than the page names (20). */
const farm = Array.from({ length: 25 }, (_, w) => addr(`f-farm-${w}`));
const others = Array.from({ length: 24 }, (_, i) => addr(`f-other-${i}`));
const cleanShop = addr("f-clean-shop");

const records = [
  { type: "merchant", address: m, name: "feed.example" },
  { type: "merchant", address: farmShop, name: "farmshop.example" },
  { type: "listing", pay_to: m, resource: "https://feed.example/a", price_usd: 0.01, description: "A" },
  ...repeat(20, { payer: customer, payTo: m, amount: 10_000 }),
  payment({ payer: customer, payTo: cleanShop, amount: 2_000_000 }),
  // merchant_funded, tiny_repeat, self_payment and a ring.
  ...flaggedPatterns(m, { hopA, hopB, sybil, tiny, r1, r2, r3 }),
  // A prober: one small payment to each of 25 merchants, each flagged for it.
  ...[m, ...others].map((shop, i) =>
    payment({ payer: prober, payTo: shop, amount: 10_000, block: START + 500 + i }),
  ),
  // A farm of 25 wallets, funded by one farmer, at a shop with genuine buyers: sub-cent payments, so the
  // wallets' cents are shares with remainders.
  ...farm.flatMap((w, i) => [
    transfer(addr("f-farmer"), w, 1_000_000, START - 10),
    ...repeat(14, { payer: w, payTo: farmShop, amount: 700 + i }),
  ]),
  ...Array.from({ length: 6 }, (_, b) =>
    repeat(11, { payer: addr(`f-buyer-${b}`), payTo: farmShop, amount: 12_600 }),
  ).flat(),
  checkpoint(END),
  // The next week: the farm's first wallet goes on, alone, at the farm shop.
  ...repeat(12, { payer: farm[0] as string, payTo: farmShop, amount: 100 }, END + 1_000, NEXT - 1_000),
  checkpoint(NEXT),
];

let analytics: Analytics;
let service: ReportService;
let app: ReturnType<typeof reportRoutes>;
let reports: Report[];

beforeAll(async () => {
  analytics = await analyticsWith(records);
  service = new ReportService(analytics, { publicUrl: PUBLIC });
  app = reportRoutes(service);
  ({ reports } = await service.reports(END));
}, 60_000);
afterAll(() => analytics.close());

/** Every page of the window's feed, `size` wallets a page. */
async function allPages(size: number, merchant?: string): Promise<FlagFeed[]> {
  const pages = [await service.flags(END, { size, merchant })];
  while (pages.length < (pages[0] as FlagFeed).page.pages)
    pages.push(await service.flags(END, { page: pages.length + 1, size, merchant }));
  return pages;
}

const cents = (usd: number) => Math.round(usd * 100);

async function json(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await app.request(path);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("the flag feed of a week", () => {
  it("agrees with every merchant's report to the cent, screen by screen", async () => {
    const flagged = reports.filter((r) => Object.keys(r.flags).length > 0);
    // Several merchants, every screen among them.
    expect(flagged.length).toBeGreaterThanOrEqual(26);
    expect(new Set(flagged.flatMap((r) => Object.keys(r.flags)))).toEqual(new Set(FLAG_KINDS));
    const rows = (await allPages(7)).flatMap((p) => p.wallets.flatMap((w) => w.merchants));
    for (const report of reports) {
      for (const kind of FLAG_KINDS) {
        const mine = rows.filter((r) => r.address === report.address && r.kind === kind);
        const flag = report.flags[kind];
        expect(
          [mine.reduce((n, r) => n + r.tx, 0), mine.reduce((n, r) => n + cents(r.usd), 0)],
          `${report.address} ${kind}`,
        ).toEqual([flag?.tx ?? 0, cents(flag?.usd ?? 0)]);
        for (const r of mine) expect(r.name).toBe(report.name);
      }
    }
    // And so does the dataset, line by line.
    const ndjson = await (await app.request(`/v1/datasets/base/flags.ndjson?end_block=${END}`)).text();
    const lines = ndjson
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as FlagRecord);
    expect(lines).toHaveLength(rows.length);
    for (const report of flagged) {
      for (const [kind, flag] of Object.entries(report.flags)) {
        const mine = lines.filter((l) => l.merchant === report.address && l.kind === kind);
        expect(
          mine.reduce((n, l) => n + cents(l.usd), 0),
          `${report.address} ${kind}`,
        ).toBe(cents(flag?.usd ?? 0));
      }
    }
    expect(lines[0]).toMatchObject({
      chain: "base",
      end_block: END,
      methodology_version: METHODOLOGY_VERSION,
    });
  });

  it("lists every wallet once across its pages, by flagged dollars then address", async () => {
    const pages = await allPages(7);
    const whole = pages[0] as FlagFeed;
    expect(whole.totals.wallets).toBe(pages.flatMap((p) => p.wallets).length);
    expect(whole.page).toEqual({ number: 1, size: 7, pages: Math.ceil(whole.totals.wallets / 7) });
    const wallets = pages.flatMap((p) => p.wallets);
    expect(new Set(wallets.map((w) => w.wallet)).size).toBe(wallets.length);
    const order = [...wallets].sort((a, b) => b.usd - a.usd || (a.wallet < b.wallet ? -1 : 1));
    expect(wallets.map((w) => w.wallet)).toEqual(order.map((w) => w.wallet));
    expect(cents(whole.totals.usd)).toBe(wallets.reduce((n, w) => n + cents(w.usd), 0));
    expect(whole.totals.tx).toBe(wallets.reduce((n, w) => n + w.tx, 0));
    // Each wallet's figures are its merchants', and its blocks span theirs.
    for (const w of wallets) {
      expect(cents(w.usd)).toBe(w.merchants.reduce((n, x) => n + cents(x.usd), 0));
      expect(w.methodology_version).toBe(METHODOLOGY_VERSION);
      expect(w.first_block).toBeLessThanOrEqual(w.last_block);
    }
    // The prober is one wallet at 25 merchants; the farm's wallets one cluster, the others alone.
    const p = wallets.find((w) => w.wallet === prober);
    expect(p?.merchants.map((x) => x.kind)).toEqual(Array(25).fill("prober"));
    expect([p?.first_block, p?.last_block]).toEqual([START + 500, START + 524]);
    const clusters = new Set(wallets.filter((w) => farm.includes(w.wallet)).map((w) => w.cluster));
    expect(clusters.size).toBe(1);
    expect([...clusters][0]).toMatch(/^0x[0-9a-f]{40}$/);
    expect(wallets.find((w) => w.wallet === tiny)?.cluster).toBeNull();

    const doc = flagFeedDocument(pages[1] as FlagFeed, PUBLIC);
    expect(doc.page.previous).toBe(`${PUBLIC}/v1/flags/base?end_block=${END}`);
    expect(doc.page.next).toBe(`${PUBLIC}/v1/flags/base/pages/3?end_block=${END}`);
    expect(FlagFeedDocumentSchema.safeParse(doc).error).toBeUndefined();
  });

  it("restricts the rows to one merchant, whose pages count and link them", async () => {
    const [page] = await allPages(100, farmShop);
    const report = reports.find((r) => r.address === farmShop) as Report;
    expect(page?.merchant).toBe(farmShop);
    expect(page?.totals).toEqual({
      wallets: 25,
      tx: report.flags.tiny_repeat?.tx,
      usd: report.flags.tiny_repeat?.usd,
    });
    expect(page?.wallets.flatMap((w) => w.merchants.map((x) => x.address))).toEqual(Array(25).fill(farmShop));

    // The query and the path answer the same, and the report page and the evidence link it.
    const byQuery = await app.request(
      `/v1/flags/base?merchant=${farmShop.toUpperCase().replace("0X", "0x")}&end_block=${END}`,
    );
    const byPath = await app.request(`/v1/flags/base/merchants/${farmShop}?end_block=${END}`);
    expect(await byQuery.text()).toBe(await byPath.text());
    const feed = `/v1/flags/base/merchants/${farmShop}?end_block=${END}`;
    const html = await (await app.request(`/reports/base/${farmShop}?end_block=${END}`)).text();
    expect(html).toContain(
      `25 wallets were flagged at this merchant in this window: <a href="${feed}">the flag feed</a>`,
    );
    const evidence = (await json(`/v1/reports/base/${farmShop}/evidence?end_block=${END}`)).body;
    expect(evidence.flag_feed).toEqual({ wallets: 25, url: `${PUBLIC}${feed}` });
    expect(await (await app.request(`/reports/base/${farmShop}/evidence?end_block=${END}`)).text()).toContain(
      `<a href="${feed}">The flag feed</a>`,
    );
    // A merchant without flags has an empty part, and its page no link.
    const clean = await service.flags(END, { merchant: cleanShop });
    expect([clean.totals, clean.page.pages, clean.wallets]).toEqual([{ wallets: 0, tx: 0, usd: 0 }, 1, []]);
    expect(await (await app.request(`/reports/base/${cleanShop}?end_block=${END}`)).text()).not.toContain(
      "/v1/flags/base/merchants/",
    );
  });

  it("links each wallet's entry on its merchant's evidence page, or the flag's section past the named", async () => {
    const [page] = await allPages(100, farmShop);
    const evidence = await (await app.request(`/reports/base/${farmShop}/evidence?end_block=${END}`)).text();
    const links = page?.wallets.map((w) => w.merchants[0]?.evidence ?? "") ?? [];
    const prefix = `${PUBLIC}/reports/base/${farmShop}/evidence?end_block=${END}#`;
    for (const link of links) {
      expect(link.startsWith(prefix)).toBe(true);
      expect(evidence).toContain(`id="${link.slice(prefix.length)}"`);
    }
    expect(links.filter((l) => l.endsWith("#flag-tiny_repeat"))).toHaveLength(5);
  });

  it("answers the routes with the leaderboard's paging, caching and JSON errors", async () => {
    const first = await app.request(`/v1/flags/base?end_block=${END}`);
    expect(first.headers.get("cache-control")).toBe("public, max-age=300");
    const etag = first.headers.get("etag") as string;
    const doc = await first.json();
    expect(FlagFeedDocumentSchema.parse(doc)).toEqual(flagFeedDocument(await service.flags(END), PUBLIC));
    expect(
      (await app.request(`/v1/flags/base?end_block=${END}`, { headers: { "If-None-Match": etag } })).status,
    ).toBe(304);
    expect((await json(`/v1/flags/base/pages/1?end_block=${END}`)).body).toEqual(doc);

    for (const [path, status, code] of [
      ["/v1/flags/base/pages/0", 400, "bad_page"],
      ["/v1/flags/base/pages/x", 400, "bad_page"],
      [`/v1/flags/base/pages/2?end_block=${END}`, 404, "no_such_page"],
      ["/v1/flags/base?end_block=abc", 400, "bad_end_block"],
      [`/v1/flags/base?end_block=${NEXT + 1}`, 404, "not_found"],
      ["/v1/flags/base?merchant=0x12", 400, "bad_address"],
      ["/v1/flags/base/merchants/nope", 400, "bad_address"],
      [`/v1/flags/base/merchants/${addr("f-nobody")}`, 404, "unknown_merchant"],
      ["/v1/wallets/base/0x12", 400, "bad_address"],
    ] as const) {
      const { status: got, body } = await json(path);
      expect([got, body], path).toEqual([status, { error: { code, message: expect.any(String) } }]);
    }
  });
});

describe("a wallet's history", () => {
  it("lists the stored weeks it was flagged in, the latest first, and none for a clean wallet", async () => {
    await service.flags(END);
    await service.flags(NEXT);
    const { status, body } = await json(`/v1/wallets/base/${farm[0]}`);
    expect(status).toBe(200);
    const history = WalletHistorySchema.parse(body);
    expect(history.weeks.map((w) => [w.window.end_block, w.window.start_block])).toEqual([
      [NEXT, END],
      [END, START],
    ]);
    expect(history.weeks[1]?.window).toMatchObject({
      start: "2026-11-15T00:00:00+00:00",
      end: "2026-11-22T00:00:00+00:00",
    });
    for (const week of history.weeks) {
      expect(week.merchants).toEqual([
        expect.objectContaining({ address: farmShop, name: "farmshop.example", kind: "tiny_repeat" }),
      ]);
      expect(week.merchants[0]?.evidence).toContain(`/evidence?end_block=${week.window.end_block}#`);
    }
    // Its funding still joins it to the farmer's other wallets, which pay nothing the next week.
    expect(history.weeks.map((w) => w.tx)).toEqual([12, 14]);
    expect(history.weeks[0]?.cluster).toMatch(/^0x[0-9a-f]{40}$/);
    expect(history.weeks[0]?.cluster).toBe(history.weeks[1]?.cluster);
    expect(history.methodology).toEqual({ version: METHODOLOGY_VERSION, url: `${PUBLIC}/screens#changelog` });
    expect(await (await app.request("/screens")).text()).toContain('<h2 id="changelog">Changelog</h2>');
    for (const clean of [customer, addr("f-never-seen")]) {
      expect((await json(`/v1/wallets/base/${clean}`)).body).toMatchObject({ wallet: clean, weeks: [] });
    }
  });
});
