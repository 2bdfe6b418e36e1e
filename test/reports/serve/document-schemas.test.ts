/**
 * The schemas the MCP tools declare for the evidence, the leaderboard and a search (the SDK refuses an
 * answer that does not match its tool's): the service's documents match them, for a merchant flagged by
 * every screen, with a funding path, a ring's cycle and a prober among its wallets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { FLAG_KINDS } from "../../../src/reports/screens/index.ts";
import {
  EvidenceDocumentSchema,
  LeaderboardDocumentSchema,
  SearchDocumentSchema,
} from "../../../src/reports/serve/document-schemas.ts";
import { leaderboardDocument } from "../../../src/reports/serve/routes/leaderboard.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, payment, repeat, START } from "../../helpers/data.ts";
import { flaggedPatterns } from "../../helpers/scenarios.ts";

const m = addr("schemas-merchant");
const [hopA, hopB, sybil, farm, prober] = ["s-a", "s-b", "s-sybil", "s-farm", "s-prober"].map(addr) as [
  string,
  string,
  string,
  string,
  string,
];
const [r1, r2, r3] = ["s-r1", "s-r2", "s-r3"].map(addr) as [string, string, string];

const records = [
  { type: "merchant", address: m, name: "schemas.example" },
  { type: "listing", pay_to: m, resource: "https://schemas.example/a", price_usd: 0.01, description: "A" },
  ...repeat(20, { payer: addr("s-customer"), payTo: m, amount: 10_000 }),
  // merchant_funded, tiny_repeat, self_payment and a ring.
  ...flaggedPatterns(m, { hopA, hopB, sybil, tiny: farm, r1, r2, r3 }),
  // A prober: one small payment to each of 25 merchants.
  ...Array.from({ length: 25 }, (_, i) =>
    payment({
      payer: prober,
      payTo: i === 0 ? m : addr(`s-other-${i}`),
      amount: 10_000,
      block: START + 500 + i,
    }),
  ),
];

let analytics: Analytics;
let service: ReportService;

beforeAll(async () => {
  analytics = await analyticsWith(records);
  service = new ReportService(analytics, { publicUrl: "https://reports.test" });
});
afterAll(() => analytics.close());

describe("the documents' schemas", () => {
  it("hold the evidence of a merchant flagged by every screen", async () => {
    const evidence = await service.evidence(m, END);
    expect(evidence.flags.map((f) => f.kind).sort()).toEqual([...FLAG_KINDS].sort());
    const wallets = evidence.flags.flatMap((f) => f.wallets);
    expect(wallets.some((w) => (w.funding_path?.length ?? 0) > 0)).toBe(true);
    expect(wallets.some((w) => w.ring?.cycle)).toBe(true);
    expect(wallets.some((w) => w.prober)).toBe(true);
    expect(EvidenceDocumentSchema.safeParse(evidence).error).toBeUndefined();
  });

  it("hold a leaderboard page and a search, ranked and unranked merchants both", async () => {
    const board = leaderboardDocument(await service.leaderboard(END), service.publicUrl);
    expect(board.merchants.length).toBeGreaterThan(0);
    expect(board.unranked.length).toBeGreaterThan(0);
    expect(LeaderboardDocumentSchema.safeParse(board).error).toBeUndefined();
    const found = await service.search("schemas", END);
    expect(found.merchants.map((e) => e.address)).toEqual([m]);
    expect(found.listings.map((l) => l.pay_to)).toEqual([m]);
    expect(SearchDocumentSchema.safeParse(found).error).toBeUndefined();
  });

  it("refuse a document with a field they do not declare", async () => {
    const evidence = await service.evidence(m, END);
    expect(EvidenceDocumentSchema.safeParse({ ...evidence, extra: 1 }).success).toBe(false);
  });
});
