import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { BASE_RECORD, SOLANA_RECORD } from "../../src/chain/chains.ts";
import { ReportService } from "../../src/reports/index.ts";
import { reportRoutes } from "../../src/reports/serve/http.ts";
import { addr, analyticsWith, checkpoint, ndjsonFile, payment } from "../helpers/data.ts";
import { runMain } from "../helpers/in-process.ts";
import {
  SOL_END_SLOT,
  SOL_WEEK_SLOTS,
  solCheckpoint,
  solKey,
  solPayment,
  solTransfer,
} from "../helpers/solana.ts";

/**
 * A Solana week in a store beside Base's (issue 86 item 4): its reports read Solana's rows alone, name Solana in
 * the claim, keep every base58 key as written, and the screens run within its data (a buyer the merchant funded
 * is flagged, as on Base). `report OWNER --chain solana` answers it on the command line.
 */
const shop = solKey("sol-shop");
const honest = ["h1", "h2"].map((l) => solKey(l));
const funded = solKey("funded-by-shop");
const start = SOL_END_SLOT - SOL_WEEK_SLOTS;
const lines = [
  solPayment({ payer: honest[0] as string, payTo: shop, amount: 1_000_000, slot: start + 1_000 }),
  solPayment({ payer: honest[1] as string, payTo: shop, amount: 500_000, slot: start + 900_000 }),
  // The merchant sends a wallet $3 that comes back as payments: its own money.
  solTransfer(shop, funded, 3_000_000, start + 1_100_000),
  solPayment({ payer: funded, payTo: shop, amount: 3_000_000, slot: start + 1_200_000 }),
  // Before the week: not counted.
  solPayment({ payer: honest[0] as string, payTo: shop, amount: 9_000_000, slot: start - 10 }),
  solCheckpoint(),
];

let store: Analytics;
let data: string;
const now = () => new Date("2026-11-23T00:00:00Z");
const solana = () =>
  new ReportService(store, { publicUrl: "https://reports.test", now, chain: SOLANA_RECORD });

beforeAll(async () => {
  store = await analyticsWith([
    payment({ payer: addr("b"), payTo: addr("base-shop"), amount: 1 }),
    checkpoint(),
  ]);
  await importNdjson(store, ndjsonFile(lines));
});
afterAll(() => {
  store?.close();
  if (data) fs.rmSync(data, { recursive: true, force: true });
});

describe("a Solana week", () => {
  it("is reported from Solana's rows alone, naming Solana, the keys as written, the merchant's money flagged", async () => {
    const { window, reports } = await solana().reports();
    expect(window).toMatchObject({
      end_block: SOL_END_SLOT,
      complete: true,
      end: "2026-11-22T00:00:00+00:00",
      days: 7,
    });
    expect(reports.map((r) => r.address)).toEqual([shop]);
    const report = reports[0];
    expect(report).toMatchObject({
      chain: "solana",
      address: shop,
      tx: 3,
      usd: 4.5,
      buyers: 3,
      real_buyers: 2,
    });
    expect(report?.flags).toEqual({ merchant_funded: { tx: 1, usd: 3 } });
    expect(report?.claim).toMatch(/from 2 of 3 buyer wallets on Solana in the 7 days to 2026-11-22\.$/);
    expect(report?.page).toBe(`https://reports.test/reports/solana/${shop}`);
    // Base's reports of the same store know nothing of the Solana shop.
    const base = new ReportService(store, { publicUrl: "https://reports.test", now, chain: BASE_RECORD });
    expect((await base.reports()).reports.map((r) => r.address)).toEqual([addr("base-shop")]);
  });

  it("answers under its slug over HTTP: report, leaderboard, badge; a base58 key in another case is another key", async () => {
    const app = reportRoutes(
      [BASE_RECORD, SOLANA_RECORD].map(
        (chain) => new ReportService(store, { publicUrl: "https://reports.test", now, chain }),
      ),
    );
    const report = await app.request(`/v1/reports/solana/${shop}`);
    expect(report.status).toBe(200);
    expect(await report.json()).toMatchObject({ chain: "solana", address: shop });
    const board = (await (await app.request("/v1/leaderboard/solana")).json()) as {
      merchants: { address: string }[];
    };
    expect(board.merchants.map((m) => m.address)).toEqual([shop]);
    expect((await app.request(`/badges/solana/${shop}.svg`)).headers.get("content-type")).toMatch(
      /^image\/svg\+xml/,
    );
    expect((await app.request(`/reports/solana/${shop}`)).status).toBe(200);
    const swapped = shop.replace(/[a-z]/, (c) => c.toUpperCase());
    expect((await app.request(`/v1/reports/solana/${swapped}`)).status).toBe(404);
    expect((await app.request("/v1/reports/solana/not-a-key")).status).toBe(400);
  });

  it("is reported by `report OWNER --chain solana`", async () => {
    data = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-solana-cli-"));
    expect((await runMain(["import", ndjsonFile(lines), "--data", data])).code).toBe(0);
    const out = await runMain(["report", shop, "--chain", "solana", "--data", data]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ chain: "solana", address: shop, real_buyers: 2 });
    const board = await runMain(["leaderboard", "--chain", "solana", "--data", data]);
    expect(JSON.parse(board.stdout)).toMatchObject({ chain: "solana" });
  });
});
