/**
 * DuckDB's failures on the store, produced live (so that a DuckDB whose messages change fails here), as the
 * errors they mean: by DuckDB's error type and its whole sentence, never by a word such as "lock".
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it, onTestFinished } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import {
  AnalyticsBusyError,
  AnalyticsDamagedError,
  AnalyticsFileError,
  AnalyticsVersionError,
  duckdbErrorType,
  storeError,
} from "../../src/analytics/store-errors.ts";
import { dataLayout } from "../../src/config/layout.ts";
import { holdAnalytics } from "../helpers/hold.ts";
import { makeStore, overwrite } from "./damage.ts";

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-errors-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const openError = (dataDir: string) =>
  Analytics.open({ dataDir, threads: 1 }).then(
    (analytics) => {
      analytics.close();
      throw new Error("opened");
    },
    (error: unknown) => error as Error,
  );

/** DuckDB's checksum, to re-sign a header changed on purpose. */
function resign(file: string, at: number): void {
  const fd = fs.openSync(file, "r+");
  const block = Buffer.alloc(4096);
  fs.readSync(fd, block, 0, 4096, at);
  let sum = 5381n;
  for (let i = 8; i < 4096; i += 8)
    sum ^= (block.readBigUInt64LE(i) * 0xbf58476d1ce4e5b9n) & ((1n << 64n) - 1n);
  block.writeBigUInt64LE(sum, 0);
  fs.writeSync(fd, block, 0, 4096, at);
  fs.closeSync(fd);
}

describe("DuckDB's failures on the store", () => {
  it("carry DuckDB's type at the start of their message", async () => {
    const error = await DuckDBInstance.create("/nonexistent-x402m/analytics.duckdb").catch((e: unknown) => e);
    expect(duckdbErrorType(error)).toBe("IO");
    expect(duckdbErrorType(new Error("not DuckDB's"))).toBeUndefined();
  });

  it("another process holding the file: busy, naming it", async () => {
    const dir = tempDir();
    const holder = await holdAnalytics(dir);
    const error = await openError(dir);
    expect(error).toBeInstanceOf(AnalyticsBusyError);
    expect(error.message).toBe(
      `the analytics store ${dataLayout(dir).analytics.file} is in use by another process (PID ${holder.pid}, ${(error as AnalyticsBusyError).holder.program})`,
    );
  });

  it("a file that is not DuckDB's, or empty: damaged", async () => {
    for (const content of [Buffer.alloc(100_000, 7), Buffer.alloc(0)]) {
      const dir = tempDir();
      fs.writeFileSync(dataLayout(dir).analytics.file, content);
      const error = await openError(dir);
      expect(error).toBeInstanceOf(AnalyticsDamagedError);
      expect(error.message).toContain("is damaged: it does not start with DuckDB's header");
      expect(fs.readFileSync(dataLayout(dir).analytics.file)).toEqual(content);
    }
  });

  it("a file of another DuckDB's storage version: that version, not damage", async () => {
    const store = await makeStore(10);
    overwrite(store.file, 12, Buffer.from([70, 0, 0, 0, 0, 0, 0, 0]));
    resign(store.file, 0);
    const error = await openError(store.dataDir);
    expect(error).toBeInstanceOf(AnalyticsVersionError);
    expect(error.message).toMatch(
      /was written by a newer version of DuckDB \(storage version 70\); this program's DuckDB reads versions 64 to \d+/,
    );
  });

  it("a checksum that fails at open: damaged, whatever it says about locks", async () => {
    const store = await makeStore(10);
    // The current database header: the one DuckDB reads first, checked before any lock question.
    overwrite(store.file, 8192 + 200, Buffer.from("the word lock and the word block"));
    overwrite(store.file, 4096 + 200, Buffer.from("the word lock and the word block"));
    const error = await openError(store.dataDir);
    expect(error).toBeInstanceOf(AnalyticsDamagedError);
    expect(error.message).toMatch(/is damaged: the block at byte (4096|8192) fails its checksum/);
  });

  it("a missing directory, when opening: the store cannot be opened", async () => {
    const file = "/nonexistent-x402m/analytics.duckdb";
    const error = await DuckDBInstance.create(file).catch((e: unknown) => e);
    const meant = storeError(error, file, true);
    expect(meant).toBeInstanceOf(AnalyticsFileError);
    expect(meant?.message).toBe(
      `the analytics store ${file} cannot be opened: Cannot open file "${file}": No such file or directory`,
    );
  });

  it("other failures of a query stay as DuckDB gave them: a constraint, an import's unreadable file", async () => {
    const dir = tempDir();
    const analytics = await Analytics.open({ dataDir: dir, threads: 1 });
    try {
      const constraint = await analytics
        .run("INSERT INTO meta VALUES ('data_version', '1')")
        .catch((e: Error) => e);
      expect(duckdbErrorType(constraint)).toBe("Constraint");
      expect(storeError(constraint, analytics.file)).toBeUndefined();
      const unreadable = await analytics
        .all("SELECT * FROM read_json('/nonexistent-x402m/file.ndjson')")
        .catch((e: Error) => e);
      expect(duckdbErrorType(unreadable)).toBe("IO");
      expect(unreadable).not.toBeInstanceOf(AnalyticsFileError);
      // And the store goes on.
      expect(await analytics.one("SELECT count(*) AS n FROM meta")).toEqual({ n: 1n });
    } finally {
      analytics.close();
    }
  });
});
