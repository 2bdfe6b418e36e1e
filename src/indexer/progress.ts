/**
 * What the indexer tells the person running it, on stderr: a progress bar with rate and ETA on a
 * terminal during a backfill, else one JSON object per line (`{"level", "msg", ...}`) that log
 * collectors can parse. Batch lines are at most one a second; warnings (retries, reorgs) always print.
 */
import cliProgress from "cli-progress";
import { MAX_USDC_AMOUNT } from "../chain/base.ts";
import type { IndexerEvent } from "./events.ts";

export interface Reporter {
  onEvent(event: IndexerEvent): void;
  /** Clears the bar; call before printing anything else. */
  stop(): void;
}

/**
 * A bar on a terminal, else JSON lines. With `fields` (`{chain}` when `serve` follows several chains), JSON
 * lines each carrying them: several bars would draw over one another.
 */
export function createReporter(
  stream: NodeJS.WriteStream = process.stderr,
  fields: Readonly<Record<string, string | undefined>> = {},
): Reporter {
  if (Object.keys(fields).length > 0) return new JsonReporter(stream, undefined, fields);
  return stream.isTTY ? new BarReporter(stream) : new JsonReporter(stream);
}

/** One JSON object per line. */
export class JsonReporter implements Reporter {
  private lastBatchLine = 0;
  private startedAt = performance.now();
  private from = 0;
  private payments = 0;

  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly minIntervalMs = 1_000,
    /** Fields every line carries after its message (the chain, when several are followed). */
    private readonly fields: Readonly<Record<string, string | undefined>> = {},
  ) {}

  onEvent(event: IndexerEvent): void {
    const line = this.describe(event);
    if (line) this.stream.write(`${JSON.stringify(line)}\n`);
  }

  /** The log line of an event: `{level, msg, ...fields}`, or undefined to stay quiet. */
  private describe(event: IndexerEvent): object | undefined {
    switch (event.type) {
      case "start":
        this.startedAt = performance.now();
        this.from = event.from;
        return this.line("info", "indexing", {
          from: event.from,
          target: event.target,
          head: event.head,
          resumed: event.resumed,
          tx_from: event.txFrom,
        });
      case "batch": {
        this.payments += event.payments;
        const now = performance.now();
        const last = event.to >= event.target;
        if (!last && now - this.lastBatchLine < this.minIntervalMs) return undefined;
        this.lastBatchLine = now;
        const seconds = (now - this.startedAt) / 1000;
        const rate = (event.to - this.from + 1) / Math.max(seconds, 1e-3);
        return this.line("info", "indexed", {
          block: event.to,
          target: event.target,
          payments_total: this.payments,
          batch: {
            from: event.from,
            to: event.to,
            logs: event.logs,
            payments: event.payments,
            candidates: event.candidates,
            transfers: event.transfers,
            history: event.history,
            bridges: event.bridges,
          },
          blocks_per_s: Math.round(rate),
          eta_s: Math.max(0, Math.round((event.target - event.to) / Math.max(rate, 1e-9))),
        });
      }
      case "caught_up":
        return this.line("info", "caught up", { block: event.block, head: event.head });
      case "reorg":
        return this.line("warn", "reorg: rewound to the common ancestor", {
          checkpoint: event.checkpoint,
          ancestor: event.ancestor,
        });
      case "chain_moved":
        return this.line("warn", "the chain changed while a batch was read; reading again", {
          from: event.from,
          reason: event.reason,
        });
      case "retry":
        return this.line("warn", "rpc retry", {
          method: event.method,
          attempt: event.attempt,
          delay_ms: event.delayMs,
          reason: event.reason,
        });
      case "span":
        return this.line("info", "eth_getLogs span", {
          span: event.span,
          at: event.from,
          reason: event.reason,
        });
      case "listings":
        return this.line("info", "listings refreshed", {
          listings: event.listings,
          items: event.items,
          pages: event.pages,
        });
      case "listings_failed":
        return this.line("warn", "listings refresh failed", { reason: event.reason });
      case "skipped":
        return this.line(
          "warn",
          "skipped a USDC transfer above the amount bound: not an x402 payment, not stored",
          {
            tx: event.tx,
            log_index: event.logIndex,
            block: event.block,
            amount: event.amount,
            bound: MAX_USDC_AMOUNT.toString(),
          },
        );
      case "funding_limit":
        return event.reason === "depth"
          ? this.line("warn", "funding history: level cap reached, senders beyond it not read", {
              block: event.block,
              wallets: event.wallets,
            })
          : this.line(
              "warn",
              "funding history: the RPC has no state at an old block, so balances are unknown and histories are read back to --funding-lookback (use an archive node)",
              { wallet: event.wallet, block: event.block, reason: event.detail },
            );
      case "rpc_state":
        return this.line(event.level, event.msg, event.fields);
      case "finished":
        return this.finished(event);
    }
  }

  stop(): void {}

  /**
   * The end of a run that stops: silent when every indexed block is final; otherwise which blocks are
   * not, or why nothing was indexed (a chain younger than the reorg depth indexes nothing by default).
   */
  private finished(event: Extract<IndexerEvent, { type: "finished" }>): object | undefined {
    const { indexed, head, unconfirmed, reorgDepth } = event;
    if (indexed && unconfirmed > 0) {
      return this.line("warn", "indexed blocks not final yet", {
        from: indexed.from,
        to: indexed.to,
        unconfirmed,
        unconfirmed_from: indexed.to - unconfirmed + 1,
        head,
        reorg_depth: reorgDepth,
        why: "they are within the reorg depth of the head; a later run corrects a reorg of them",
      });
    }
    if (!indexed && event.heldBack > 0) {
      return this.line("warn", "nothing indexed: no new block is final yet", {
        block: event.block,
        head,
        reorg_depth: reorgDepth,
        held_back: event.heldBack,
        why: `blocks ${event.block + 1}-${head} are within the reorg depth of the head (a chain younger than the depth has no final block); pass --to-block ${head} to index them now`,
      });
    }
    return undefined;
  }

  private line(level: string, msg: string, fields: object): object {
    return { level, msg, ...this.fields, ...fields };
  }
}

/** A cli-progress bar over the blocks of the backfill; warnings print above it. */
class BarReporter implements Reporter {
  private readonly bars: cliProgress.MultiBar;
  private bar: cliProgress.SingleBar | undefined;
  private from = 0;
  private payments = 0;
  private startedAt = performance.now();
  private readonly json: JsonReporter;

  constructor(private readonly stream: NodeJS.WriteStream) {
    this.bars = new cliProgress.MultiBar(
      {
        format:
          "indexing |{bar}| {percentage}% | block {block} | {payments} payments | {rate} blocks/s | ETA {eta_formatted}",
        hideCursor: true,
        etaBuffer: 50,
        stream,
      },
      cliProgress.Presets.shades_classic,
    );
    this.json = new JsonReporter({ write: (line: string) => this.log(line) } as NodeJS.WritableStream, 0);
  }

  onEvent(event: IndexerEvent): void {
    switch (event.type) {
      case "start":
        this.from = event.from;
        this.startedAt = performance.now();
        if (event.target >= event.from) {
          this.bar = this.bars.create(event.target - event.from + 1, 0, {
            block: event.from - 1,
            payments: 0,
            rate: 0,
          });
        }
        return;
      case "batch": {
        this.payments += event.payments;
        if (!this.bar) {
          this.json.onEvent(event);
          return;
        }
        const seconds = (performance.now() - this.startedAt) / 1000;
        this.bar.setTotal(Math.max(1, event.target - this.from + 1));
        this.bar.update(event.to - this.from + 1, {
          block: event.to,
          payments: this.payments,
          rate: Math.round((event.to - this.from + 1) / Math.max(seconds, 1e-3)),
        });
        return;
      }
      case "caught_up":
        // The backfill is over: --follow goes on with one line per batch.
        this.stop();
        this.json.onEvent(event);
        return;
      case "span":
        return;
      default:
        this.json.onEvent(event);
    }
  }

  stop(): void {
    if (!this.bar) return;
    this.bars.stop();
    this.bar = undefined;
  }

  private log(line: string): void {
    if (this.bar) this.bars.log(line);
    else this.stream.write(line);
  }
}
