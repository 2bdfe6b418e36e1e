import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { WEEK_BLOCKS } from "../../src/chain/base.ts";
import { dataLayout } from "../../src/config/layout.ts";
import { removedTempDir } from "./temp-dirs.ts";

/** A window used throughout the tests: blocks END - 302,400 + 1 .. END. */
export const END = 40_000_000;
export const START = END - WEEK_BLOCKS;
/** 2026-11-22T00:00:00Z: the time of block END, so the window is 2026-11-15 to 2026-11-22. */
export const END_TIME = 1_795_305_600;

export const timeOf = (block: number) => END_TIME - (END - block) * 2;

/** The test window's bounds as `aggregateWindow` takes them (Base; day 0 is 2026-11-15). */
export const WINDOW_BOUNDS = {
  startBlock: START,
  endBlock: END,
  firstDate: "2026-11-15",
  startTime: timeOf(START) * 1000,
  endTime: END_TIME * 1000,
};

/** A deterministic address from a label: "m1" -> 0x…, the same label always the same address. */
export function addr(label: string): string {
  let h = 0x811c9dc5;
  for (const ch of label) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return `0x${h.toString(16).padStart(8, "0")}${Buffer.from(label).toString("hex").padEnd(32, "0").slice(0, 32)}`;
}

let txCounter = 0;
export function txHash(): string {
  txCounter++;
  return `0x${txCounter.toString(16).padStart(64, "0")}`;
}

export interface PaymentInput {
  payer: string;
  payTo: string;
  /** Atomic USDC units. */
  amount: number | bigint;
  block?: number;
  /** The x402 scheme the import records ("unknown" in the report when absent). */
  scheme?: string;
}

export function payment({ payer, payTo, amount, block = END - 1000, scheme }: PaymentInput) {
  return {
    type: "payment",
    chain: "base",
    tx_hash: txHash(),
    log_index: 0,
    block_number: block,
    block_time: timeOf(block),
    facilitator: addr("facilitator"),
    payer,
    pay_to: payTo,
    amount: String(amount),
    ...(scheme && { scheme }),
  };
}

export function transfer(from: string, to: string, amount: number, block = END - 200_000) {
  return {
    type: "transfer",
    chain: "base",
    tx_hash: txHash(),
    log_index: 1,
    block_number: block,
    block_time: timeOf(block),
    from,
    to,
    amount: String(amount),
  };
}

export const checkpoint = (block = END) => ({
  type: "checkpoint",
  chain: "base",
  block_number: block,
  block_time: timeOf(block),
});

/** Writes records (objects or raw lines) to a temporary NDJSON file, removed when its test (or file) ends. */
export function ndjsonFile(records: readonly (object | string)[]): string {
  const dir = removedTempDir("x402m-ndjson-");
  const file = path.join(dir, "data.ndjson");
  fs.writeFileSync(
    file,
    `${records.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n")}\n`,
  );
  return file;
}

/**
 * An empty analytics store, migrated, to copy: a new store creates and migrates its schema on open (0.2-0.3 s
 * of CPU), a copy opens in a quarter of that, and the suite opens hundreds. Made once per process by this
 * checkout's code (never a schema another checkout left), removed when the process exits. Closing it
 * checkpointed its write-ahead log into the file: the copy is the one file (test/analytics/empty-store.test.ts
 * holds its schema to a new store's).
 */
let emptyStore: Promise<string> | undefined;
export function emptyStoreDir(): Promise<string> {
  emptyStore ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-empty-"));
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    const store = await Analytics.open({ dataDir: dir, memoryLimit: "256MB", threads: 1 });
    const wal = `${store.file}.wal`;
    store.close();
    if (fs.existsSync(wal))
      throw new Error(`the empty store kept a write-ahead log (${wal}) after its close`);
    return dir;
  })().catch((error) => {
    emptyStore = undefined;
    throw error;
  });
  return emptyStore;
}

/** Puts a copy of the empty store in `dir` (made if missing), where no store is yet; returns `dir`. */
export async function emptyStoreAt(dir: string): Promise<string> {
  const template = await emptyStoreDir();
  fs.mkdirSync(dir, { recursive: true });
  if (!fs.existsSync(dataLayout(dir).analytics.file)) fs.cpSync(template, dir, { recursive: true });
  return dir;
}

export interface TempAnalyticsOptions {
  /** DuckDB's threads (1 unless given): several read a file in parallel, as in production. */
  threads?: number;
  memoryLimit?: string;
}

/** A new, empty analytics store in a temporary directory of its own, removed when its test (or file) ends. */
export async function tempAnalytics(options: TempAnalyticsOptions = {}): Promise<Analytics> {
  const dir = await emptyStoreAt(removedTempDir("x402m-analytics-"));
  return Analytics.open({
    dataDir: dir,
    memoryLimit: options.memoryLimit ?? "256MB",
    threads: options.threads ?? 1,
  });
}

/** A wallet's USDC balance at the end of a block, as the indexer stores it (table `balances`). */
export const balance = (wallet: string, amount: number, block: number) => ({
  type: "balance",
  chain: "base",
  wallet,
  block_number: block,
  amount: String(amount),
});

/** An analytics database loaded with `records` (and a checkpoint at END unless one is given). */
export async function analyticsWith(records: readonly object[]): Promise<Analytics> {
  const analytics = await tempAnalytics();
  const withCheckpoint = records.some((r) => (r as { type?: string }).type === "checkpoint")
    ? records
    : [...records, checkpoint()];
  await importNdjson(analytics, ndjsonFile(withCheckpoint));
  return analytics;
}

/** n payments of `amount` from payer to payTo spread across the window. */
export function repeat(
  n: number,
  input: Omit<PaymentInput, "block">,
  firstBlock = START + 1,
  lastBlock = END,
) {
  return Array.from({ length: n }, (_, i) =>
    payment({
      ...input,
      block: firstBlock + Math.floor(((lastBlock - firstBlock) * i) / Math.max(1, n - 1)),
    }),
  );
}

/** The report of `address` over `records` (window ending at END), with a fixed clock. */
export async function reportOf(records: readonly object[], address: string) {
  const analytics = await analyticsWith(records);
  try {
    return await reportIn(analytics, address);
  } finally {
    analytics.close();
  }
}

/**
 * `reportOf` over a store a test has already loaded (and keeps open): where the test holds the store the report
 * reads to be what an import of the same records makes, a second store of them is only its cost again.
 */
export async function reportIn(analytics: Analytics, address: string) {
  const { ReportService } = await import("../../src/reports/index.ts");
  const service = new ReportService(analytics, {
    publicUrl: "https://reports.test",
    now: () => new Date(END_TIME * 1000 + 3_600_000),
  });
  return service.report(address, END);
}
