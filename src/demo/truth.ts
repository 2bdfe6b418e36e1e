/**
 * The simulator's ground truth: one NDJSON line per settled payment saying which behaviour made it, in
 * `<data>/demo/truth.ndjson`. `simulate --check` compares the reports' real totals with it.
 *
 * The truth is written in batches, after the payments settled, while the indexer stores each block as it
 * comes: the latest indexed block may hold payments the truth does not have yet. So after each batch the
 * simulator records, in `<data>/demo/truth-complete.json`, the block up to which the truth is complete,
 * and the check compares a window that ends there. A truth file without it (written before it existed)
 * still reads; the check then ends its window at the latest indexed block, as it did.
 */
import fs from "node:fs";
import { type Behaviour, GENUINE } from "./plan.ts";

export interface TruthRecord {
  tx_hash: string;
  block_number: number;
  payer: string;
  pay_to: string;
  /** Atomic USDC units (6 decimals), as a string. */
  amount: string;
  behaviour: Behaviour;
  /** The merchant's id in the demo and the endpoint paid, for people reading the file. */
  merchant: string;
  endpoint: string;
}

export function appendTruth(file: string, records: readonly TruthRecord[]): void {
  if (records.length === 0) return;
  fs.appendFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
}

/** Every record; a torn last line (a crash while writing) is skipped. */
export function readTruth(file: string): TruthRecord[] {
  if (!fs.existsSync(file)) return [];
  const out: TruthRecord[] = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      out.push(JSON.parse(line) as TruthRecord);
    } catch {
      // Only the last line can be torn; the rest were written whole.
    }
  }
  return out;
}

/**
 * Records that the truth file holds every payment of blocks up to `block`. Written after the records, and
 * by rename, so a reader that reads this first and the truth after never sees a block counted complete
 * whose records it lacks.
 */
export function writeTruthComplete(file: string, block: number): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify({ complete_to_block: block })}\n`);
  fs.renameSync(tmp, file);
}

/** The block up to which the truth is complete, or undefined when nothing says (an older demo's truth). */
export function readTruthComplete(file: string): number | undefined {
  try {
    const block = (JSON.parse(fs.readFileSync(file, "utf8")) as { complete_to_block?: unknown })
      .complete_to_block;
    return typeof block === "number" && Number.isSafeInteger(block) && block >= 0 ? block : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keeps the records of blocks up to `block`: after a chain was restored from an older save. The truth
 * is then complete to that block at most (`completeFile`, when given).
 */
export function truncateTruth(file: string, block: number, completeFile?: string): number {
  if (completeFile !== undefined) {
    const complete = readTruthComplete(completeFile);
    if (complete !== undefined && complete > block) writeTruthComplete(completeFile, block);
  }
  const records = readTruth(file);
  const kept = records.filter((r) => r.block_number <= block);
  if (kept.length === records.length) return 0;
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, kept.map((r) => `${JSON.stringify(r)}\n`).join(""));
  fs.renameSync(tmp, file);
  return records.length - kept.length;
}

export interface MerchantTruth {
  /** Atomic units of every payment, and of genuine demand only. */
  total: bigint;
  genuine: bigint;
  tx: number;
  genuineTx: number;
}

/** Per merchant (lower-case address), the payments of blocks `start_block + 1` to `end_block`. */
export function truthByMerchant(
  records: readonly TruthRecord[],
  window: { start_block: number; end_block: number },
): Map<string, MerchantTruth> {
  const out = new Map<string, MerchantTruth>();
  for (const r of records) {
    if (r.block_number <= window.start_block || r.block_number > window.end_block) continue;
    const key = r.pay_to.toLowerCase();
    const m = out.get(key) ?? { total: 0n, genuine: 0n, tx: 0, genuineTx: 0 };
    const amount = BigInt(r.amount);
    m.total += amount;
    m.tx++;
    if (GENUINE.has(r.behaviour)) {
      m.genuine += amount;
      m.genuineTx++;
    }
    out.set(key, m);
  }
  return out;
}
