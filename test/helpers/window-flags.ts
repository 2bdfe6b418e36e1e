/**
 * What the screens flagged in a week, read the way the sweeps (test/reports/*-sweeps.test.ts) and the red team
 * (bench/escapes/) read it: the window's tables built by `aggregateWindow` over a store, and for any group of
 * wallets paying one merchant, what they paid it in the window and how much of that was flagged, by any screen.
 * And a store made once from the records every point of a sweep shares, copied for each point, so that a sweep
 * of many points imports the common week once.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { BASE_RECORD } from "../../src/chain/chains.ts";
import { aggregateWindow, dropWindowTables, type WindowBounds } from "../../src/reports/week/aggregates.ts";
import { analyticsWith, checkpoint, ndjsonFile, WINDOW_BOUNDS } from "./data.ts";

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
 * A store holding the records every point shares, made once: each point starts from a copy of it and imports
 * its own records on top (an import adds to a store as it fills an empty one: test/analytics/import.test.ts,
 * "both ways").
 */
export class SharedStore {
  private constructor(private readonly dir: string) {}

  static async of(records: readonly object[]): Promise<SharedStore> {
    const others = byChain(records);
    const analytics = await analyticsWith(others.get("base") ?? []);
    others.delete("base");
    try {
      for (const rs of others.values()) await importFile(analytics, rs);
    } finally {
      analytics.close();
    }
    return new SharedStore(analytics.dataDir);
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

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
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
