/**
 * Turns a batch's paired logs into rows: a settlement sent by a known facilitator signer (on or after
 * its start date) is an x402 payment; one sent by anyone else is a facilitator candidate, kept for
 * review rather than dropped (registries trail reality: one explorer lost a new Coinbase relayer's
 * traffic for weeks). Every time is checked here against the headers and Base's 2 s rule.
 *
 * A Transfer of more than `MAX_USDC_AMOUNT` is skipped: no payment, candidate or transfer row, and the
 * batch lists it (`skipped`) so that the run says so. The chain's data cannot be refused, but no x402
 * payment or USDC transfer on Base is that large; the import refuses the same amounts.
 */
import { MAX_USDC_AMOUNT } from "../chain/base.ts";
import { BlockTimeError, type IndexClock } from "../chain/block-clock.ts";
import type { FacilitatorRegistry } from "../chain/facilitators.ts";
import type { BlockData } from "./block-data.ts";
import { ChainMovedError } from "./block-data.ts";
import type { BuilderCodes } from "./builder-codes.ts";
import type { TransferLog } from "./decode.ts";
import type { PairedLogs, Scheme, TransferMethod } from "./settlements.ts";

export interface PaymentRow {
  tx: string;
  logIndex: number;
  block: number;
  time: number;
  facilitator: string;
  payer: string;
  payTo: string;
  amount: bigint;
  scheme: Scheme;
  method: TransferMethod;
  /** A batch-settlement claim's channel id: the money it spends was the channel's (`channels.ts`). */
  channel?: string;
  /** The ERC-8021 codes its transaction's input ends with (builder-codes.ts): a claim of its payer's software. */
  codes?: BuilderCodes;
}

export interface CandidateRow {
  tx: string;
  logIndex: number;
  block: number;
  time: number;
  sender: string;
  payer: string;
  payTo: string;
  amount: bigint;
  reason: "unknown_sender" | "before_since";
}

export interface TransferRow {
  tx: string;
  logIndex: number;
  block: number;
  time: number;
  from: string;
  to: string;
  amount: bigint;
}

export interface ClassifiedBatch {
  payments: PaymentRow[];
  candidates: CandidateRow[];
  /**
   * Every USDC transfer that is not an x402 payment (mints and burns too, and the transfers of
   * candidate settlements: money moved, whoever sent it). The commit keeps those that touch a wallet
   * already seen in a payment (`funding.ts`).
   */
  transfers: TransferRow[];
  /** Transfers above `MAX_USDC_AMOUNT`, settlements or not: stored nowhere. */
  skipped: SkippedLog[];
}

/** A Transfer log the indexer does not store because its amount is above `MAX_USDC_AMOUNT`. */
export interface SkippedLog {
  tx: string;
  logIndex: number;
  block: number;
  amount: bigint;
}

export function classifyBatch(
  paired: PairedLogs,
  blocks: ReadonlyMap<number, BlockData>,
  registry: FacilitatorRegistry,
  clock: IndexClock,
): ClassifiedBatch {
  const payments: PaymentRow[] = [];
  const candidates: CandidateRow[] = [];
  const transfers: TransferRow[] = [];
  const skipped: SkippedLog[] = [];

  for (const { transfer: log, scheme, method } of paired.settlements) {
    const data = blocks.get(log.block);
    if (!data) throw new Error(`internal: no header fetched for block ${log.block}`);
    if (data.header.hash !== log.blockHash) {
      throw new ChainMovedError(`block ${log.block} changed while the batch was read`);
    }
    clock.checkHeader(data.header);
    const what = `log ${log.tx} #${log.logIndex}`;
    const time = clock.timeOfLog(log.block, log.blockTime ?? data.header.timestamp, what);
    if (time !== data.header.timestamp) {
      throw new BlockTimeError(
        `${what} in block ${log.block} says blockTimestamp ${time}, but the header says ${data.header.timestamp}`,
      );
    }
    const sender = data.senders.get(log.tx);
    if (!sender) throw new Error(`internal: no sender fetched for ${log.tx}`);
    if (oversized(log)) {
      skipped.push(skippedLog(log));
      continue;
    }
    const amount = log.value;
    const verdict = registry.judge(sender, time);
    const base = {
      tx: log.tx,
      logIndex: log.logIndex,
      block: log.block,
      time,
      payer: log.from,
      payTo: log.to,
      amount,
    };
    if (verdict.known) {
      const codes = data.codes.get(log.tx);
      payments.push({ ...base, facilitator: sender, scheme, method, ...(codes && { codes }) });
    } else {
      candidates.push({ ...base, sender, reason: verdict.reason });
      transfers.push(transferRow(log, time));
    }
  }

  for (const log of paired.transfers) {
    const time = clock.timeOfLog(log.block, log.blockTime, `log ${log.tx} #${log.logIndex}`);
    const data = blocks.get(log.block);
    if (data) {
      clock.checkHeader(data.header);
      if (data.header.hash !== log.blockHash) {
        throw new ChainMovedError(`block ${log.block} changed while the batch was read`);
      }
    }
    if (oversized(log)) skipped.push(skippedLog(log));
    else transfers.push(transferRow(log, time));
  }
  return { payments, candidates, transfers, skipped };
}

export function transferRow(log: TransferLog, time: number): TransferRow {
  return {
    tx: log.tx,
    logIndex: log.logIndex,
    block: log.block,
    time,
    from: log.from,
    to: log.to,
    amount: log.value,
  };
}

/** More units than any x402 payment or USDC transfer on Base carries (`MAX_USDC_AMOUNT`): not stored. */
export function oversized(log: TransferLog): boolean {
  return log.value > MAX_USDC_AMOUNT;
}

export function skippedLog(log: TransferLog): SkippedLog {
  return { tx: log.tx, logIndex: log.logIndex, block: log.block, amount: log.value };
}
