/**
 * What the screens flagged in a week, read the way the sweeps (test/reports/*-sweeps.test.ts) and the red team
 * (bench/escapes/) read it: the window's tables built by `aggregateWindow` over a store, and for any group of
 * wallets paying one merchant, what they paid it in the window and how much of that was flagged, by any screen.
 * And a store made once from the records every point of a sweep shares, copied for each point, so that a sweep
 * of many points imports the common week once.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { BASE_RECORD, CHAIN_RECORDS } from "../../src/chain/chains.ts";
import { hubsOf } from "../../src/chain/hubs.ts";
import { aggregateWindow, dropWindowTables, type WindowBounds } from "../../src/reports/week/aggregates.ts";
import { addr, analyticsWith, checkpoint, ndjsonFile, WINDOW_BOUNDS } from "./data.ts";

/** Wallets paying one merchant: a farm, or a genuine look-alike. */
export interface PayerGroup {
  wallets: readonly string[];
  merchant: string;
}

/** Of a group's payments in the window: what it paid (atomic units) and in how many payments, and the flagged part. */
export interface GroupFlags {
  paid: number;
  tx: number;
  flagged: number;
  flaggedTx: number;
}

/** The window's figures per (payer, merchant): what was paid and what was flagged, each as amount and count. */
export type WindowFlags = (group: PayerGroup) => GroupFlags;

/**
 * Builds the window's tables (the week ending at END, test/helpers/data.ts, on Base unless `bounds` says) and reads, per payer and merchant,
 * what was paid in the window (`rw_pair_totals`) and flagged (`rw_wallets`: every kind, a payment counted once),
 * then drops the tables. The store is left open.
 */
export async function windowFlags(
  analytics: Analytics,
  /** Reads more of the window's tables before they are dropped (a sweep's behaviour links). */
  also?: (analytics: Analytics) => Promise<void>,
  /** Another chain's week than Base's (the red team's on Arbitrum). */
  bounds: WindowBounds = { chain: BASE_RECORD, ...WINDOW_BOUNDS },
): Promise<WindowFlags> {
  await aggregateWindow(analytics, bounds);
  await also?.(analytics);
  const read = (table: string) =>
    analytics.all<{ payer: string; pay_to: string; amount: bigint; tx: bigint }>(
      `SELECT payer, pay_to, sum(amount)::BIGINT AS amount, sum(tx)::BIGINT AS tx FROM ${table} GROUP BY ALL`,
    );
  const paid = await read("rw_pair_totals");
  const flagged = await read("rw_wallets");
  await dropWindowTables(analytics);
  const byPayer = (rows: readonly { payer: string; pay_to: string; amount: bigint; tx: bigint }[]) => {
    const map = new Map<string, { amount: number; tx: number }>();
    for (const r of rows) map.set(`${r.payer} ${r.pay_to}`, { amount: Number(r.amount), tx: Number(r.tx) });
    return map;
  };
  const paidBy = byPayer(paid);
  const flaggedBy = byPayer(flagged);
  return (group) => {
    const out: GroupFlags = { paid: 0, tx: 0, flagged: 0, flaggedTx: 0 };
    for (const w of new Set(group.wallets)) {
      const key = `${w} ${group.merchant}`;
      const p = paidBy.get(key);
      const f = flaggedBy.get(key);
      out.paid += p?.amount ?? 0;
      out.tx += p?.tx ?? 0;
      out.flagged += f?.amount ?? 0;
      out.flaggedTx += f?.tx ?? 0;
    }
    return out;
  };
}

/**
 * Addresses every copy of a world shares, as the real week has one of each: the facilitator, the exchanges the
 * code lists by name (a copy of one would be an unknown wallet) and the USDC contracts.
 */
const SHARED_ADDRESSES = new Set(
  [
    addr("facilitator"),
    ...CHAIN_RECORDS.flatMap((c) => [c.usdc.address, ...hubsOf(c).map((h) => h.address)]),
  ].map((a) => a.toLowerCase()),
);
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Copy `index` of a world: the same records on wallets, merchants and transactions of its own (copy 0 is the
 * world as written), so that several points of a sweep can be built in one week side by side. Any field
 * holding an address is renamed but those of `SHARED_ADDRESSES`; a transaction's hash keeps its order among
 * the copy's own, as the counter gave it (test/helpers/data.ts).
 */
export class Replica {
  private readonly names = new Map<string, string>();
  private readonly originals = new Map<string, string>();

  constructor(readonly index: number) {}

  address(a: string): string {
    if (this.index === 0 || SHARED_ADDRESSES.has(a.toLowerCase())) return a;
    let named = this.names.get(a);
    if (!named) {
      named = addr(`replica-${this.index}:${a}`);
      this.names.set(a, named);
      this.originals.set(named, a);
    }
    return named;
  }

  /** The world's address a copy's address stands for. */
  original(a: string): string {
    return this.originals.get(a) ?? a;
  }

  records(records: readonly object[]): object[] {
    if (this.index === 0) return [...records];
    const hash = (h: string) => `0x${this.index.toString(16).padStart(4, "0")}${h.slice(6)}`;
    return records.map((r) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(r))
        out[k] =
          typeof v !== "string" ? v : k === "tx_hash" ? hash(v) : ADDRESS.test(v) ? this.address(v) : v;
      return out;
    });
  }

  group(g: PayerGroup): PayerGroup {
    return { wallets: g.wallets.map((w) => this.address(w)), merchant: this.address(g.merchant) };
  }
}

/**
 * A store holding the records every point shares, made once: each point starts from a copy of it and imports
 * its own records on top (an import adds to a store as it fills an empty one: test/analytics/import.test.ts,
 * "both ways"). With `replicas` above one it holds as many copies of them (`Replica`), and `withEach` imports
 * several points' records at once, each on its own copy: one build for several points, where a sweep has shown
 * its points come out of it as they do alone.
 */
export class SharedStore {
  private constructor(
    private readonly dir: string,
    readonly replicas: number,
  ) {}

  static async of(common: readonly object[], replicas = 1): Promise<SharedStore> {
    const records = Array.from({ length: replicas }, (_, r) => new Replica(r).records(common)).flat();
    assertDistinct(records);
    const others = byChain(records);
    const analytics = await analyticsWith(others.get("base") ?? []);
    others.delete("base");
    try {
      for (const rs of others.values()) await importFile(analytics, rs);
    } finally {
      analytics.close();
    }
    return new SharedStore(analytics.dataDir, replicas);
  }

  /**
   * A store of the shared records and `records`, in a directory of its own (`dispose` removes it). Records of
   * other chains than Base (a bridge's other side) are imported as a file of their own each, as an import takes them.
   */
  async with(records: readonly object[]): Promise<Analytics> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-"));
    fs.cpSync(this.dir, dir, { recursive: true });
    const analytics = await Analytics.open({ dataDir: dir, memoryLimit: "256MB", threads: 1 });
    const files = byChain(records);
    // The store is removed at `dispose`: what closing it would write to its file is never read.
    await analytics.run("PRAGMA disable_checkpoint_on_shutdown");
    try {
      await importFile(analytics, [...(files.get("base") ?? []), checkpoint()]);
      files.delete("base");
      for (const rs of files.values()) await importFile(analytics, rs);
      return analytics;
    } catch (error) {
      dispose(analytics);
      throw error;
    }
  }

  /**
   * A store of the shared records' copies and, on copy r, `points[r]`'s records renamed to it (`Replica`):
   * at most one point a copy; copies without a point hold the shared records alone.
   */
  async withEach(
    points: readonly (readonly object[])[],
  ): Promise<{ analytics: Analytics; replicas: Replica[] }> {
    if (points.length > this.replicas)
      throw new Error(`${points.length} points on a store of ${this.replicas} copies`);
    const replicas = points.map((_, r) => new Replica(r));
    const records = points.flatMap((rs, r) => (replicas[r] as Replica).records(rs));
    assertDistinct(records);
    return { analytics: await this.with(records), replicas };
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The stores of a sweep built several points at a time: `batched` holds `replicas` copies of the shared
 * records, `alone` one.
 */
export interface SweepStores {
  batched: SharedStore;
  alone: SharedStore;
}

export async function sweepStores(common: readonly object[], replicas: number): Promise<SweepStores> {
  return { batched: await SharedStore.of(common, replicas), alone: await SharedStore.of(common) };
}

export function removeSweepStores(stores: SweepStores | undefined): void {
  stores?.batched.remove();
  stores?.alone.remove();
}

/**
 * Each point (its records, on top of the shared ones) measured by `measure`, which builds the window once over
 * a store and reads a point for each replica it is given. Points are built as many at a time as the batched
 * store has copies, one a copy, which a sweep may do only where each point comes out as it does alone: every
 * batch's last point is built alone too and must come out the same (the screens reach across copies through
 * what a week shares, such as its payers outside a group, so a change to them can end that). With
 * SWEEPS_ALONE=1 (or `alone`) each point is built alone, as before batches; SWEEPS_DUMP=file appends the points to the file
 * as JSON lines, to compare both.
 */
export async function sweepPoints<T extends { records: readonly object[] }, P>(
  stores: SweepStores,
  points: readonly T[],
  measure: (analytics: Analytics, batch: readonly (readonly [Replica, T])[]) => Promise<P[]>,
  /** Each point alone: a sweep whose points, built beside others, came out otherwise. */
  alone = false,
): Promise<P[]> {
  const build = async (store: SharedStore, batch: readonly T[]) => {
    const { analytics, replicas } = await store.withEach(batch.map((p) => p.records));
    try {
      return await measure(
        analytics,
        batch.map((p, r) => [replicas[r] as Replica, p] as const),
      );
    } finally {
      dispose(analytics);
    }
  };
  const out: P[] = [];
  const size = alone || process.env.SWEEPS_ALONE ? 1 : stores.batched.replicas;
  for (let i = 0; i < points.length; i += size) {
    const batch = points.slice(i, i + size);
    if (batch.length === 1) {
      out.push(...(await build(stores.alone, batch)));
      continue;
    }
    out.push(...(await build(stores.batched, batch)));
    assert.deepStrictEqual(
      out[out.length - 1],
      (await build(stores.alone, batch.slice(-1)))[0],
      "a point built beside others came out otherwise than alone: these points must be built alone",
    );
  }
  if (process.env.SWEEPS_DUMP)
    fs.appendFileSync(process.env.SWEEPS_DUMP, `${out.map((p) => JSON.stringify(p)).join("\n")}\n`);
  return out;
}

/** Copies must not meet: no transaction key twice (an import would merge them). */
function assertDistinct(records: readonly object[]): void {
  const keys = new Set<string>();
  for (const r of records) {
    const { tx_hash, log_index, chain } = r as { tx_hash?: string; log_index?: number; chain?: string };
    if (tx_hash === undefined) continue;
    const key = `${chain} ${tx_hash} ${log_index}`;
    if (keys.has(key)) throw new Error(`a transaction twice among the copies: ${key}`);
    keys.add(key);
  }
}

/** Records by their chain (`chain`, Base where they name none): an import takes one chain a file. */
function byChain(records: readonly object[]): Map<string, object[]> {
  const out = new Map<string, object[]>();
  for (const r of records) {
    const chain = (r as { chain?: string }).chain ?? "base";
    const list = out.get(chain);
    if (list) list.push(r);
    else out.set(chain, [r]);
  }
  return out;
}

async function importFile(analytics: Analytics, records: readonly object[]): Promise<void> {
  const file = ndjsonFile(records);
  try {
    await importNdjson(analytics, file);
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

/** Closes a store and removes its directory. */
export function dispose(analytics: Analytics): void {
  analytics.close();
  fs.rmSync(analytics.dataDir, { recursive: true, force: true });
}
