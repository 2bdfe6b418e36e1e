/**
 * Reading wallets' incoming USDC Transfers newest first, for the funding history (`history.ts`), until
 * what the wallet held is explained (coverage), it proves a hub, or the lookback runs out.
 *
 * Coverage. Under FIFO the money a wallet holds at the end of block T − 1 is exactly its most recent
 * inflows totalling its balance there (`balances.ts`), and an outflow at T spends the oldest of those
 * first, then inflows of block T itself. So the inflows of block T are all taken, and below it inflows
 * are taken newest first until they add up to the balance: the one that reaches it is the last. Older
 * money had left before T and cannot be in the outflow. A wallet whose balance is unknown (a node
 * without the block's state) is read to its lookback start.
 *
 * Hubs. Once a wallet's inflows read come from `hubSenders` distinct wallets, it is a hub (an exchange,
 * a bridge, a payroll): the inflows read so far are kept, which are what the report's hub rule counts,
 * and no older ones, and its senders are not followed.
 *
 * Same rows however the span is cut: logs are consumed in chain order from the newest down, and a
 * scan stops at an exact inflow, not at a chunk's edge.
 */
import type { IndexClock } from "../chain/block-clock.ts";
import { oversized, type SkippedLog, skippedLog, type TransferRow, transferRow } from "./classify.ts";
import { decodeLog, type TransferLog } from "./decode.ts";
import type { LogFetcher } from "./logs.ts";
import { chunk, mapPool } from "./pool.ts";
import { isChannelPlumbing } from "./settlements.ts";

/**
 * Recipients per eth_getLogs: geth caps an OR-list at 1,000 topics (`maxSubTopics`); half that keeps a
 * request well under the body limits providers put in front of their nodes.
 */
export const TOPICS_PER_QUERY = 500;

/** Read `wallet`'s inflows of blocks `lo`..`hi`, for its outflow at block `top`. */
export interface Request {
  wallet: string;
  top: number;
  lo: number;
  /** `top` for a funder (its inflows of that block may precede the outflow), `top − 1` for a payer. */
  hi: number;
  /** At the end of `top − 1`; undefined when the node could not say. */
  balance: bigint | undefined;
  /** 1 for a new payer or a depositors' read, one more for each sender followed. */
  level: number;
}

export interface Scan {
  request: Request;
  /** Newest first. */
  rows: TransferRow[];
  senders: Set<string>;
  /** What the inflows taken below `top` add up to. */
  covered: bigint;
  hub: boolean;
  done: boolean;
  /** The last block to read by RPC (below the batch), or lower than `lo` when none is. */
  rpcHi: number;
}

export interface ScanOptions {
  hubSenders: number;
  concurrency: number;
  onSkipped?: (log: SkippedLog) => void;
}

export class HistoryScanner {
  constructor(
    /** A fetcher of USDC Transfer logs (topic0 = Transfer only). */
    private readonly logs: LogFetcher,
    private readonly options: ScanOptions,
  ) {}

  /**
   * Reads each request's inflows, those of the batch (`incoming`, blocks `batchFrom` on) from the batch,
   * the rest by eth_getLogs, for all requests at once.
   */
  async scan(
    requests: readonly Request[],
    batchFrom: number,
    incoming: ReadonlyMap<string, TransferRow[]>,
    clock: IndexClock,
  ): Promise<Scan[]> {
    const scans: Scan[] = requests.map((request) => ({
      request,
      rows: [],
      senders: new Set(),
      covered: 0n,
      hub: false,
      done: false,
      rpcHi: Math.min(request.hi, batchFrom - 1),
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
      const found = pieces.map(() => new Map<string, TransferLog[]>());
      calls.forEach(({ p }, i) => {
        const byWallet = found[p] as Map<string, TransferLog[]>;
        for (const raw of answers[i] ?? []) {
          const log = decodeLog(raw);
          // A channel's plumbing is no inflow of the wallet: the channel's own moves stand for it.
          if (log?.kind !== "transfer" || isChannelPlumbing(log)) continue;
          const list = byWallet.get(log.to) ?? [];
          list.push(log);
          byWallet.set(log.to, list);
        }
      });
      pieces.forEach((piece, p) => {
        for (const s of active) {
          if (s.done) continue;
          const logs = (found[p] as Map<string, TransferLog[]>).get(s.request.wallet) ?? [];
          for (let i = logs.length - 1; i >= 0 && !s.done; i--) {
            const log = logs[i] as TransferLog;
            if (log.block < s.request.lo || log.block > s.rpcHi) continue;
            const time = clock.timeOfLog(log.block, log.blockTime, `log ${log.tx} #${log.logIndex}`);
            if (oversized(log)) this.options.onSkipped?.(skippedLog(log));
            else this.take(s, transferRow(log, time));
          }
          if (piece.from <= s.request.lo) s.done = true;
        }
      });
    }
    return scans;
  }

  /** Adds a row to a scan unless coverage was reached below `top`; the hub-making sender's is the last. */
  private take(s: Scan, row: TransferRow): void {
    const { balance, top } = s.request;
    const below = row.block < top;
    if (below && balance !== undefined && s.covered >= balance) {
      s.done = true;
      return;
    }
    s.rows.push(row);
    s.senders.add(row.from);
    if (below) s.covered += row.amount;
    if (s.senders.size >= this.options.hubSenders) {
      s.hub = true;
      s.done = true;
    } else if (below && balance !== undefined && s.covered >= balance) s.done = true;
  }
}

/** An address as a 32-byte topic. */
function paddedTopic(address: string): string {
  return `0x000000000000000000000000${address.slice(2).toLowerCase()}`;
}
