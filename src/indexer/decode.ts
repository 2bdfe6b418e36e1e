/**
 * Decoding of the events the indexer reads, straight from the RPC's JSON: their layouts are fixed, so a
 * few string slices replace viem's generic ABI decoder, which is 5-10x slower than the RPC itself on this
 * hot path (shared notes, platform.md).
 *
 * USDC's:
 *   Transfer(address indexed from, address indexed to, uint256 value)
 *     topics [sig, from, to], data = value (32 bytes)
 *   AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)
 *     topics [sig, authorizer, nonce], data empty
 * The x402 Permit2 proxies' (upto, and exact for wallets without EIP-3009), after the Transfer their
 * settlement made through Permit2 (both proxies emit the same two events: the address tells them apart):
 *   Settled() and SettledWithPermit()
 *     topics [sig], data empty
 * The batch-settlement escrow's: `channel-logs.ts`.
 */

import {
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_EXACT_PROXY_ADDRESS,
  X402_UPTO_PROXY_ADDRESS,
} from "../chain/base.ts";
import { type ChannelLog, decodeChannelLog } from "./channel-logs.ts";
import { type LogPosition, MalformedLogError, type RawLog } from "./raw-log.ts";

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
/** keccak256("AuthorizationUsed(address,bytes32)"), emitted by EIP-3009 tokens just before the Transfer. */
export const AUTHORIZATION_USED_TOPIC = "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5";

/** keccak256("Settled()"): an x402 Permit2 proxy settled a payment (the USDC Transfer just before it). */
export const UPTO_SETTLED_TOPIC = "0x97088ec3606cfe8cc112180570d03fcde05f9b8e1bfef8e27784eaf5dd5691b6";
/** keccak256("SettledWithPermit()"): the same, the buyer's Permit2 approval given by an EIP-2612 permit. */
export const UPTO_SETTLED_WITH_PERMIT_TOPIC =
  "0xde5b89d10fc800c459329c382fabfcad0be0ed7e5328e01fae04e507b09ef5d8";

export interface TransferLog extends LogPosition {
  kind: "transfer";
  from: string;
  to: string;
  value: bigint;
}

export interface AuthorizationLog extends LogPosition {
  kind: "authorization";
  authorizer: string;
}

/** A Permit2 proxy settled the payment whose Transfer precedes this log in its transaction. */
export interface ProxySettledLog extends LogPosition {
  kind: "proxy";
  /** Which proxy: upto's settles any amount up to the signed one, exact's the signed amount. */
  scheme: "exact" | "upto";
}

export type UsdcLog = TransferLog | AuthorizationLog | ProxySettledLog;
/** Every log the indexer reads: USDC's, the proxies' and the batch-settlement escrow's. */
export type X402Log = UsdcLog | ChannelLog;

const PROXIES = new Map<string, ProxySettledLog["scheme"]>([
  [X402_UPTO_PROXY_ADDRESS.toLowerCase(), "upto"],
  [X402_EXACT_PROXY_ADDRESS.toLowerCase(), "exact"],
]);
const ESCROW = X402_BATCH_SETTLEMENT_ADDRESS.toLowerCase();

/**
 * Decodes one log of USDC, of a Permit2 proxy or of the batch-settlement escrow (as the log filter asks for
 * them); undefined for other events (and for logs a reorg removed).
 */
export function decodeLog(log: RawLog): X402Log | undefined {
  if (log.removed) return undefined;
  const topics = log.topics;
  const sig = topics[0];
  const from = log.address.toLowerCase();
  if (from === ESCROW) return decodeChannelLog(log, positionOf(log));
  if (sig === UPTO_SETTLED_TOPIC || sig === UPTO_SETTLED_WITH_PERMIT_TOPIC) {
    const scheme = PROXIES.get(from);
    if (!scheme) return undefined;
    if (topics.length !== 1) throw malformed(log, `${topics.length} topics`);
    return { kind: "proxy", scheme, ...positionOf(log) };
  }
  if (sig !== TRANSFER_TOPIC && sig !== AUTHORIZATION_USED_TOPIC) return undefined;
  if (topics.length !== 3) throw malformed(log, `${topics.length} topics`);
  const position = positionOf(log);
  if (sig === AUTHORIZATION_USED_TOPIC) {
    return { kind: "authorization", ...position, authorizer: topicAddress(log, topics[1] as string) };
  }
  if (log.data.length !== 66) throw malformed(log, `data of ${(log.data.length - 2) / 2} bytes`);
  return {
    kind: "transfer",
    ...position,
    from: topicAddress(log, topics[1] as string),
    to: topicAddress(log, topics[2] as string),
    value: BigInt(log.data),
  };
}

/** Where a log stands in the chain, as every decoded log carries it. */
export function positionOf(log: RawLog): LogPosition {
  return {
    block: hexNumber(log.blockNumber),
    blockHash: log.blockHash.toLowerCase(),
    blockTime: log.blockTimestamp === undefined ? undefined : hexNumber(log.blockTimestamp),
    tx: log.transactionHash.toLowerCase(),
    logIndex: hexNumber(log.logIndex),
  };
}

/** A number from a JSON-RPC quantity ("0x1a"); blocks, indices and times all fit in a double. */
export function hexNumber(hex: string): number {
  const n = Number.parseInt(hex, 16);
  if (!hex.startsWith("0x") || !Number.isSafeInteger(n))
    throw new MalformedLogError(`not a quantity: ${hex}`);
  return n;
}

/** The address in the low 20 bytes of an indexed topic, lower-case. */
function topicAddress(log: RawLog, topic: string): string {
  if (topic.length !== 66 || !topic.startsWith("0x000000000000000000000000")) {
    throw malformed(log, `topic ${topic} is not an address`);
  }
  return `0x${topic.slice(26).toLowerCase()}`;
}

function malformed(log: RawLog, what: string): MalformedLogError {
  return new MalformedLogError(
    `malformed log ${log.transactionHash} #${log.logIndex} in block ${log.blockNumber}: ${what}`,
  );
}
