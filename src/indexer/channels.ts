/**
 * What x402's batch-settlement channels put in the store (docs/report.md, "Channels").
 *
 * A buyer deposits into a channel of the escrow once, signs a cumulative voucher per request off chain,
 * and the receiver claims what the vouchers cover, many channels in one transaction, later sweeping what
 * it claimed to its wallet (`settle`). So:
 *
 * - a **claim** (`Claimed`) is the payer's payment to the receiver: a payment row keyed by the Claimed log,
 *   `scheme` "batch-settlement", its amount the claim's increase, its `facilitator` the escrow's caller (the
 *   receiver, its authorizer or a relayer: the escrow is x402's own contract, so who relays a claim does
 *   not decide whether it is a payment, as the sender of an EIP-3009 transfer does);
 * - a **deposit**, a **refund** and a **finished timed withdrawal** move money between the payer and its
 *   channel: transfer rows from the payer to the channel, or back, the channel named by its id (66
 *   characters: no address), so the provenance ledger follows the money into the channel and out of it
 *   to the receiver (a claim spends the channel's money, `payments.channel`) or back to the payer;
 * - a **sweep** moves money the claims already counted: it is neither, and only its event is kept.
 *
 * Every event is also kept as it happened (`channel_events`), and each channel's config (`channels`).
 * Only channels of the indexed token (USDC) count; others are recorded but move nothing here.
 */
import { MAX_USDC_AMOUNT } from "../chain/base.ts";
import type { IndexClock } from "../chain/block-clock.ts";
import type { ChannelConfig, ChannelLog } from "./channel-logs.ts";
import type { PaymentRow, SkippedLog, TransferRow } from "./classify.ts";

export interface ChannelRow extends ChannelConfig {
  channelId: string;
  block: number;
  tx: string;
}

export interface ChannelEventRow {
  tx: string;
  logIndex: number;
  block: number;
  time: number;
  event: ChannelLog["event"];
  /** Empty for a sweep. */
  channelId: string;
  sender: string;
  amount: bigint;
  /** A sweep's receiver; else the channel's payer's counterpart, its receiver (empty when unknown). */
  receiver: string;
}

export interface ChannelRows {
  payments: PaymentRow[];
  /** Payer to channel (deposits) and channel to payer (refunds, withdrawals). */
  moves: TransferRow[];
  channels: ChannelRow[];
  events: ChannelEventRow[];
  /** Amounts above `MAX_USDC_AMOUNT`: kept as events, never as payments or moves (as `classify.ts` skips). */
  skipped: SkippedLog[];
}

/** Reads the configs of channels created before what the run has seen (`ChannelCreated` by id). */
export type ConfigLookup = (ids: readonly string[], below: number) => Promise<Map<string, ChannelConfig>>;

/** The configs of every channel the store holds, kept in memory by the run like its wallet book. */
export class ChannelBook {
  private readonly configs = new Map<string, ChannelConfig>();

  constructor(
    /** The token whose channels are payments (Base's USDC), lower-case. */
    private readonly token: string,
    rows: Iterable<ChannelRow> = [],
  ) {
    for (const row of rows) this.configs.set(row.channelId, row);
  }

  /**
   * The rows of a batch's escrow logs, in chain order. Channels the book does not know and the batch did
   * not create are read with `lookup`; the book learns the batch's channels only through `learn`, after
   * the commit, so a batch read again after a failure sees the same book.
   */
  async rows(logs: readonly ChannelLog[], clock: IndexClock, lookup: ConfigLookup): Promise<ChannelRows> {
    const out: ChannelRows = { payments: [], moves: [], channels: [], events: [], skipped: [] };
    if (logs.length === 0) return out;
    const configs = new Map<string, ChannelConfig>();
    for (const log of logs) {
      if (log.event === "created" && log.config && !this.configs.has(log.channelId)) {
        configs.set(log.channelId, log.config);
        out.channels.push({ channelId: log.channelId, block: log.block, tx: log.tx, ...log.config });
      }
    }
    const missing = [
      ...new Set(
        logs.map((l) => l.channelId).filter((id) => id && !this.configs.has(id) && !configs.has(id)),
      ),
    ];
    if (missing.length > 0) {
      const found = await lookup(missing, logs[0]?.block ?? 0);
      for (const [id, config] of found) {
        configs.set(id, config);
        out.channels.push({ channelId: id, block: -1, tx: "", ...config });
      }
    }
    const configOf = (id: string) => this.configs.get(id) ?? configs.get(id);

    for (const log of logs) {
      const time = clock.timeOfLog(log.block, log.blockTime, `log ${log.tx} #${log.logIndex}`);
      const config = log.channelId ? configOf(log.channelId) : undefined;
      if (log.channelId && !config) {
        throw new Error(
          `batch-settlement channel ${log.channelId} (log ${log.tx} #${log.logIndex}) has no config`,
        );
      }
      out.events.push({
        tx: log.tx,
        logIndex: log.logIndex,
        block: log.block,
        time,
        event: log.event,
        channelId: log.channelId,
        sender: log.sender,
        amount: log.amount,
        receiver: log.receiver ?? config?.receiver ?? "",
      });
      if (!config || config.token !== this.token || log.amount === 0n) continue;
      if (log.amount > MAX_USDC_AMOUNT) {
        out.skipped.push({ tx: log.tx, logIndex: log.logIndex, block: log.block, amount: log.amount });
        continue;
      }
      const at = { tx: log.tx, logIndex: log.logIndex, block: log.block, time, amount: log.amount };
      const channel = log.channelId;
      switch (log.event) {
        case "claimed":
          out.payments.push({
            ...at,
            facilitator: log.sender,
            payer: config.payer,
            payTo: config.receiver,
            scheme: "batch-settlement",
            method: "channel",
            channel,
          });
          break;
        case "deposited":
          out.moves.push({ ...at, from: config.payer, to: channel });
          break;
        case "refunded":
        case "withdrawFinalized":
          out.moves.push({ ...at, from: channel, to: config.payer });
          break;
      }
    }
    return out;
  }

  /** After a commit: the channels it stored. */
  learn(rows: readonly ChannelRow[]): void {
    for (const row of rows) this.configs.set(row.channelId, row);
  }
}
