/**
 * Shared pieces of the indexer tests: a devnet long enough for a weekly report, a temporary analytics database,
 * and the analytics database's rows in a stable order for comparisons.
 */
import { Analytics } from "../../src/analytics/duckdb.ts";
import { WEEK_BLOCKS } from "../../src/chain/base.ts";
import { type Devnet, type DevnetOptions, startDevnet } from "../../src/chain/devnet/index.ts";
import { emptyStoreAt } from "./data.ts";
import { removedTempDir } from "./temp-dirs.ts";

/**
 * A full week's window ends at block 302,400 or later (before that a report covers the chain's whole
 * life and is incomplete), and anvil mines only about 300 empty blocks a second: the test chains start
 * above that instead (anvil's genesis `--number`).
 */
export const GENESIS = WEEK_BLOCKS + 100_000;

export function startTestDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  return startDevnet({ port: 0, blockTime: 0, genesisNumber: GENESIS, ...options });
}

/** A new temporary directory, removed when the test that made it ends (made outside a test: its file). */
export function tempDir(prefix = "x402m-indexer-"): string {
  return removedTempDir(prefix);
}

/** An analytics store in `dir` (a new temporary directory unless given): a copy of the empty one where none is yet. */
export async function openTempAnalytics(dir = tempDir()): Promise<Analytics> {
  return Analytics.open({ dataDir: await emptyStoreAt(dir), memoryLimit: "256MB", threads: 1 });
}

/** Every row the indexer writes, sorted, with bigints as strings: equal snapshots mean equal databases. */
export type Snapshot = Record<
  "payments" | "transfers" | "candidates" | "merchants" | "balances" | "checkpoint",
  unknown[]
>;

export async function snapshot(analytics: Analytics): Promise<Snapshot> {
  const tables: Record<keyof Snapshot, string> = {
    payments: "SELECT * FROM payments ORDER BY block_number, tx_hash, log_index",
    transfers: "SELECT * FROM transfers ORDER BY block_number, tx_hash, log_index",
    candidates: "SELECT * FROM facilitator_candidates ORDER BY block_number, tx_hash, log_index",
    merchants: "SELECT * FROM merchants ORDER BY address",
    balances: "SELECT * FROM balances ORDER BY wallet, block_number",
    checkpoint: "SELECT max(block_number) AS block FROM checkpoints",
  };
  const out = {} as Snapshot;
  for (const [name, sql] of Object.entries(tables) as [keyof Snapshot, string][]) {
    const rows = await analytics.all(sql);
    out[name] = JSON.parse(
      JSON.stringify(rows, (_, v) => (typeof v === "bigint" ? v.toString() : v)),
    ) as unknown[];
  }
  return out;
}

/** The hashes of the transfers a store holds. */
export async function storedTxs(analytics: Analytics): Promise<Set<string>> {
  const rows = await analytics.all<{ tx_hash: string }>("SELECT tx_hash FROM transfers");
  return new Set(rows.map((r) => r.tx_hash));
}
