/**
 * Stores written through the project's own import, then damaged the ways a disk, a copy or a crash damages
 * them: bytes changed inside a block, the file cut short, the write-ahead log changed.
 */
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { onTestFinished } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { dataLayout } from "../../src/config/layout.ts";
import { addr, checkpoint, END, ndjsonFile, payment, transfer } from "../helpers/data.ts";

export const BLOCK_SIZE = 262_144;
const BLOCKS_START = 12_288;

export interface Store {
  dataDir: string;
  file: string;
}

/**
 * A closed store holding `payments` payments spread over a week's blocks (20,000 fill a few blocks of their
 * own), a few transfers, a listing, a merchant and a checkpoint. Removed when the test ends.
 *
 * A copy of one made once per process and size: making it (a new store, 20,000 payments imported) took 1.6 s
 * of CPU, copying its closed file a few milliseconds, and every test that damages a store takes one of its
 * own (issue 87 item 6). A closed store is its one file, so the copy is the store as made.
 */
export async function makeStore(payments = 20_000): Promise<Store> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-damage-"));
  onTestFinished(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  fs.cpSync(await madeStore(payments), dataDir, { recursive: true });
  return { dataDir, file: dataLayout(dataDir).analytics.file };
}

/** The stores `makeStore` copies, by number of payments: made when first asked for, removed when the process exits. */
const made = new Map<number, Promise<string>>();

function madeStore(payments: number): Promise<string> {
  let store = made.get(payments);
  if (!store) {
    store = writeStore(payments);
    made.set(payments, store);
    store.catch(() => made.delete(payments));
  }
  return store;
}

async function writeStore(payments: number): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-damage-made-"));
  process.once("exit", () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const merchant = addr("damage-merchant");
  const records: object[] = [
    { type: "merchant", address: merchant, name: "damage.example" },
    {
      type: "listing",
      pay_to: merchant,
      resource: "https://damage.example/v1",
      price_usd: 0.01,
      description: "d",
    },
  ];
  for (let i = 0; i < payments; i++) {
    records.push(
      payment({
        payer: addr(`payer-${i % 997}`),
        payTo: merchant,
        amount: 10_000 + i,
        block: END - (i % 300_000),
      }),
    );
  }
  for (let i = 0; i < 5; i++) records.push(transfer(addr(`payer-${i}`), merchant, 1_000_000));
  records.push(checkpoint());
  const analytics = await Analytics.open({ dataDir, threads: 1 });
  try {
    await importNdjson(analytics, ndjsonFile(records));
  } finally {
    analytics.close();
  }
  return dataDir;
}

/** The store's files (the database and its write-ahead log) by name, with a digest of each: to compare. */
export function fingerprint(store: Store): Record<string, string> {
  const prints: Record<string, string> = {};
  for (const name of fs.readdirSync(store.dataDir)) {
    if (!name.startsWith("analytics.duckdb")) continue;
    prints[name] = crypto
      .createHash("sha256")
      .update(fs.readFileSync(path.join(store.dataDir, name)))
      .digest("hex");
  }
  return prints;
}

/** Blocks holding `table`'s data and no other table's, as DuckDB lists them (the store must be closed). */
export function blocksOnlyOf(store: Store, table: string): Promise<number[]> {
  return blocks(store, table, true);
}

/** Blocks holding any of `table`'s data, shared or not (the store must be closed). */
export function blocksOf(store: Store, table: string): Promise<number[]> {
  return blocks(store, table, false);
}

async function blocks(store: Store, table: string, only: boolean): Promise<number[]> {
  const instance = await DuckDBInstance.create(store.file, { access_mode: "READ_ONLY" });
  try {
    const connection = await instance.connect();
    const reader = await connection.runAndReadAll(
      `SELECT block_id AS id, ${only ? "bool_and" : "bool_or"}(table_name = $table) AS own FROM (
         ${(await tableList(connection)).map((t) => `SELECT '${t}' AS table_name, block_id FROM pragma_storage_info('${t}')`).join(" UNION ALL ")}
       ) WHERE block_id >= 0 GROUP BY block_id HAVING own ORDER BY block_id`,
      { table },
    );
    connection.closeSync();
    return reader.getRowObjectsJS().map((r) => Number(r.id));
  } finally {
    instance.closeSync();
  }
}

async function tableList(connection: Awaited<ReturnType<DuckDBInstance["connect"]>>): Promise<string[]> {
  const reader = await connection.runAndReadAll("SELECT table_name FROM duckdb_tables() ORDER BY 1");
  return reader.getRowObjectsJS().map((r) => String(r.table_name));
}

/**
 * Overwrites 64 bytes inside block `id` (after its checksum) with distinct values: DuckDB's checksum XORs
 * one product per 64-bit word, so equal words written alike could cancel out; distinct ones never do here.
 */
export function damageBlock(store: Store, id: number): void {
  const bytes = Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 37 + 11) & 0xff));
  const fd = fs.openSync(store.file, "r+");
  try {
    fs.writeSync(fd, bytes, 0, bytes.length, BLOCKS_START + id * BLOCK_SIZE + 8 + 4096);
  } finally {
    fs.closeSync(fd);
  }
}

export const blockByte = (id: number) => BLOCKS_START + id * BLOCK_SIZE;

// The bare driver in a child killed right after its writes: DuckDB checkpoints the log into the file on a
// clean close, so only a process that dies keeps one, as a crash would.
const LEAVE_WAL = `
import { DuckDBInstance } from "@duckdb/node-api";
const instance = await DuckDBInstance.create(process.env.STORE_FILE);
const connection = await instance.connect();
await connection.run("INSERT INTO meta VALUES ('logged', 'yes')");
await connection.run("INSERT INTO payments SELECT * FROM payments LIMIT 3");
process.kill(process.pid, "SIGKILL");
`;

/** Leaves the store with a write-ahead log of two committed transactions, not yet checkpointed. */
export async function leaveWal(store: Store): Promise<string> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", LEAVE_WAL], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, STORE_FILE: store.file },
  });
  await new Promise((resolve) => child.once("exit", resolve));
  const wal = `${store.file}.wal`;
  if (!fs.existsSync(wal) || fs.statSync(wal).size === 0) throw new Error("no write-ahead log was left");
  return wal;
}

/** Writes `bytes` at `offset` of `file`. */
export function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = fs.openSync(file, "r+");
  try {
    fs.writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    fs.closeSync(fd);
  }
}
