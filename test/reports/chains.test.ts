import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { bumpDataVersion, windowVersion } from "../../src/analytics/migrations.ts";
import { ARBITRUM_RECORD, BASE_RECORD, type ChainRecord, POLYGON_RECORD } from "../../src/chain/chains.ts";
import { ReportService } from "../../src/reports/index.ts";
import type { AcrossLeaderboard, MerchantAcrossChains } from "../../src/reports/model.ts";
import { publishSite } from "../../src/reports/publish/publish.ts";
import { reportRoutes } from "../../src/reports/serve/http.ts";
import { chainServiceAnswers, reportMcpServer } from "../../src/reports/serve/mcp.ts";
import {
  addr,
  analyticsWith,
  checkpoint,
  END,
  END_TIME,
  ndjsonFile,
  payment,
  transfer,
} from "../helpers/data.ts";

/**
 * Two chains in one store: Base's test week, and a Polygon week whose blocks share Base's numbers but not its
 * clock (3 s apart, dated by their own times). Each chain's reports read its own rows only: Base's reports are
 * byte for byte those of a store that holds Base alone, and Polygon's name Polygon, count its payments alone and
 * take their window from the stored times.
 */
const shop = addr("both-chains-shop");
const polygonShop = addr("polygon-only-shop");
const buyers = ["c1", "c2", "c3"].map(addr);
/** Polygon's blocks 3 s apart, ending at END_TIME at block END + 20,000: no rule of Base's gives these times. */
const POLYGON_END = END + 20_000;
const polygonTime = (block: number) => END_TIME - (POLYGON_END - block) * 3;
const onPolygon = <T extends { block_number: number }>(line: T) => ({
  ...line,
  chain: "polygon",
  block_time: polygonTime(line.block_number),
});

const baseLines = [
  payment({ payer: buyers[0] as string, payTo: shop, amount: 2_000_000 }),
  payment({ payer: buyers[1] as string, payTo: shop, amount: 1_000_000, block: END - 5_000 }),
  checkpoint(END),
];
const polygonLines = [
  // In the week: two buyers of the shop paid on both chains, one of the Polygon-only shop.
  onPolygon(
    payment({ payer: buyers[0] as string, payTo: shop, amount: 700_000, block: POLYGON_END - 1_000 }),
  ),
  onPolygon(
    payment({ payer: buyers[2] as string, payTo: shop, amount: 300_000, block: POLYGON_END - 9_000 }),
  ),
  onPolygon(
    payment({ payer: buyers[2] as string, payTo: polygonShop, amount: 50_000, block: POLYGON_END - 100 }),
  ),
  // Eight days before the week's end: the week before, however close its block number.
  onPolygon(
    payment({ payer: buyers[1] as string, payTo: shop, amount: 9_000_000, block: POLYGON_END - 230_400 }),
  ),
  onPolygon(transfer(addr("funder"), buyers[2] as string, 1_000_000, POLYGON_END - 20_000)),
  { type: "checkpoint", chain: "polygon", block_number: POLYGON_END, block_time: END_TIME },
];

let both: Analytics;
let baseOnly: Analytics;
const now = () => new Date("2026-11-23T00:00:00Z");
const service = (analytics: Analytics, chain: ChainRecord = BASE_RECORD) =>
  new ReportService(analytics, { publicUrl: "https://reports.test", now, chain });

beforeAll(async () => {
  both = await analyticsWith(baseLines);
  await importNdjson(both, ndjsonFile(polygonLines));
  baseOnly = await analyticsWith(baseLines);
});
afterAll(() => {
  both.close();
  baseOnly.close();
});

describe("reports per chain in one store", () => {
  it("leaves Base's reports byte for byte as a store of Base alone gives them", async () => {
    const alone = await service(baseOnly).reports(END);
    const beside = await service(both).reports(END);
    expect(JSON.stringify(beside)).toBe(JSON.stringify(alone));
    expect(beside.reports.map((r) => [r.chain, r.address, r.tx, r.usd])).toEqual([["base", shop, 2, 3]]);
  });

  it("reports Polygon's week from its own rows and stored times, naming Polygon", async () => {
    const polygon = service(both, POLYGON_RECORD);
    const { window, reports } = await polygon.reports();
    // The week is the 7 days to the checkpoint's own time; it starts after the last stored block before them.
    expect(window).toEqual({
      start_block: POLYGON_END - 230_400,
      end_block: POLYGON_END,
      complete: true,
      start: "2026-11-15T00:00:00+00:00",
      end: "2026-11-22T00:00:00+00:00",
      days: 7,
    });
    const byAddress = new Map(reports.map((r) => [r.address, r]));
    const both_ = byAddress.get(shop);
    expect(both_).toMatchObject({ chain: "polygon", tx: 2, usd: 1, buyers: 2 });
    expect(both_?.claim).toMatch(/from 2 of 2 buyer wallets on Polygon in the 7 days to 2026-11-22\.$/);
    expect(both_?.page).toBe(`https://reports.test/reports/polygon/${shop}`);
    expect(both_?.badge).toBe(`https://reports.test/badges/polygon/${shop}.svg`);
    expect(both_?.daily.map((d) => d.tx)).toEqual([0, 0, 0, 0, 0, 0, 2, 0]);
    expect(byAddress.get(polygonShop)).toMatchObject({ chain: "polygon", tx: 1, usd: 0.05 });
    // Base's reports of the same store know nothing of the Polygon-only shop.
    await expect(service(both).report(polygonShop, END)).rejects.toThrow(/no merchant .* is known on Base/);
  });

  it("counts a write for its own chain's windows only", async () => {
    const baseBefore = await windowVersion(both, END, "base");
    const polygonBefore = await windowVersion(both, POLYGON_END, "polygon");
    await bumpDataVersion(both, 1, "polygon");
    expect(await windowVersion(both, END, "base")).toBe(baseBefore);
    expect(await windowVersion(both, POLYGON_END, "polygon")).toBe(polygonBefore + 1n);
    // A write of every chain (the listings, a merchant's name) reaches both.
    await bumpDataVersion(both);
    expect(await windowVersion(both, END, "base")).toBe(baseBefore + 1n);
    expect(await windowVersion(both, POLYGON_END, "polygon")).toBe(polygonBefore + 2n);
  });

  it("answers each chain under its slug over HTTP, and a chain without data as such", async () => {
    const app = reportRoutes([BASE_RECORD, POLYGON_RECORD, ARBITRUM_RECORD].map((c) => service(both, c)));
    const json = async (path: string) => {
      const response = await app.request(path);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await json(`/v1/reports/polygon/${shop}`)).toMatchObject({
      status: 200,
      body: { chain: "polygon", tx: 2 },
    });
    expect(await json(`/v1/reports/base/${shop}`)).toMatchObject({
      status: 200,
      body: { chain: "base", tx: 2 },
    });
    const board = await json("/v1/leaderboard/polygon");
    expect(board.body).toMatchObject({ chain: "polygon", totals: { merchants: 2 } });
    expect(await json(`/v1/reports/arbitrum/${shop}`)).toMatchObject({
      status: 404,
      body: { error: { code: "no_data", message: expect.stringMatching(/no Arbitrum One data yet/) } },
    });
    const flags = await json("/v1/flags/polygon");
    expect(flags.body).toMatchObject({ chain: "polygon" });
    const page = await app.request("/chains/polygon");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("x402 merchants on Polygon PoS");
    const report = await (await app.request(`/reports/polygon/${shop}`)).text();
    expect(report).toContain('href="/chains/polygon"');
    expect(report).toContain(`/v1/reports/polygon/${shop}`);
    // The store holds two chains' data: each page links the other's ranking, a report its merchant across them.
    expect(report).toContain(`<a href="/merchants/${shop}">on every chain</a>`);
    const home = await (await app.request("/")).text();
    expect(home).toContain('<a href="/chains/polygon">Polygon PoS</a>');
    expect(home).not.toContain("Arbitrum One");
    const badge = await app.request(`/badges/polygon/${shop}.svg`);
    expect(badge.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    const csv = await app.request("/v1/datasets/polygon/reports.csv");
    expect(csv.headers.get("content-disposition")).toMatch(/reports-polygon-/);
    expect((await csv.text()).split("\n").filter(Boolean)).toHaveLength(3);
  });

  it("shows a merchant across chains: each chain's week side by side, their sum, and its badge", async () => {
    const app = reportRoutes([BASE_RECORD, POLYGON_RECORD, ARBITRUM_RECORD].map((c) => service(both, c)));
    const across = (await (await app.request(`/v1/merchants/${shop}`)).json()) as MerchantAcrossChains;
    expect(across.chains.map((c) => [c.chain, c.tx, c.usd, c.buyers])).toEqual([
      ["base", 2, 3, 2],
      ["polygon", 2, 1, 2],
    ]);
    expect(across.sum).toEqual({ tx: 4, usd: 4, real_tx: 4, real_usd: 4 });
    expect(across.chains[1]?.page).toBe(`https://reports.test/reports/polygon/${shop}`);
    expect(across.badge).toBe(`https://reports.test/badges/all/${shop}.svg`);
    const only = (await (await app.request(`/v1/merchants/${polygonShop}`)).json()) as MerchantAcrossChains;
    expect(only.chains.map((c) => c.chain)).toEqual(["polygon"]);
    const unknown = await app.request(`/v1/merchants/${addr("nobody")}`);
    expect([unknown.status, ((await unknown.json()) as { error: { code: string } }).error.code]).toEqual([
      404,
      "unknown_merchant",
    ]);
    const page = await (await app.request(`/merchants/${shop}`)).text();
    expect(page).toContain(`href="https://reports.test/reports/polygon/${shop}">Polygon PoS</a>`);
    expect(page).toContain(
      "received $4.00 of x402 payments passing every screen (100% of $4.00 reported) on Base and Polygon PoS, each chain&#39;s 7 days to its latest block.",
    );
    const badge = await app.request(`/badges/all/${shop}.svg`);
    expect(badge.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect(await badge.text()).toContain("$4.00/7d · 100%");
    const board = (await (await app.request("/v1/leaderboard/all")).json()) as AcrossLeaderboard;
    expect(board.weeks.map((w) => [w.chain, w.window.end_block])).toEqual([
      ["base", END],
      ["polygon", POLYGON_END],
    ]);
    expect(board.totals).toEqual({ merchants: 2, ranked: 2, unranked: 0 });
    expect(board.merchants.map((m) => [m.rank, m.address, m.real_usd, m.tx, m.chains])).toEqual([
      [1, shop, 4, 4, ["base", "polygon"]],
      [2, polygonShop, 0.05, 1, ["polygon"]],
    ]);
    expect(board.merchants[0]?.page).toBe(`https://reports.test/merchants/${shop}`);
    expect((await app.request("/v1/leaderboard/all/pages/2")).status).toBe(404);
    const people = await app.request("/chains/all");
    expect(people.status).toBe(200);
    const html = await people.text();
    expect(html).toContain("x402 merchants on every chain");
    expect(html).toContain(`<a href="/merchants/${shop}"`);
    expect((await app.request("/chains/all/ranking/2")).status).toBe(404);
  });

  it("answers agents per chain: the MCP tools take the chain, Base's by default", async () => {
    const server = reportMcpServer(
      chainServiceAnswers([BASE_RECORD, POLYGON_RECORD].map((c) => service(both, c))),
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const report = async (args: Record<string, unknown>) =>
        (await client.callTool({ name: "get_report", arguments: { address: shop, ...args } }))
          .structuredContent as { chain: string; tx: number };
      expect(await report({ chain: "polygon" })).toMatchObject({ chain: "polygon", tx: 2 });
      expect(await report({})).toMatchObject({ chain: "base", tx: 2 });
      const board = await client.callTool({ name: "get_leaderboard", arguments: { chain: "polygon" } });
      expect(board.structuredContent).toMatchObject({ chain: "polygon", totals: { merchants: 2 } });
      const bad = await client.callTool({
        name: "get_report",
        arguments: { address: shop, chain: "solana" },
      });
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("publishes one chain's week as a site of its own, under its slug", async () => {
    const app = reportRoutes([BASE_RECORD, POLYGON_RECORD].map((c) => service(both, c)));
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "x402m-chains-")), "site");
    try {
      const manifest = await publishSite(async (p) => app.request(p), dir, {
        chain: "polygon",
        version: "test",
        license: "https://example.org/l",
      });
      expect([manifest.window.end_block, manifest.merchants]).toEqual([POLYGON_END, 2]);
      const paths = new Set(manifest.files.map((f) => f.path));
      for (const p of [
        "/chains/polygon",
        "/v1/leaderboard/polygon",
        `/v1/reports/polygon/${shop}`,
        `/reports/polygon/${polygonShop}`,
        `/badges/polygon/${shop}.svg`,
        "/v1/flags/polygon",
        "/v1/datasets/polygon/reports.parquet",
      ])
        expect(paths.has(p), p).toBe(true);
      expect([...paths].some((p) => p.includes("/base/"))).toBe(false);
    } finally {
      fs.rmSync(path.dirname(dir), { recursive: true, force: true });
    }
  });
});
