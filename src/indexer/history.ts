/**
 * Funding history: the USDC that reached a wallet before it first paid through x402. The commit rule of
 * `funding.ts` keeps only transfers touching a wallet already seen in a payment, so a merchant that
 * funds fresh private wallets weeks ahead (M -> A -> B -> C, then C pays M) would leave no trace of
 * M -> A, A -> B or B -> C, and `merchant_funded` could not see what it exists for.
 *
 * When a batch holds wallets paying for the first time (`WalletBook.newPayers`), this fetches, for all of
 * them at once, the Transfers into each from `lookback` blocks before its first payment up to the block
 * before it was first seen (from then on rule 1 keeps them); then, for the senders of those transfers
 * not yet seen at the transfer's block, the Transfers into them from the same lookback start up to that
 * transfer's block (a path's transfers are each no earlier than the one before), and so on for `levels`
 * levels (the screen's `fundingMaxHops` − 1: the payer's funder, its funder, and the one before).
 *
 * Hubs. Each wallet's transfers are read newest first; once they come from `hubSenders` distinct wallets
 * (the screens' `hubMinCounterparties`) the wallet is a hub (an exchange, a bridge, a payroll): the
 * transfers read so far are kept, which are what the report's own hub rule counts, and no older ones,
 * and its senders are not followed. So the exact rule: a wallet that received USDC from at least 50
 * distinct wallets between the lookback start and the block it passed money on in is a hub.
 *
 * Cost. One eth_getLogs per level and span chunk for every wallet of the level together (topic2 = an
 * OR-list of the padded addresses, in lists of `TOPICS_PER_QUERY`), with the indexer's client, rate
 * limit and retries and an adaptive span (`logs.ts`) of at most `--batch-blocks`. The part of a span
 * inside the batch being committed is read from the batch's own transfers, already fetched and checked.
 *
 * Same rows however the blocks are batched: what is fetched for a wallet depends only on the chain and
 * on the block of the first payment that reached back to it (its payers' lookback start), never on
 * which other wallets share the batch; requests are merged only within one such block, which a batch
 * never splits. The caller stores the rows through the writer's dedup on (tx_hash, log_index): the
 * same transfer fetched twice, or already kept by rule 1, is stored once.
 *
 * Reorgs. Every row lies below the first payment of the wallet it was fetched for. A rewind deletes
 * everything above its common ancestor, payments included, so a wallet whose first payment it removes
 * is new again when those blocks are indexed anew and its history is fetched again (and deduplicated
 * against the rows below the ancestor, which the fork did not change). The blocks read by RPC lie at or
 * below the checkpoint, whose hash the batch's parent hash matches; that header is read again after the
 * history and must not have changed (the same check `fetch-batch.ts` makes around a batch's logs).
 */
import { ChainMovedError, fetchHeaders } from "./block-data.ts";
import type { BlockClock } from "./blocks.ts";
import {
  oversized,
  type PaymentRow,
  type SkippedLog,
  skippedLog,
  type TransferRow,
  transferRow,
} from "./classify.ts";
import { decodeLog, type TransferLog } from "./decode.ts";
import type { WalletBook } from "./funding.ts";
import type { LogFetcher } from "./logs.ts";
import { chunk, mapPool } from "./pool.ts";
import type { RpcClient } from "./rpc/client.ts";

/**
 * Recipients per eth_getLogs: geth caps an OR-list at 1,000 topics (`maxSubTopics`); half that keeps a
 * request well under the body limits providers put in front of their nodes.
 */
export const TOPICS_PER_QUERY = 500;
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

export interface HistoryOptions {
  /** Blocks before a wallet's first payment to read back from (the screen's funding lookback). */
  lookback: number;
  /** How many levels of funders to read: the payer's own incoming transfers are level 1. */
  levels: number;
  /** Distinct senders that make a wallet a hub. */
  hubSenders: number;
  /** The chain's first block: nothing is asked below it. */
  floor: number;
  /** eth_getLogs requests in flight at once. */
  concurrency: number;
  signal?: AbortSignal;
  /** Told of each transfer read that is above `MAX_USDC_AMOUNT` and so not kept (`classify.ts`). */
  onSkipped?: (log: SkippedLog) => void;
}

/** What of a batch the history needs: its range, its parent (the checkpoint), payments and transfers. */
export interface HistoryBatch {
  from: number;
  to: number;
  parentHash: string;
  payments: readonly PaymentRow[];
  transfers: readonly TransferRow[];
}

/** Transfers into `wallet` in blocks `lo`..`hi`, asked for the payers whose first payment is at `root`. */
interface Request {
  wallet: string;
  root: number;
  lo: number;
  hi: number;
}

interface Scan {
  request: Request;
  /** Newest first. */
  rows: TransferRow[];
  senders: Set<string>;
  hub: boolean;
  done: boolean;
  /** The last block to read by RPC (below the batch), or lower than `lo` when none is. */
  rpcHi: number;
}

export class FundingHistory {
  constructor(
    private readonly client: RpcClient,
    /** A fetcher of USDC Transfer logs (topic0 = Transfer only). */
    private readonly logs: LogFetcher,
    private readonly options: HistoryOptions,
  ) {}

  /**
   * The history rows of a batch about to be committed, read against the book as it stands before the
   * batch (unchanged here: a ChainMovedError leaves everything as it was).
   */
  async collect(batch: HistoryBatch, book: WalletBook, clock: BlockClock): Promise<TransferRow[]> {
    const roots = book.newPayers(batch.payments);
    if (roots.size === 0) return [];
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
    const incoming = byRecipient(batch.transfers);

    let requests: Request[] = [];
    for (const [wallet, paidAt] of roots) {
      const lo = Math.max(this.options.floor, paidAt - this.options.lookback);
      const hi = (first(wallet) ?? paidAt) - 1;
      if (lo <= hi) requests.push({ wallet, root: paidAt, lo, hi });
    }
    const kept = new Map<string, TransferRow>();
    const asked = new Set<string>();
    let readByRpc = false;
    for (let level = 1; requests.length > 0; level++) {
      for (const r of requests) asked.add(requestKey(r));
      const scans = await this.scan(requests, batch, incoming, clock);
      readByRpc ||= scans.some((s) => s.rpcHi >= s.request.lo);
      // Senders to follow, one request per (sender, root) reaching back to its latest transfer on.
      const next = new Map<string, Request>();
      for (const s of scans) {
        for (const row of s.rows) kept.set(`${row.tx}:${row.logIndex}`, row);
        if (s.hub || level >= this.options.levels) continue;
        for (const row of s.rows) {
          const sender = row.from;
          if (sender === ZERO_ADDRESS || sender === row.to) continue;
          const seen = first(sender);
          // A sender seen by then has its transfers kept by rule 1 from its first payment on, and its
          // own history fetched if it paid.
          if (seen !== undefined && seen <= row.block) continue;
          const key = `${sender}:${s.request.root}`;
          const known = next.get(key);
          if (!known || known.hi < row.block) {
            next.set(key, { wallet: sender, root: s.request.root, lo: s.request.lo, hi: row.block });
          }
        }
      }
      requests = [...next.values()].filter((r) => !asked.has(requestKey(r)));
    }
    if (readByRpc) await this.checkParent(batch);
    return [...kept.values()].sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
  }

  /** Reads each request's transfers newest first until its lookback start or its hub-making sender. */
  private async scan(
    requests: readonly Request[],
    batch: HistoryBatch,
    incoming: ReadonlyMap<string, TransferRow[]>,
    clock: BlockClock,
  ): Promise<Scan[]> {
    const scans: Scan[] = requests.map((request) => ({
      request,
      rows: [],
      senders: new Set(),
      hub: false,
      done: false,
      rpcHi: Math.min(request.hi, batch.from - 1),
    }));
    // The batch's own blocks first: they are the newest, and already read.
    for (const s of scans) {
      const { wallet, lo, hi } = s.request;
      const own = incoming.get(wallet) ?? [];
      for (let i = own.length - 1; i >= 0 && !s.done; i--) {
        const row = own[i] as TransferRow;
        if (row.block >= lo && row.block <= hi) this.take(s, row);
      }
      if (s.rpcHi < lo) s.done = true;
    }

    let top = Math.max(-1, ...scans.filter((s) => !s.done).map((s) => s.rpcHi));
    while (top >= 0) {
      const active = scans.filter((s) => !s.done);
      if (active.length === 0) break;
      const bottom = Math.min(...active.map((s) => s.request.lo));
      if (top < bottom) break;
      // A wave: span chunks from the top down, each with the wallets still read there, enough to keep
      // `concurrency` requests in flight.
      const pieces: { from: number; to: number; wallets: string[][] }[] = [];
      let jobs = 0;
      while (top >= bottom && jobs < this.options.concurrency) {
        const from = Math.max(bottom, top - this.logs.span + 1);
        const wallets = [
          ...new Set(
            active.filter((s) => s.request.lo <= top && s.rpcHi >= from).map((s) => s.request.wallet),
          ),
        ];
        const lists = chunk(wallets.sort(), TOPICS_PER_QUERY);
        pieces.push({ from, to: top, wallets: lists });
        jobs += lists.length;
        top = from - 1;
      }
      const calls = pieces.flatMap((piece, p) => piece.wallets.map((list) => ({ p, list })));
      const answers = await mapPool(calls, this.options.concurrency, ({ p, list }) => {
        const piece = pieces[p] as (typeof pieces)[number];
        return this.logs.fetch(piece.from, piece.to, list.map(paddedTopic));
      });
      // Consumed in chain order from the newest down, so where a scan stops does not depend on how
      // the span was cut.
      const found = pieces.map(() => new Map<string, TransferLog[]>());
      calls.forEach(({ p }, i) => {
        for (const raw of answers[i] ?? []) {
          const log = decodeLog(raw);
          if (log?.kind !== "transfer") continue;
          const list = (found[p] as Map<string, TransferLog[]>).get(log.to) ?? [];
          list.push(log);
          (found[p] as Map<string, TransferLog[]>).set(log.to, list);
        }
      });
      pieces.forEach((piece, p) => {
        for (const s of active) {
          if (s.done) continue;
          const logs = (found[p] as Map<string, TransferLog[]>).get(s.request.wallet) ?? [];
          for (let i = logs.length - 1; i >= 0 && !s.done; i--) {
            const log = logs[i] as TransferLog;
            if (log.block < s.request.lo || log.block > s.rpcHi) continue;
            clock.checkLogTime(log.block, log.blockTime, `log ${log.tx} #${log.logIndex}`);
            if (oversized(log)) this.options.onSkipped?.(skippedLog(log));
            else this.take(s, transferRow(log, clock.timeOf(log.block)));
          }
          if (piece.from <= s.request.lo) s.done = true;
        }
      });
    }
    return scans;
  }

  /** Adds a row to a scan; the one that brings the hub-making sender is the last. */
  private take(s: Scan, row: TransferRow): void {
    s.rows.push(row);
    s.senders.add(row.from);
    if (s.senders.size >= this.options.hubSenders) {
      s.hub = true;
      s.done = true;
    }
  }

  /** The checkpoint's block must still be the batch's parent after the history was read below it. */
  private async checkParent(batch: HistoryBatch): Promise<void> {
    const [parent] = await fetchHeaders(this.client, [batch.from - 1], { signal: this.options.signal });
    if (parent?.hash !== batch.parentHash) {
      throw new ChainMovedError(`block ${batch.from - 1} changed while the funding history was read`);
    }
  }
}

function requestKey(r: Request): string {
  return `${r.wallet}:${r.root}:${r.hi}`;
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

/** An address as a 32-byte topic. */
function paddedTopic(address: string): string {
  return `0x000000000000000000000000${address.slice(2).toLowerCase()}`;
}
