/**
 * The events of Circle's CCTP (its burn-and-mint bridge of USDC), decoded from the RPC's JSON with slices, as
 * `decode.ts` does USDC's: their layouts are fixed (circlefin/evm-cctp-contracts: `src/TokenMessenger.sol`,
 * `src/MessageTransmitter.sol`, `src/v2/TokenMessengerV2.sol`, `src/v2/BaseTokenMessenger.sol`,
 * `src/v2/MessageTransmitterV2.sol`).
 *
 * A burn, on the source chain, in one transaction: the TokenMessenger takes the depositor's USDC to its minter
 * and burns it, its MessageTransmitter emits the message, then the TokenMessenger emits the deposit:
 *   MessageSent(bytes message)                                                     (v1 and v2)
 *   v1 DepositForBurn(uint64 indexed nonce, address indexed burnToken, uint256 amount, address indexed depositor,
 *        bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller)
 *   v2 DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient,
 *        uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee,
 *        uint32 indexed minFinalityThreshold, bytes hookData)
 * A mint, on the destination chain, in one transaction: the TokenMessenger mints (less v2's fee) and says so,
 * then its MessageTransmitter says which message it received:
 *   v1 MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken)
 *   v2 MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected)
 *   v1 MessageReceived(address indexed caller, uint32 sourceDomain, uint64 indexed nonce, bytes32 sender, bytes messageBody)
 *   v2 MessageReceived(address indexed caller, uint32 sourceDomain, bytes32 indexed nonce, bytes32 sender,
 *        uint32 indexed finalityThresholdExecuted, bytes messageBody)
 *
 * The message (`MessageSent`'s bytes, packed): v1 version 4, sourceDomain 4, destinationDomain 4, nonce 8, sender
 * 32, recipient 32, destinationCaller 32, body; v2 the same with a nonce of 32 bytes and, before the body,
 * minFinalityThreshold 4 and finalityThresholdExecuted 4. v2's nonce is left empty (zero) on the source chain:
 * Circle's attesters give it one after the burn, which only the mint's `MessageReceived` shows. The body of a
 * burn (BurnMessage): version 4, burnToken 32, mintRecipient 32, amount 32, messageSender 32 (the depositor);
 * v2's goes on with maxFee 32, feeExecuted 32, expirationBlock 32, hookData.
 */
import { toEventSelector } from "viem";
import type { CctpDeployment } from "../chain/chains.ts";
import { type LogPosition, MalformedLogError, type RawLog } from "./raw-log.ts";

export type CctpVersion = 1 | 2;

export const CCTP_TOPICS = {
  depositV1: toEventSelector("DepositForBurn(uint64,address,uint256,address,bytes32,uint32,bytes32,bytes32)"),
  depositV2: toEventSelector(
    "DepositForBurn(address,uint256,address,bytes32,uint32,bytes32,bytes32,uint256,uint32,bytes)",
  ),
  sent: toEventSelector("MessageSent(bytes)"),
  receivedV1: toEventSelector("MessageReceived(address,uint32,uint64,bytes32,bytes)"),
  receivedV2: toEventSelector("MessageReceived(address,uint32,bytes32,bytes32,uint32,bytes)"),
  mintV1: toEventSelector("MintAndWithdraw(address,uint256,address)"),
  mintV2: toEventSelector("MintAndWithdraw(address,uint256,address,uint256)"),
} as const;

/** The TokenMessenger's deposit: a burn of `amount` of `burnToken` from `depositor`, for `mintRecipient` there. */
export interface DepositLog extends LogPosition {
  kind: "cctp";
  event: "deposit";
  version: CctpVersion;
  /** v1's nonce (decimal); v2's deposit names none. */
  nonce?: string;
  burnToken: string;
  depositor: string;
  amount: bigint;
  /** 32 bytes, hex without 0x: an EVM address left-padded, or another chain's account. */
  mintRecipient: string;
  destinationDomain: number;
}

/** The MessageTransmitter's message as it left (hex without 0x). */
export interface SentLog extends LogPosition {
  kind: "cctp";
  event: "sent";
  version: CctpVersion;
  message: string;
}

/** The MessageTransmitter's receipt of a message: its source domain, nonce and body (hex without 0x). */
export interface ReceivedLog extends LogPosition {
  kind: "cctp";
  event: "received";
  version: CctpVersion;
  sourceDomain: number;
  /** v1: decimal; v2: 0x and 64 hex digits. */
  nonce: string;
  body: string;
}

/** The TokenMessenger's mint: `amount` of `mintToken` to `mintRecipient` (v2: less `fee`, which went elsewhere). */
export interface MintLog extends LogPosition {
  kind: "cctp";
  event: "mint";
  version: CctpVersion;
  mintRecipient: string;
  mintToken: string;
  amount: bigint;
  fee: bigint;
}

export type CctpLog = DepositLog | SentLog | ReceivedLog | MintLog;

/** What a CCTP contract is: of which version, and whether it burns and mints or carries the messages. */
export interface CctpRole {
  version: CctpVersion;
  contract: "messenger" | "transmitter";
}
/** A chain's CCTP contracts by lower-case address. */
export type CctpRoles = ReadonlyMap<string, CctpRole>;

/** The chain's CCTP contracts, lower-case, each with its version and role. */
export function cctpContracts(cctp: CctpDeployment | undefined): CctpRoles {
  const out = new Map<string, CctpRole>();
  for (const [version, c] of [
    [1, cctp?.v1],
    [2, cctp?.v2],
  ] as const) {
    if (!c) continue;
    out.set(c.tokenMessenger.toLowerCase(), { version, contract: "messenger" });
    out.set(c.messageTransmitter.toLowerCase(), { version, contract: "transmitter" });
  }
  return out;
}

/** Decodes a log of a CCTP contract of `role`; undefined for its other events. */
export function decodeCctpLog(log: RawLog, position: LogPosition, role: CctpRole): CctpLog | undefined {
  const sig = log.topics[0];
  const t = log.topics;
  const { version } = role;
  const base = { kind: "cctp" as const, version, ...position };
  if (role.contract === "messenger") {
    if (sig === (version === 1 ? CCTP_TOPICS.depositV1 : CCTP_TOPICS.depositV2)) {
      const words = dataWords(log);
      if (version === 1) {
        expect(log, t.length === 4 && words.length === 5, "a v1 DepositForBurn");
        return {
          ...base,
          event: "deposit",
          nonce: uint(t[1]).toString(),
          burnToken: address(log, t[2]),
          depositor: address(log, t[3]),
          ...depositData(words),
        };
      }
      expect(log, t.length === 4 && words.length >= 8, "a v2 DepositForBurn");
      return {
        ...base,
        event: "deposit",
        burnToken: address(log, t[1]),
        depositor: address(log, t[2]),
        ...depositData(words),
      };
    }
    if (sig === (version === 1 ? CCTP_TOPICS.mintV1 : CCTP_TOPICS.mintV2)) {
      const words = dataWords(log);
      expect(log, t.length === 3 && words.length === version, `a v${version} MintAndWithdraw`);
      return {
        ...base,
        event: "mint",
        mintRecipient: address(log, t[1]),
        mintToken: address(log, t[2]),
        amount: uint(words[0]),
        fee: version === 2 ? uint(words[1]) : 0n,
      };
    }
    return undefined;
  }
  if (sig === CCTP_TOPICS.sent) {
    expect(log, t.length === 1, "a MessageSent");
    return { ...base, event: "sent", message: bytesAt(log, dataWords(log), 0) };
  }
  if (sig === (version === 1 ? CCTP_TOPICS.receivedV1 : CCTP_TOPICS.receivedV2)) {
    const words = dataWords(log);
    expect(log, t.length === (version === 1 ? 3 : 4) && words.length >= 4, `a v${version} MessageReceived`);
    return {
      ...base,
      event: "received",
      sourceDomain: Number(uint(words[0])),
      nonce: version === 1 ? uint(t[2]).toString() : word(log, t[2]),
      body: bytesAt(log, words, 2),
    };
  }
  return undefined;
}

function depositData(words: string[]) {
  return {
    amount: uint(words[0]),
    mintRecipient: words[1] as string,
    destinationDomain: Number(uint(words[2])),
  };
}

/** A message's fields the bridge rows read (`message`: hex without 0x), or undefined if it is too short. */
export function parseMessage(
  message: string,
  version: CctpVersion,
): { sourceDomain: number; destinationDomain: number; nonce: string; body: string } | undefined {
  const nonceBytes = version === 1 ? 8 : 32;
  const bodyAt = version === 1 ? 116 : 148;
  if (message.length < bodyAt * 2) return undefined;
  const nonce = message.slice(24, 24 + nonceBytes * 2);
  return {
    sourceDomain: Number.parseInt(message.slice(8, 16), 16),
    destinationDomain: Number.parseInt(message.slice(16, 24), 16),
    nonce: version === 1 ? BigInt(`0x${nonce}`).toString() : `0x${nonce}`,
    body: message.slice(bodyAt * 2),
  };
}

/** A BurnMessage's fields (hex without 0x, 32-byte words as hex); undefined if it is too short for its version. */
export function parseBurnBody(
  body: string,
  version: CctpVersion,
):
  | { burnToken: string; mintRecipient: string; amount: bigint; messageSender: string; feeExecuted: bigint }
  | undefined {
  if (body.length < (version === 1 ? 132 : 228) * 2) return undefined;
  const at = (byte: number) => body.slice(byte * 2, byte * 2 + 64);
  return {
    burnToken: at(4),
    mintRecipient: at(36),
    amount: BigInt(`0x${at(68)}`),
    messageSender: at(100),
    feeExecuted: version === 2 ? BigInt(`0x${at(164)}`) : 0n,
  };
}

/** The EVM address a 32-byte word (hex without 0x) holds left-padded, or undefined for another chain's account. */
export function evmAddress(word32: string): string | undefined {
  if (word32.length !== 64 || !word32.startsWith("0".repeat(24))) return undefined;
  return `0x${word32.slice(24).toLowerCase()}`;
}

function dataWords(log: RawLog): string[] {
  const hex = log.data.startsWith("0x") ? log.data.slice(2) : log.data;
  if (hex.length % 64 !== 0) throw malformed(log, `data of ${hex.length / 2} bytes`);
  const out: string[] = [];
  for (let i = 0; i < hex.length; i += 64) out.push(hex.slice(i, i + 64).toLowerCase());
  return out;
}

/** The ABI-encoded `bytes` whose offset is data word `k` (hex without 0x). */
function bytesAt(log: RawLog, words: string[], k: number): string {
  const offset = Number(uint(words[k]));
  if (offset % 32 !== 0) throw malformed(log, `a bytes offset of ${offset}`);
  const at = offset / 32;
  const length = Number(uint(words[at]));
  const hex = words.slice(at + 1).join("");
  if (at >= words.length || hex.length < length * 2) throw malformed(log, "bytes past the data's end");
  return hex.slice(0, length * 2);
}

function word(log: RawLog, topic: string | undefined): string {
  const t = (topic ?? "").toLowerCase();
  if (t.length !== 66) throw malformed(log, `${t} is not a 32-byte topic`);
  return t;
}

function uint(w: string | undefined): bigint {
  return BigInt(w?.startsWith("0x") ? w : `0x${w ?? "0"}`);
}

function address(log: RawLog, topic: string | undefined): string {
  const t = word(log, topic);
  const found = evmAddress(t.slice(2));
  if (!found) throw malformed(log, `${t} is not an address`);
  return found;
}

function expect(log: RawLog, ok: boolean, what: string): void {
  if (!ok) throw malformed(log, `expected ${what}, got ${log.topics.length} topics`);
}

function malformed(log: RawLog, what: string): MalformedLogError {
  return new MalformedLogError(
    `malformed CCTP log ${log.transactionHash} #${log.logIndex} in block ${log.blockNumber}: ${what}`,
  );
}
