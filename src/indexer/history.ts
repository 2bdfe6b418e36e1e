/**
 * Funding history: where the USDC that reaches x402 payers came from. The commit rule of `funding.ts`
 * keeps only transfers touching a wallet already seen in a payment, so a merchant that funds fresh
 * private wallets ahead (M -> A -> B -> C, then C pays M) would leave no trace of M -> A, A -> B or
 * B -> C. The report's provenance screen follows lots of money FIFO through any number of wallets and
 * at any age, so what it needs is bounded by balances, not by hops or weeks (docs/indexer.md).
 *
 * Reads. A read of wallet W for its outflow at block T stores W's balance at the end of T − 1
 * (`balances.ts`) and W's inflows newest first from T (T − 1 for a payer, whose later inflows rule 1
 * keeps) back until they cover that balance, W proves a hub, or `lookback` blocks before T (`scan.ts`).
 * Reads start from:
 * 1. each new payer (`WalletBook.newPayers`), for the first block it appears in a payment;
 * 2. the senders of the inflows a read kept that were not seen in a payment at the inflow's block (nor
 *    the zero address of mints), for the inflow's block; and so on, level after level, until no sender
 *    is left or `maxLevels` (logged when hit);
 * 3. the sender of a transfer into a wallet already seen, when the sender is not seen itself, at its
 *    first such transfer: rule 1 keeps that transfer but nothing of what fed the sender, so without it
 *    an exchange paying a buyer would look fed only by the merchants that sweep to it, and a private
 *    distributor like an exchange. Once per sender, however many seen wallets it pays later.
 *
 * Same rows however the blocks are batched, and after a resume: a read's rows depend only on the
 * chain and on (W, T), never on which wallets share the batch, so reads are deduplicated on (W, T)
 * across batches (`loadReadHistories` rebuilds the set from the stored balances at start), and a
 * depositors' read is tied to the first such transfer, which the store also tells (`loadDepositorsRead`).
 * Requests are merged only within one (W, T). The caller stores rows through the writer's key checks,
 * so a transfer read twice, or kept by rule 1 too, is stored once. One exception: a wallet reached at
 * the level cap from one start and at a lower level from a later one is not read again.
 *
 * Reorgs. Every row lies at or below the block that started its read. A rewind deletes everything above
 * its common ancestor, balances included; the caller reloads both sets, so what it removed is read again
 * when the blocks are indexed anew. Blocks read by RPC below the batch lie at or below the checkpoint,
 * whose header is read again after the history and must not have changed (as `fetch-batch.ts` checks).
 */

import type { IndexClock } from "../chain/block-clock.ts";
import { type BalanceRow, readBalances, readKey } from "./balances.ts";
import { ChainMovedError, fetchHeaders } from "./block-data.ts";
import type { PaymentRow, SkippedLog, TransferRow } from "./classify.ts";
import type { WalletBook } from "./funding.ts";
import type { LogFetcher } from "./logs.ts";
import type { RpcClient } from "./rpc/client.ts";
import { HistoryScanner, type Request } from "./scan.ts";

/**
 * Distinct senders that make a wallet a hub, whose own funders are not followed: the report's hub rule
 * counts 50 distinct counterparties too (docs/screens.md, "Hubs"), and the rows a read keeps up to the
 * 50th sender are what lets it see the hub.
 */
export const HUB_SENDERS = 50;
/**
 * Levels of senders followed from one start. Coverage ends nearly every path within a few; this only
 * bounds a pathological chain of pass-through wallets, and is logged when reached.
 */
export const MAX_FUNDING_LEVELS = 32;
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/** Something the history could not do as asked: told once per batch (depth) or per run (state). */
export type FundingLimit =
  | { reason: "depth"; block: number; wallets: number }
  | { reason: "state"; wallet: string; block: number; detail: string };

export interface HistoryOptions {
  /** Oldest inflow read, in blocks before the outflow it may have paid for (`--funding-lookback`). */
  lookback: number;
  hubSenders: number;
  maxLevels: number;
  /** The chain's first block: nothing is asked below it. */
  floor: number;
  /** The chain's USDC, whose balances are read. */
  usdc: string;
  /** eth_getLogs requests in flight at once. */
  concurrency: number;
  signal?: AbortSignal;
  /** Told of each transfer read that is above `MAX_USDC_AMOUNT` and so not kept (`classify.ts`). */
  onSkipped?: (log: SkippedLog) => void;
  onLimit?: (limit: FundingLimit) => void;
}

/** What of a batch the history needs: its range, its parent (the checkpoint), payments and transfers. */
export interface HistoryBatch {
  from: number;
  to: number;
  parentHash: string;
  payments: readonly PaymentRow[];
  /** Every USDC transfer of the batch, kept or not. */
  transfers: readonly TransferRow[];
}

export interface HistoryRows {
  transfers: TransferRow[];
  balances: BalanceRow[];
  /** Read keys and depositors' wallets to remember once the batch is committed (`remember`). */
  reads: string[];
  depositors: string[];
}

/** Which reads were done: rebuilt from the store at start and after a rewind. */
export interface HistoryMemory {
  reads: Set<string>;
  depositors: Set<string>;
}

export class FundingHistory {
  private readonly scanner: HistoryScanner;
  private stateWarned = false;

  constructor(
    private readonly client: RpcClient,
    logs: LogFetcher,
    private readonly options: HistoryOptions,
    private memory: HistoryMemory,
  ) {
    this.scanner = new HistoryScanner(logs, options);
  }

  /** After a rewind: the store's sets, without what it deleted. */
  reset(memory: HistoryMemory): void {
    this.memory = memory;
  }

  /** Called once the batch's rows are committed: later batches need not read them again. */
  remember(rows: HistoryRows): void {
    for (const key of rows.reads) this.memory.reads.add(key);
    for (const wallet of rows.depositors) this.memory.depositors.add(wallet);
  }

  /**
   * The history rows of a batch about to be committed, read against the book as it stands before the
   * batch (unchanged here: a ChainMovedError leaves everything as it was).
   */
  async collect(batch: HistoryBatch, book: WalletBook, clock: IndexClock): Promise<HistoryRows> {
    const out: HistoryRows = { transfers: [], balances: [], reads: [], depositors: [] };
    // The first block each wallet appears in a payment, counting this batch's.
    const inBatch = new Map<string, number>();
    for (const p of batch.payments) {
      for (const w of [p.payer, p.payTo]) {
        const b = inBatch.get(w);
        if (b === undefined || p.block < b) inBatch.set(w, p.block);
      }
    }
    const first = (wallet: string): number | undefined => {
      const a = book.first(wallet);
      const b = inBatch.get(wallet);
      return a === undefined ? b : b === undefined ? a : Math.min(a, b);
    };
    const seenBy = (wallet: string, block: number) => (first(wallet) ?? Infinity) <= block;

    let seeds: Seed[] = [];
    for (const [wallet, paidAt] of book.newPayers(batch.payments)) {
      seeds.push({ wallet, top: first(wallet) ?? paidAt, payer: true });
    }
    const chainOrder = [...batch.transfers].sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
    const depositors = new Set<string>();
    for (const t of chainOrder) {
      if (t.from === ZERO_ADDRESS || t.from === t.to || this.memory.depositors.has(t.from)) continue;
      if (!seenBy(t.to, t.block) || seenBy(t.from, t.block) || depositors.has(t.from)) continue;
      depositors.add(t.from);
      seeds.push({ wallet: t.from, top: t.block, payer: false });
    }
    out.depositors = [...depositors];
    if (seeds.length === 0) return out;

    const incoming = byRecipient(batch.transfers);
    const kept = new Map<string, TransferRow>();
    const asked = new Set<string>();
    let readByRpc = false;
    for (let level = 1; seeds.length > 0; level++) {
      const requests: Request[] = [];
      for (const seed of seeds) {
        // A batch-settlement channel is no account: what it holds is its own moves (`channels.ts`).
        if (seed.wallet.length !== 42) continue;
        const key = readKey(seed.wallet, seed.top);
        if (asked.has(key) || this.memory.reads.has(key)) continue;
        asked.add(key);
        const hi = seed.payer ? seed.top - 1 : seed.top;
        const lo = Math.max(this.options.floor, seed.top - this.options.lookback);
        if (lo <= hi)
          requests.push({ wallet: seed.wallet, top: seed.top, lo, hi, balance: undefined, level });
      }
      if (requests.length === 0) break;
      if (level > this.options.maxLevels) {
        this.options.onLimit?.({ reason: "depth", block: batch.to, wallets: requests.length });
        break;
      }
      readByRpc ||= requests.some((r) => r.top - 1 < batch.from);
      await this.withBalances(requests, out);
      const scans = await this.scanner.scan(requests, batch.from, incoming, clock);
      const next = new Map<string, Seed>();
      for (const s of scans) {
        out.reads.push(readKey(s.request.wallet, s.request.top));
        for (const row of s.rows) kept.set(`${row.tx}:${row.logIndex}`, row);
        if (s.hub) continue;
        for (const row of s.rows) {
          const sender = row.from;
          if (sender === ZERO_ADDRESS || sender === row.to) continue;
          // A sender seen by then has its transfers kept by rule 1 from its first payment on, and its
          // own history read if it paid.
          if (seenBy(sender, row.block)) continue;
          next.set(readKey(sender, row.block), { wallet: sender, top: row.block, payer: false });
        }
      }
      seeds = [...next.values()];
    }
    if (readByRpc) await this.checkParent(batch);
    out.transfers = [...kept.values()].sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
    return out;
  }

  /** Reads the requests' balances at `top − 1`; a wallet that held nothing there is read at `top` only. */
  private async withBalances(requests: Request[], out: HistoryRows): Promise<void> {
    const asks = requests.map((r) => ({ wallet: r.wallet, block: r.top - 1 }));
    const amounts = await readBalances(
      this.client,
      asks,
      this.options.floor,
      (ask, detail) => {
        if (this.stateWarned) return;
        this.stateWarned = true;
        this.options.onLimit?.({ reason: "state", ...ask, detail });
      },
      this.options.usdc,
    );
    requests.forEach((r, i) => {
      const amount = amounts[i];
      r.balance = amount;
      if (amount === undefined) return;
      if (r.top - 1 >= this.options.floor) out.balances.push({ wallet: r.wallet, block: r.top - 1, amount });
      if (amount === 0n) r.lo = Math.max(r.lo, r.top);
    });
  }

  /** The checkpoint's block must still be the batch's parent after the history was read below it. */
  private async checkParent(batch: HistoryBatch): Promise<void> {
    const [parent] = await fetchHeaders(this.client, [batch.from - 1], { signal: this.options.signal });
    if (parent?.hash !== batch.parentHash) {
      throw new ChainMovedError(`block ${batch.from - 1} changed while the funding history was read`);
    }
  }
}

/** A wallet to read for its outflow (or, for a payer, its first payment) at block `top`. */
interface Seed {
  wallet: string;
  top: number;
  payer: boolean;
}

/** The batch's transfers by recipient, in chain order. */
function byRecipient(transfers: readonly TransferRow[]): Map<string, TransferRow[]> {
  const out = new Map<string, TransferRow[]>();
  for (const t of transfers) {
    const list = out.get(t.to) ?? [];
    list.push(t);
    out.set(t.to, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
  return out;
}
