import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SyntheticOptions, type SyntheticSummary, writeSynthetic } from "../../scripts/synthetic.ts";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { ReportService } from "../../src/reports/index.ts";

const OPTIONS: SyntheticOptions = {
  seed: 7,
  merchants: 40,
  buyers: 300,
  payments: 4_000,
  endBlock: 53_350_927,
  endTime: "2026-11-01T00:00:01Z",
};

const sha256 = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

describe("synthetic week generator", () => {
  let dir: string;
  let file: string;
  let summary: SyntheticSummary;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402-synthetic-"));
    file = path.join(dir, "a.ndjson");
    summary = await writeSynthetic(file, OPTIONS);
  });

  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("is deterministic: the same seed gives the same bytes, another seed other bytes", async () => {
    const again = path.join(dir, "b.ndjson");
    const other = path.join(dir, "c.ndjson");
    await writeSynthetic(again, OPTIONS);
    await writeSynthetic(other, { ...OPTIONS, seed: 8 });
    expect(sha256(again)).toBe(sha256(file));
    expect(sha256(other)).not.toBe(sha256(file));
  });

  it("writes the counts it reports, with exactly the payments asked for and consistent block times", () => {
    const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(summary.lines);
    expect(fs.statSync(file).size).toBe(summary.bytes);
    expect(summary.payments).toBe(OPTIONS.payments);
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.filter((r) => r.type === "payment")).toHaveLength(OPTIONS.payments);
    expect(records.at(-1)).toEqual({
      type: "checkpoint",
      chain: "base",
      block_number: OPTIONS.endBlock,
      block_time: "2026-11-01T00:00:01Z",
    });
    const endTime = Date.parse("2026-11-01T00:00:01Z") / 1000;
    for (const r of records) {
      if (r.type !== "payment" && r.type !== "transfer") continue;
      const block = r.block_number as number;
      expect(block).toBeGreaterThan(OPTIONS.endBlock - 302_400);
      expect(block).toBeLessThanOrEqual(OPTIONS.endBlock);
      const time =
        typeof r.block_time === "number" ? r.block_time : Date.parse(r.block_time as string) / 1000;
      expect(time).toBe(endTime - 2 * (OPTIONS.endBlock - block));
    }
    const keys = new Set(records.filter((r) => r.tx_hash).map((r) => `${r.tx_hash}/${r.log_index}`));
    expect(keys.size).toBe(summary.payments + summary.transfers);
  });

  it("imports without a bad line, and every screen flags its planted pattern but not the genuine demand", async () => {
    const analytics = await Analytics.open({
      dataDir: fs.mkdtempSync(path.join(dir, "analytics-")),
      memoryLimit: "512MB",
    });
    try {
      const counts = await importNdjson(analytics, file);
      expect(counts.payment).toEqual({ read: summary.payments, added: summary.payments });
      expect(counts.transfer).toEqual({ read: summary.transfers, added: summary.transfers });
      expect(counts.listing.read).toBe(summary.listings);
      expect(counts.checkpoint.added).toBe(1);

      const { reports } = await new ReportService(analytics, {
        publicUrl: "http://127.0.0.1:8402",
      }).reports();
      expect(reports).toHaveLength(OPTIONS.merchants);
      const byAddress = new Map(reports.map((r) => [r.address, r]));
      const flagged = (address: string | undefined) => Object.keys(byAddress.get(address ?? "")?.flags ?? {});
      const roles = summary.roles;
      expect(flagged(roles.self_payment[0])).toContain("self_payment");
      expect(flagged(roles.merchant_funded[0])).toContain("merchant_funded");
      expect(flagged(roles.ring_transfer[0])).toContain("ring");
      for (const m of roles.ring_reciprocal) expect(flagged(m)).toContain("ring");
      expect(flagged(roles.tiny_repeat[0])).toContain("tiny_repeat");
      expect(reports.filter((r) => r.flags.prober).length).toBeGreaterThanOrEqual(25);
      expect(reports.some((r) => r.held)).toBe(true);
      expect(reports.some((r) => r.frozen)).toBe(false);
      expect(reports.some((r) => r.exchange_flow_note !== null)).toBe(true);
      expect(reports.some((r) => r.bazaar_listings.some((l) => l.description.endsWith("…")))).toBe(true);

      // The wallets of genuine demand (large customer, steady integration, metered use) pass every screen.
      const details = await analytics.all<{ details: string }>("SELECT details FROM reports");
      const flaggedWallets = new Set(
        details.flatMap((d) =>
          Object.values(
            JSON.parse(d.details).flagged_wallets as Record<string, { wallet: string }[]>,
          ).flatMap((ws) => ws.map((w) => w.wallet)),
        ),
      );
      expect(summary.wallets.genuine.length).toBeGreaterThanOrEqual(3);
      for (const w of summary.wallets.genuine) expect(flaggedWallets.has(w)).toBe(false);
    } finally {
      analytics.close();
    }
  });

  it("refuses fewer payments than the planted patterns need", async () => {
    await expect(writeSynthetic(path.join(dir, "d.ndjson"), { ...OPTIONS, payments: 10 })).rejects.toThrow(
      /planted/,
    );
  });
});
