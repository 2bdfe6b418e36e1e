/**
 * The simulator's ground truth: one NDJSON line per settled payment saying which behaviour made it, in
 * `<data>/demo/truth.ndjson`. `simulate --check` compares the reports' real totals with it.
 *
 * The truth is written in batches, after the payments settled, while the indexer stores each block as it
 * comes: the latest indexed block may hold payments the truth does not have yet. So after each batch the
 * simulator records, in `<data>/demo/truth-complete.json`, the block up to which the truth is complete,
 * and the check compares a window that ends there. A truth file without it (written before it existed)
 * still reads; the check then ends its window at the latest indexed block, as it did.
 *
 * A record missing from the truth reads, to the check, as a report error: so a line that is not a whole
 * record is never skipped. A last line without its newline that is not a record was cut short while it was
 * written (a crash, a full disk, or an append under way as it was read): readers stop at it
 * (`TruthError`), and only the writer, the demo, repairs it, when it resumes (`repairTruth`). Any other
 * such line is damage no one repairs.
 */
import fs from "node:fs";
import { z } from "zod";
import { anyStoreAddress } from "../chain/chains.ts";
import { AppError } from "../common/errors.ts";
import { BEHAVIOURS, type Behaviour, GENUINE } from "./plan-types.ts";

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
  /** How the buyer paid: over MCP (x402's MCP transport), else absent (HTTP, and every earlier record). */
  face?: "mcp";
  /**
   * The x402 scheme and how the money moved, as the store keeps them (absent from records written before
   * issue 53). A channel's record is a claim: what the merchant claimed of the payer's channel in one
   * transaction (its vouchers are not on chain), `channel` its id.
   */
  scheme?: TruthScheme;
  transfer_method?: "eip3009" | "permit2" | "channel";
  channel?: string;
}

export type TruthScheme = "exact" | "upto" | "batch-settlement";

const TruthRecordSchema = z.object({
  tx_hash: z.string(),
  block_number: z.number().int().min(0),
  payer: z.string(),
  pay_to: z.string(),
  amount: z.string().regex(/^\d+$/, "not a whole number of atomic units"),
  behaviour: z.enum(BEHAVIOURS),
  merchant: z.string(),
  endpoint: z.string(),
  face: z.literal("mcp").optional(),
  scheme: z.enum(["exact", "upto", "batch-settlement"]).optional(),
  transfer_method: z.enum(["eip3009", "permit2", "channel"]).optional(),
  channel: z.string().optional(),
});

/** A ground-truth file that cannot be read whole: which file, which line, and whether it was cut short. */
export class TruthError extends AppError {
  constructor(
    message: string,
    readonly file: string,
    /** 1-based; undefined for truth-complete.json, which is one record. */
    readonly line: number | undefined,
    /** The last line, without its newline: a write cut short, which the demo drops when it resumes. */
    readonly torn: boolean,
  ) {
    super(500, "truth_damaged", message);
  }
}

export function appendTruth(file: string, records: readonly TruthRecord[]): void {
  if (records.length === 0) return;
  fs.appendFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
}

/** What a truth file holds: its whole records, and the number of a last line cut short, if any. */
export interface TruthScan {
  records: TruthRecord[];
  /** The whole records' lines as written, each with its newline. */
  lines: string[];
  /** The last line, when it has no newline and is not a record: cut short while it was written. */
  torn?: number;
  /** Whether the last record lacks its newline (whole, but the next append would run into it). */
  unterminated: boolean;
}

/**
 * Reads a truth file, an absent one as empty. A line that is not a record throws a `TruthError` naming
 * it, unless it is the last and has no newline: that one is returned as `torn`, for the caller to decide.
 */
export function scanTruth(file: string): TruthScan {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      return { records: [], lines: [], unterminated: false };
    throw error;
  }
  const scan: TruthScan = { records: [], lines: [], unterminated: false };
  const parts = text.split("\n");
  // After the last newline: "" when the file ends with one, else a line whose newline was never written.
  const tail = parts.pop() as string;
  parts.forEach((line, i) => {
    if (line.trim() === "") return;
    const record = parseRecord(line);
    if (typeof record === "string") {
      throw new TruthError(
        `${file} line ${i + 1} is not a ground-truth record (${record})`,
        file,
        i + 1,
        false,
      );
    }
    scan.records.push(record);
    scan.lines.push(`${line}\n`);
  });
  if (tail.trim() !== "") {
    const record = parseRecord(tail);
    if (typeof record === "string") {
      scan.torn = parts.length + 1;
    } else {
      scan.records.push(record);
      scan.lines.push(`${tail}\n`);
      scan.unterminated = true;
    }
  }
  return scan;
}

/** Every record; any line that is not a whole record, a torn last one included, throws a `TruthError`. */
export function readTruth(file: string): TruthRecord[] {
  const scan = scanTruth(file);
  if (scan.torn !== undefined) {
    throw new TruthError(
      `${file} line ${scan.torn} is cut short (a crash or a full disk while the demo wrote it)`,
      file,
      scan.torn,
      true,
    );
  }
  return scan.records;
}

/** The record a line holds, or why it holds none. */
function parseRecord(line: string): TruthRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return (error as Error).message;
  }
  const parsed = TruthRecordSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  return `${issue?.path.join(".") || "the line"}: ${issue?.message}`;
}

export function writeTruthComplete(file: string, block: number): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify({ complete_to_block: block })}\n`);
  fs.renameSync(tmp, file);
}

/**
 * The block up to which the truth is complete, or undefined when there is no such file (an older demo's
 * truth). A file that does not say throws a `TruthError`: it is written whole, by rename, so one that does
 * not read was damaged, and guessing a block would move the check's window.
 */
export function readTruthComplete(file: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  let block: unknown;
  try {
    block = (JSON.parse(text) as { complete_to_block?: unknown } | null)?.complete_to_block;
  } catch (error) {
    throw new TruthError(`${file} is damaged (${(error as Error).message})`, file, undefined, false);
  }
  if (typeof block === "number" && Number.isSafeInteger(block) && block >= 0) return block;
  throw new TruthError(`${file} is damaged (no block number in complete_to_block)`, file, undefined, false);
}

export interface TruthRepair {
  /** Records dropped because the saved chain ends before their block. */
  dropped: number;
  /** The number of the last line, dropped because a crash cut it short. */
  torn?: number;
  /** The block the truth was complete to before, when known. */
  completeTo?: number;
}

/**
 * Makes the truth fit the chain the demo resumes, ending at `block`, before the simulator appends to it
 * again: drops the records of later blocks (a chain restored from an older save), and a last line a crash
 * cut short, which the next append would otherwise run into and spoil. The truth is then complete to that
 * block at most (`completeFile`, when given). A line that is not a record anywhere else throws a
 * `TruthError`: that is damage, not an interrupted write.
 */
export function repairTruth(file: string, block: number, completeFile?: string): TruthRepair {
  const scan = scanTruth(file);
  const completeTo = completeFile === undefined ? undefined : readTruthComplete(completeFile);
  if (completeFile !== undefined && completeTo !== undefined && completeTo > block) {
    writeTruthComplete(completeFile, block);
  }
  const kept = scan.lines.filter((_, i) => (scan.records[i] as TruthRecord).block_number <= block);
  const dropped = scan.records.length - kept.length;
  if (dropped > 0 || scan.torn !== undefined || scan.unterminated) {
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, kept.join(""));
    fs.renameSync(tmp, file);
  }
  return {
    dropped,
    ...(scan.torn === undefined ? {} : { torn: scan.torn }),
    ...(completeTo === undefined ? {} : { completeTo }),
  };
}

export interface MerchantTruth {
  /** Atomic units of every payment, and of genuine demand only. */
  total: bigint;
  genuine: bigint;
  tx: number;
  genuineTx: number;
}

/**
 * Per merchant (its address as the store keeps it: an EVM one lower-cased, a base58 key as written), the
 * payments of blocks `start_block + 1` to `end_block`.
 */
export function truthByMerchant(
  records: readonly TruthRecord[],
  window: { start_block: number; end_block: number },
): Map<string, MerchantTruth> {
  const out = new Map<string, MerchantTruth>();
  for (const r of records) {
    if (r.block_number <= window.start_block || r.block_number > window.end_block) continue;
    const key = anyStoreAddress(r.pay_to) ?? r.pay_to;
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
