/**
 * The store file read by this program itself (src/analytics/store-file.ts), held to DuckDB's own reading: the
 * same blocks in use, the same checksums. A DuckDB upgrade that changes the layout fails here, not in the
 * field, where a wrong reading would refuse healthy stores.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it, onTestFinished } from "vitest";
import { blocksInUse, checksumHolds, verifyStoreFile, walDamage } from "../../src/analytics/store-file.ts";
import { BLOCK_SIZE, blockByte, damageBlock, leaveWal, makeStore, overwrite } from "./damage.ts";

/** DuckDB's checksum with 64-bit integers, as its C++ computes it: the reference for the 32-bit version. */
function referenceChecksum(data: Buffer): bigint {
  const mask = (1n << 64n) - 1n;
  let sum = 5381n;
  for (let i = 0; i < data.length; i += 8) sum ^= (data.readBigUInt64LE(i) * 0xbf58476d1ce4e5b9n) & mask;
  return sum;
}

async function databaseSize(file: string): Promise<{ total: number; free: number }> {
  const instance = await DuckDBInstance.create(file, { access_mode: "READ_ONLY" });
  try {
    const connection = await instance.connect();
    const [row] = (await connection.runAndReadAll("PRAGMA database_size")).getRowObjectsJS();
    connection.closeSync();
    return { total: Number(row?.total_blocks), free: Number(row?.free_blocks) };
  } finally {
    instance.closeSync();
  }
}

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-store-file-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("the checksum", () => {
  it("is DuckDB's, computed exactly in 32-bit halves", () => {
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 24;
    };
    for (const size of [16, 4096, 65536]) {
      // Words at the extremes (all ones, all zeros) and random ones.
      const data = Buffer.from(
        Array.from({ length: size - 8 }, (_, i) => (i < 64 ? 0xff : i < 128 ? 0 : random())),
      );
      const block = Buffer.alloc(size);
      data.copy(block, 8);
      block.writeBigUInt64LE(referenceChecksum(data), 0);
      expect(checksumHolds(block)).toBe(true);
      block[size - 1] = (block[size - 1] as number) ^ 1;
      expect(checksumHolds(block)).toBe(false);
    }
  });
});

describe("the blocks in use", () => {
  it("are those DuckDB counts, in a store the import wrote", async () => {
    const store = await makeStore();
    const { total, free } = await databaseSize(store.file);
    expect(blocksInUse(store.file)).toHaveLength(total - free);
    expect(verifyStoreFile(store.file)).toEqual({
      size: fs.statSync(store.file).size,
      blockSize: BLOCK_SIZE,
      blocksInUse: total - free,
      blocksVerified: total - free,
      damage: [],
    });
  });

  it("are those DuckDB counts when the free list spans many metadata sub-blocks", async () => {
    const file = path.join(tempDir(), "small.duckdb");
    // 16 KiB blocks: a free list of hundreds of blocks takes several of the 248-byte sub-blocks.
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    await connection.run(`ATTACH '${file}' AS s (BLOCK_SIZE 16384)`);
    await connection.run("CREATE TABLE s.a AS SELECT i, 'x' || i AS t FROM range(300000) r(i)");
    await connection.run("CREATE TABLE s.b AS SELECT i FROM range(1000) r(i)");
    await connection.run("CHECKPOINT s");
    await connection.run("DROP TABLE s.a");
    await connection.run("CHECKPOINT s");
    await connection.run("DETACH s");
    connection.closeSync();
    instance.closeSync();

    const { total, free } = await databaseSize(file);
    expect(free).toBeGreaterThan(100);
    expect(blocksInUse(file)).toHaveLength(total - free);
    expect(verifyStoreFile(file).damage).toEqual([]);
  });
});

describe("a damaged store file", () => {
  it("names each block that fails its checksum", async () => {
    const store = await makeStore();
    const inUse = blocksInUse(store.file) as number[];
    const [first, second] = [inUse[1] as number, inUse[inUse.length - 2] as number];
    damageBlock(store, first);
    damageBlock(store, second);
    expect(verifyStoreFile(store.file).damage).toEqual([
      `2 blocks ${first} (byte ${blockByte(first)}), ${second} (byte ${blockByte(second)}) fail their checksums`,
    ]);
  });

  it("finds blocks in use beyond its end when it was cut short", async () => {
    const store = await makeStore();
    const inUse = blocksInUse(store.file) as number[];
    const last = inUse[inUse.length - 1] as number;
    fs.truncateSync(store.file, blockByte(last) + 100);
    expect(verifyStoreFile(store.file).damage.join()).toMatch(
      /^it ends at byte \d+, before .*: it was cut short$/,
    );
  });

  it("finds a damaged header", async () => {
    const store = await makeStore(100);
    overwrite(store.file, 4096 + 100, Buffer.from("damage"));
    expect(verifyStoreFile(store.file).damage).toEqual(["its header at byte 4096 fails its checksum"]);
  });

  it("is not DuckDB's when it does not start with DuckDB's header", () => {
    const file = path.join(tempDir(), "analytics.duckdb");
    fs.writeFileSync(file, Buffer.alloc(100_000, 7));
    expect(verifyStoreFile(file).damage).toEqual(["it does not start with DuckDB's header"]);
  });

  it("verifies an even sample when given fewer bytes than it holds", async () => {
    const store = await makeStore();
    const verdict = verifyStoreFile(store.file, { maxBytes: 2 * BLOCK_SIZE });
    expect(verdict.blocksInUse).toBeGreaterThan(4);
    expect(verdict.blocksVerified).toBe(2);
  });
});

describe("the write-ahead log", () => {
  it("passes as DuckDB writes it, and when there is none", async () => {
    const store = await makeStore(100);
    expect(walDamage(`${store.file}.wal`)).toBeUndefined();
    const wal = await leaveWal(store);
    expect(walDamage(wal)).toBeUndefined();
  });

  it("fails when its first entry is damaged, which DuckDB would take for a torn log and skip", async () => {
    const store = await makeStore(100);
    const wal = await leaveWal(store);
    overwrite(wal, 0, Buffer.from([0x13, 0x37]));
    expect(walDamage(wal)).toMatch(/does not start as DuckDB writes one/);
  });

  it("passes when too short to hold its first entry: a write torn by a crash, nothing committed in it", async () => {
    const store = await makeStore(100);
    const wal = await leaveWal(store);
    fs.truncateSync(wal, 5);
    expect(walDamage(wal)).toBeUndefined();
  });
});
