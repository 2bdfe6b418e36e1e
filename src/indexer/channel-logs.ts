/**
 * The events of x402's batch-settlement escrow (`x402BatchSettlement`), decoded from the RPC's JSON with
 * slices, as `decode.ts` does USDC's: their layouts are fixed.
 *
 *   ChannelCreated(bytes32 indexed channelId, ChannelConfig config)     config: 7 words of data
 *   ChannelClosed(bytes32 indexed channelId, ChannelConfig config)
 *   Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)
 *   Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)
 *   Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)
 *   Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount)
 *   WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter)
 *   WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount)
 *
 * ChannelConfig is (payer, payerAuthorizer, receiver, receiverAuthorizer, token, uint40 withdrawDelay,
 * bytes32 salt). `sender` is the caller of the escrow: who deposited, claimed or swept, not whose money moved.
 */
import { toEventSelector } from "viem";
import { type LogPosition, MalformedLogError, type RawLog } from "./raw-log.ts";

const CONFIG = "(address,address,address,address,address,uint40,bytes32)";

export const CHANNEL_TOPICS = {
  created: toEventSelector(`ChannelCreated(bytes32,${CONFIG})`),
  closed: toEventSelector(`ChannelClosed(bytes32,${CONFIG})`),
  deposited: toEventSelector("Deposited(bytes32,address,uint128,uint128)"),
  claimed: toEventSelector("Claimed(bytes32,address,uint128,uint128)"),
  swept: toEventSelector("Settled(address,address,address,uint128)"),
  refunded: toEventSelector("Refunded(bytes32,address,uint128)"),
  withdrawInitiated: toEventSelector("WithdrawInitiated(bytes32,uint128,uint40)"),
  withdrawFinalized: toEventSelector("WithdrawFinalized(bytes32,address,uint128)"),
} as const;

export type ChannelEventKind = keyof typeof CHANNEL_TOPICS;

const KIND_OF = new Map<string, ChannelEventKind>(
  Object.entries(CHANNEL_TOPICS).map(([kind, topic]) => [topic, kind as ChannelEventKind]),
);

/** A channel's immutable parameters, lower-case; its id is their EIP-712 hash under the escrow's domain. */
export interface ChannelConfig {
  payer: string;
  payerAuthorizer: string;
  receiver: string;
  receiverAuthorizer: string;
  token: string;
  withdrawDelay: number;
  salt: string;
}

export interface ChannelLog extends LogPosition {
  kind: "channel";
  event: ChannelEventKind;
  /** The channel; empty for a sweep (`Settled`), which is per receiver and token. */
  channelId: string;
  /** The escrow's caller; empty where the event does not name one (WithdrawInitiated, Created, Closed). */
  sender: string;
  /** Atomic units moved or claimed; 0 for Created and Closed. */
  amount: bigint;
  /** Created and Closed only. */
  config?: ChannelConfig;
  /** A sweep's receiver and token. */
  receiver?: string;
  token?: string;
}

/** Decodes a log of the escrow; undefined for an event it does not emit. */
export function decodeChannelLog(log: RawLog, position: LogPosition): ChannelLog | undefined {
  const event = KIND_OF.get(log.topics[0] ?? "");
  if (!event) return undefined;
  const t = log.topics;
  const words = dataWords(log);
  const base = { kind: "channel" as const, event, ...position, sender: "", amount: 0n };
  switch (event) {
    case "created":
    case "closed":
      expect(log, t.length === 2 && words.length === 7, "a channel id and a config");
      return { ...base, channelId: word(t[1]), config: configOf(log, words) };
    case "deposited":
    case "claimed":
      expect(log, t.length === 3 && words.length === 2, "a channel id, a sender and two amounts");
      return { ...base, channelId: word(t[1]), sender: address(log, t[2]), amount: uint(words[0]) };
    case "refunded":
    case "withdrawFinalized":
      expect(log, t.length === 3 && words.length === 1, "a channel id, a sender and an amount");
      return { ...base, channelId: word(t[1]), sender: address(log, t[2]), amount: uint(words[0]) };
    case "withdrawInitiated":
      expect(log, t.length === 2 && words.length === 2, "a channel id, an amount and a time");
      return { ...base, channelId: word(t[1]), amount: uint(words[0]) };
    case "swept":
      expect(log, t.length === 4 && words.length === 1, "a receiver, a token, a sender and an amount");
      return {
        ...base,
        channelId: "",
        receiver: address(log, t[1]),
        token: address(log, t[2]),
        sender: address(log, t[3]),
        amount: uint(words[0]),
      };
  }
}

function configOf(log: RawLog, words: string[]): ChannelConfig {
  const addr = (i: number) => address(log, `0x${words[i]}`);
  return {
    payer: addr(0),
    payerAuthorizer: addr(1),
    receiver: addr(2),
    receiverAuthorizer: addr(3),
    token: addr(4),
    withdrawDelay: Number(uint(words[5])),
    salt: `0x${words[6]}`,
  };
}

function dataWords(log: RawLog): string[] {
  const hex = log.data.startsWith("0x") ? log.data.slice(2) : log.data;
  if (hex.length % 64 !== 0) throw malformed(log, `data of ${hex.length / 2} bytes`);
  const out: string[] = [];
  for (let i = 0; i < hex.length; i += 64) out.push(hex.slice(i, i + 64).toLowerCase());
  return out;
}

function word(topic: string | undefined): string {
  return (topic ?? "").toLowerCase();
}

function uint(word: string | undefined): bigint {
  return BigInt(`0x${word ?? "0"}`);
}

function address(log: RawLog, topic: string | undefined): string {
  const t = (topic ?? "").toLowerCase();
  if (t.length !== 66 || !t.startsWith("0x000000000000000000000000")) {
    throw malformed(log, `${t} is not an address`);
  }
  return `0x${t.slice(26)}`;
}

function expect(log: RawLog, ok: boolean, what: string): void {
  if (!ok) throw malformed(log, `expected ${what}, got ${log.topics.length} topics`);
}

function malformed(log: RawLog, what: string): MalformedLogError {
  return new MalformedLogError(
    `malformed batch-settlement log ${log.transactionHash} #${log.logIndex} in block ${log.blockNumber}: ${what}`,
  );
}
