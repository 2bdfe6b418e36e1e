/**
 * A damaged analytics store is neither served nor written on: opening refuses it, naming the file and what to
 * do, and leaves its files byte for byte as they were; damage a query meets after opening stops the store.
 */
import fs from "node:fs";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { AnalyticsDamagedError, AnalyticsVersionError } from "../../src/analytics/store-errors.ts";
import { blocksInUse } from "../../src/analytics/store-file.ts";
import {
  BLOCK_SIZE,
  blockByte,
  blocksOf,
  blocksOnlyOf,
  damageBlock,
  fingerprint,
  leaveWal,
  makeStore,
  overwrite,
  type Store,
} from "./damage.ts";

async function refusal(store: Store): Promise<unknown> {
  return Analytics.open({ dataDir: store.dataDir, threads: 1 }).then(
    (analytics) => {
      analytics.close();
      return undefined;
    },
    (error: unknown) => error,
  );
}

describe("opening a damaged store", () => {
  it("refuses a block of payments that fails its checksum, which DuckDB alone opens, counts and serves", async () => {
    const store = await makeStore();
    const [block] = await blocksOnlyOf(store, "payments");
    damageBlock(store, block as number);
    const before = fingerprint(store);

    // DuckDB reads the block only when a query needs it: opening and counting do not.
    const bare = await DuckDBInstance.create(store.file, { access_mode: "READ_ONLY" });
    const counted = (
      await (await bare.connect()).runAndReadAll("SELECT count(*) AS n FROM payments")
    ).getRowObjectsJS();
    bare.closeSync();
    expect(counted).toEqual([{ n: 20_000n }]);

    const error = await refusal(store);
    expect(error).toBeInstanceOf(AnalyticsDamagedError);
    expect((error as Error).message).toBe(
      `the analytics store ${store.file} is damaged: block ${block} (byte ${blockByte(block as number)}) fails its checksum. It was left as it is: restore it from a backup, or index or import again into a new data directory (--data DIR); \`x402-merchants check\` lists the damage`,
    );
    expect(fingerprint(store)).toEqual(before);
  });

  it("refuses a store cut short", async () => {
    const store = await makeStore();
    const inUse = blocksInUse(store.file) as number[];
    fs.truncateSync(store.file, blockByte(inUse[inUse.length - 1] as number) + 100);
    const before = fingerprint(store);
    const error = await refusal(store);
    expect(error).toBeInstanceOf(AnalyticsDamagedError);
    expect((error as Error).message).toMatch(/is damaged: .*it was cut short/);
    expect(fingerprint(store)).toEqual(before);
  });

  it("refuses damage beside a write-ahead log, which DuckDB would checkpoint into the damaged file on close", async () => {
    const store = await makeStore();
    await leaveWal(store);
    const [block] = await blocksOnlyOf(store, "payments");
    damageBlock(store, block as number);
    const before = fingerprint(store);
    expect(Object.keys(before).sort()).toEqual(["analytics.duckdb", "analytics.duckdb.wal"]);
    expect(await refusal(store)).toBeInstanceOf(AnalyticsDamagedError);
    expect(fingerprint(store)).toEqual(before);
  });

  it("refuses a write-ahead log whose entry fails its checksum", async () => {
    const store = await makeStore();
    const wal = await leaveWal(store);
    overwrite(wal, Math.floor(fs.statSync(wal).size / 2), Buffer.from("damaged in the middle"));
    const before = fingerprint(store);
    const error = await refusal(store);
    expect(error).toBeInstanceOf(AnalyticsDamagedError);
    expect((error as Error).message).toMatch(
      /its write-ahead log .*analytics\.duckdb\.wal cannot be replayed \(.*Corrupt WAL file/,
    );
    expect(fingerprint(store)).toEqual(before);
  });

  it("refuses a write-ahead log whose first entry is damaged, which DuckDB would skip, then overwrite", async () => {
    const store = await makeStore();
    const wal = await leaveWal(store);
    overwrite(wal, 0, Buffer.from([0x13, 0x37]));
    const before = fingerprint(store);
    const error = await refusal(store);
    expect(error).toBeInstanceOf(AnalyticsDamagedError);
    expect((error as Error).message).toMatch(/does not start as DuckDB writes one/);
    expect(fingerprint(store)).toEqual(before);
  });

  it("refuses a schema newer than this program's, leaving it as it is", async () => {
    const store = await makeStore(100);
    const bare = await DuckDBInstance.create(store.file);
    const connection = await bare.connect();
    await connection.run("INSERT INTO schema_migrations VALUES (99, 'from the future', now()::TIMESTAMP)");
    connection.closeSync();
    bare.closeSync();
    const before = fingerprint(store);
    const error = await refusal(store);
    expect(error).toBeInstanceOf(AnalyticsVersionError);
    expect((error as Error).message).toMatch(/has schema version 99, written by a newer x402-merchants/);
    expect(fingerprint(store)).toEqual(before);
  });

  it("opens a whole store, with or without a write-ahead log", async () => {
    const store = await makeStore();
    await leaveWal(store);
    const analytics = await Analytics.open({ dataDir: store.dataDir, threads: 1 });
    expect(await analytics.one("SELECT count(*) AS n FROM payments")).toEqual({ n: 20_003n });
    analytics.close();
  });
});

describe("opening a store larger than the bytes verified at open", () => {
  it("verifies an even sample, then reads the small tables that decide what is served through DuckDB", async () => {
    const store = await makeStore();
    const [sampled] = blocksInUse(store.file) as number[];
    const open = () => Analytics.open({ dataDir: store.dataDir, threads: 1, openVerifyBytes: BLOCK_SIZE });
    (await open()).close();

    // A block of meta the one-block sample does not cover: DuckDB's read of meta meets it.
    const meta = (await blocksOf(store, "meta")).filter((id) => id !== sampled);
    expect(meta.length).toBeGreaterThan(0);
    damageBlock(store, meta[0] as number);
    const before = fingerprint(store);
    const error = await open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnalyticsDamagedError);
    expect((error as Error).message).toContain(
      `the block at byte ${blockByte(meta[0] as number)} fails its checksum`,
    );
    expect(fingerprint(store)).toEqual(before);
  });
});

describe("damage met after opening", () => {
  it("stops the store and its forks, and nothing is written to it", async () => {
    const store = await makeStore();
    const [block] = await blocksOnlyOf(store, "payments");
    const analytics = await Analytics.open({ dataDir: store.dataDir, threads: 1 });
    const fork = await analytics.fork();
    // A write in the log: a clean close would checkpoint it into the file.
    await analytics.run("INSERT INTO meta VALUES ('pending', 'write')");
    damageBlock(store, block as number);
    const damaged = fingerprint(store);

    const error = await analytics.all("SELECT sum(amount) FROM payments").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnalyticsDamagedError);
    expect((error as Error).message).toContain(
      `the block at byte ${blockByte(block as number)} fails its checksum`,
    );
    // Later queries, even of intact tables and on another connection, are refused with the same error.
    await expect(analytics.one("SELECT count(*) FROM meta")).rejects.toBe(error);
    await expect(fork.run("INSERT INTO meta VALUES ('more', 'write')")).rejects.toBe(error);
    fork.close();
    analytics.close();
    expect(fingerprint(store)).toEqual(damaged);
  });
});
