/**
 * The data version that keeps cached reports honest is bumped by the indexer and by imports, on
 * different connections of one process. Two writers bumping it in overlapping transactions must both
 * commit (an update of one shared row made DuckDB refuse the second: "Conflict on update", which once
 * stopped the demo on resume), and the version must survive a reopen.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { upsertListings } from "../../src/analytics/listings.ts";
import { bumpDataVersion, dataVersion, foldDataWrites } from "../../src/analytics/migrations.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function open(dir?: string) {
  const dataDir = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "x402m-version-"));
  if (!dir) dirs.push(dataDir);
  return { dataDir, analytics: await Analytics.open({ dataDir, memoryLimit: "256MB", threads: 1 }) };
}

describe("the data version", () => {
  it("takes bumps from two connections in overlapping transactions, and keeps its value across a reopen", async () => {
    const { dataDir, analytics } = await open();
    const indexer = await analytics.fork();
    const before = await dataVersion(analytics);

    await analytics.run("BEGIN TRANSACTION");
    await indexer.run("BEGIN TRANSACTION");
    await bumpDataVersion(analytics);
    await bumpDataVersion(indexer);
    await bumpDataVersion(indexer);
    await analytics.run("COMMIT");
    await indexer.run("COMMIT");
    expect(await dataVersion(analytics)).toBe(before + 3n);

    // A rolled-back write leaves the version as it was.
    await indexer
      .transaction(async () => {
        await bumpDataVersion(indexer);
        throw new Error("undone");
      })
      .catch(() => undefined);
    expect(await dataVersion(indexer)).toBe(before + 3n);

    indexer.close();
    analytics.close();
    const reopened = (await open(dataDir)).analytics;
    expect(await dataVersion(reopened)).toBe(before + 3n);
    // Few writes: opening left them as they were (an open writes nothing below the threshold).
    expect(await reopened.one("SELECT count(*) AS n FROM data_writes")).toEqual({ n: 3n });
    // Folded: the appended rows are gone, their count is in meta, the version unchanged.
    await foldDataWrites(reopened, 1);
    expect(await reopened.one("SELECT count(*) AS n FROM data_writes")).toEqual({ n: 0n });
    expect(await dataVersion(reopened)).toBe(before + 3n);
    await bumpDataVersion(reopened);
    expect(await dataVersion(reopened)).toBe(before + 4n);
    reopened.close();
  });

  it("is bumped by a listings refresh that changes a listing, not by one that brings nothing new", async () => {
    const { analytics } = await open();
    try {
      const listing = {
        payTo: `0x${"ab".repeat(20)}`,
        resource: "https://shop.test/a",
        method: "GET",
        priceUsd: 0.01,
        description: "A",
      };
      const start = await dataVersion(analytics);
      await upsertListings(analytics, [listing]);
      expect(await dataVersion(analytics)).toBe(start + 1n);
      // The hourly (in the demo, 5-second) refresh of an unchanged Bazaar: every stored window stays built.
      await upsertListings(analytics, [listing]);
      expect(await dataVersion(analytics)).toBe(start + 1n);
      await upsertListings(analytics, [{ ...listing, priceUsd: 0.02 }]);
      await upsertListings(analytics, [{ ...listing, priceUsd: 0.02, description: "B" }]);
      await upsertListings(analytics, [{ ...listing, resource: "https://shop.test/b" }]);
      expect(await dataVersion(analytics)).toBe(start + 4n);
      expect(await analytics.all("SELECT price_usd, description FROM listings ORDER BY resource")).toEqual([
        { price_usd: 0.02, description: "B" },
        { price_usd: 0.01, description: "A" },
      ]);
    } finally {
      analytics.close();
    }
  });
});
