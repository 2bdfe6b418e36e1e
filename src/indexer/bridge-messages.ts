/**
 * CCTP's logs of a batch as the sides of messages the store keeps (`bridge_messages`, read by the screens in
 * src/reports/provenance/bridges.ts): the rows an import's `bridge_message` lines make of the same events
 * (docs/import.md, "Bridge messages"), so a week indexed from the chains and the same week imported give the
 * same reports.
 *
 * - A **burn** is a `DepositForBurn` with the `MessageSent` just before it in its transaction (of the same
 *   version's transmitter), keyed by the deposit's log: the message's source and destination domains, the
 *   nonce (v1's; v2's is zero on the source chain, as its message carries it: Circle's attesters give it one
 *   later), the depositor, the recipient and the amount burned.
 * - A **mint** is a `MintAndWithdraw` with the `MessageReceived` just after it, keyed by the mint's log: the
 *   received message's source domain and nonce, the chain's own domain, the depositor its body names, the
 *   recipient and the amount minted to it (v2: less the fee, which is minted to Circle's fee recipient).
 *
 * Both sides are read whoever the wallets are: a mint to a wallet that pays later is its funding, found by the
 * funding history after the message was read. Read only: moves of another token than the chain's USDC, burns
 * to and mints from an account that is not an EVM address (Solana's, domain 5: `bridges.ts` reads EVM chains
 * only), and a side whose two logs do not agree (no contract of Circle's logs such a pair).
 */
import { MAX_USDC_AMOUNT } from "../chain/base.ts";
import type { IndexClock } from "../chain/block-clock.ts";
import type { ChainRecord } from "../chain/chains.ts";
import { type BlockData, ChainMovedError } from "./block-data.ts";
import {
  type CctpLog,
  type DepositLog,
  evmAddress,
  type MintLog,
  parseBurnBody,
  parseMessage,
  type ReceivedLog,
  type SentLog,
} from "./cctp-logs.ts";
import type { LogPosition } from "./raw-log.ts";

/** One side of a message, as the `bridge_messages` table holds it (but the chain and the time). */
export interface BridgeSide extends LogPosition {
  side: "burn" | "mint";
  sourceDomain: number;
  destinationDomain: number;
  /** v1: decimal; v2: 0x and 64 hex digits. */
  nonce: string;
  sender: string;
  recipient: string;
  amount: bigint;
}

/** A side with its block's time (unix seconds), ready to be written. */
export interface BridgeRow extends BridgeSide {
  time: number;
}

/** The sides of messages in `logs` (a batch's CCTP logs, in chain order). */
export function bridgeSides(logs: readonly CctpLog[], chain: ChainRecord): BridgeSide[] {
  const usdc = chain.usdc.address.toLowerCase();
  const byTx = new Map<string, CctpLog[]>();
  for (const log of logs) {
    const some = byTx.get(log.tx);
    if (some) some.push(log);
    else byTx.set(log.tx, [log]);
  }
  const out: BridgeSide[] = [];
  for (const txLogs of byTx.values()) {
    const taken = new Set<CctpLog>();
    for (const log of txLogs) {
      if (log.event === "deposit" && log.burnToken === usdc) {
        const sent = nearest(txLogs, taken, log, "sent", -1) as SentLog | undefined;
        const side = sent && burnOf(log, sent);
        if (side) out.push(side);
      } else if (log.event === "mint" && log.mintToken === usdc && chain.cctpDomain !== undefined) {
        const received = nearest(txLogs, taken, log, "received", 1) as ReceivedLog | undefined;
        const side = received && mintOf(log, received, chain.cctpDomain);
        if (side) out.push(side);
      }
    }
  }
  return out.sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
}

/** The closest log of `event` and of `log`'s version before (`-1`) or after (`1`) it in its transaction, not taken. */
function nearest(
  txLogs: readonly CctpLog[],
  taken: Set<CctpLog>,
  log: CctpLog,
  event: "sent" | "received",
  direction: -1 | 1,
): CctpLog | undefined {
  let found: CctpLog | undefined;
  for (const other of txLogs) {
    if (other.event !== event || other.version !== log.version || taken.has(other)) continue;
    const gap = (other.logIndex - log.logIndex) * direction;
    if (gap > 0 && (!found || gap < (found.logIndex - log.logIndex) * direction)) found = other;
  }
  if (found) taken.add(found);
  return found;
}

function burnOf(deposit: DepositLog, sent: SentLog): BridgeSide | undefined {
  const message = parseMessage(sent.message, deposit.version);
  const body = message && parseBurnBody(message.body, deposit.version);
  const recipient = evmAddress(deposit.mintRecipient);
  if (!message || !body || !recipient || deposit.amount > MAX_USDC_AMOUNT) return undefined;
  const agree =
    message.destinationDomain === deposit.destinationDomain &&
    (deposit.nonce === undefined || deposit.nonce === message.nonce) &&
    body.mintRecipient === deposit.mintRecipient &&
    body.amount === deposit.amount &&
    evmAddress(body.messageSender) === deposit.depositor;
  if (!agree) return undefined;
  return {
    ...position(deposit),
    side: "burn",
    sourceDomain: message.sourceDomain,
    destinationDomain: message.destinationDomain,
    nonce: message.nonce,
    sender: deposit.depositor,
    recipient,
    amount: deposit.amount,
  };
}

function mintOf(mint: MintLog, received: ReceivedLog, domain: number): BridgeSide | undefined {
  const body = parseBurnBody(received.body, mint.version);
  const sender = body && evmAddress(body.messageSender);
  if (!body || !sender || mint.amount > MAX_USDC_AMOUNT) return undefined;
  const agree =
    evmAddress(body.mintRecipient) === mint.mintRecipient &&
    body.amount - body.feeExecuted === mint.amount &&
    body.feeExecuted === mint.fee;
  if (!agree) return undefined;
  return {
    ...position(mint),
    side: "mint",
    sourceDomain: received.sourceDomain,
    destinationDomain: domain,
    nonce: received.nonce,
    sender,
    recipient: mint.mintRecipient,
    amount: mint.amount,
  };
}

function position(log: LogPosition): LogPosition {
  return {
    block: log.block,
    blockHash: log.blockHash,
    blockTime: log.blockTime,
    tx: log.tx,
    logIndex: log.logIndex,
  };
}

/**
 * The sides with their times, by the chain's clock and checked against the headers the batch read, as its
 * transfers are (`classify.ts`): on a stamped chain every side's log was dated by its block's header.
 */
export function datedSides(
  sides: readonly BridgeSide[],
  blocks: ReadonlyMap<number, BlockData>,
  clock: IndexClock,
): BridgeRow[] {
  return sides.map((side) => {
    const data = blocks.get(side.block);
    if (data) {
      clock.checkHeader(data.header);
      if (data.header.hash !== side.blockHash) {
        throw new ChainMovedError(`block ${side.block} changed while the batch was read`);
      }
    }
    return { ...side, time: clock.timeOfLog(side.block, side.blockTime, `log ${side.tx} #${side.logIndex}`) };
  });
}
