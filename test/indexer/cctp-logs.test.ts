/**
 * CCTP's logs decoded by slices (src/indexer/cctp-logs.ts) and paired into the sides of messages
 * (src/indexer/bridge-messages.ts), against logs viem encodes from Circle's event signatures and messages packed
 * as Circle's contracts pack them.
 */
import {
  type Address,
  encodeAbiParameters,
  encodeEventTopics,
  encodePacked,
  type Hex,
  pad,
  parseAbi,
  toHex,
} from "viem";
import { describe, expect, it } from "vitest";
import { BASE_RECORD, type ChainRecord } from "../../src/chain/chains.ts";
import { bridgeSides } from "../../src/indexer/bridge-messages.ts";
import { type CctpLog, cctpContracts, decodeCctpLog } from "../../src/indexer/cctp-logs.ts";
import { positionOf } from "../../src/indexer/decode.ts";
import { MalformedLogError, type RawLog } from "../../src/indexer/raw-log.ts";

const EVENTS = parseAbi([
  "event MessageSent(bytes message)",
  "event DepositForBurn(uint64 indexed nonce, address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller)",
  "event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken)",
  "event MessageReceived(address indexed caller, uint32 sourceDomain, uint64 indexed nonce, bytes32 sender, bytes messageBody)",
]);
const EVENTS_V2 = parseAbi([
  "event DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, uint32 indexed minFinalityThreshold, bytes hookData)",
  "event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected)",
  "event MessageReceived(address indexed caller, uint32 sourceDomain, bytes32 indexed nonce, bytes32 sender, uint32 indexed finalityThresholdExecuted, bytes messageBody)",
]);

const USDC = BASE_RECORD.usdc.address as Address;
const CHAIN = BASE_RECORD as ChainRecord;
const ROLES = cctpContracts(CHAIN.cctp);
const V1 = CHAIN.cctp?.v1 as { tokenMessenger: Address; messageTransmitter: Address };
const V2 = CHAIN.cctp?.v2 as { tokenMessenger: Address; messageTransmitter: Address };
const DEPOSITOR = "0x1111111111111111111111111111111111111111" as Address;
const RECIPIENT = "0x2222222222222222222222222222222222222222" as Address;
const REMOTE = pad("0x3333333333333333333333333333333333333333");
const TX = `0x${"ab".repeat(32)}` as Hex;

function raw(address: Address, topics: readonly unknown[], data: Hex, logIndex: number, tx = TX): RawLog {
  return {
    address,
    topics: topics as string[],
    data,
    blockNumber: "0x64",
    blockHash: `0x${"cd".repeat(32)}`,
    blockTimestamp: "0x6553f100",
    transactionHash: tx,
    transactionIndex: "0x0",
    logIndex: toHex(logIndex),
  };
}

const decode = (log: RawLog): CctpLog => {
  const role = ROLES.get(log.address.toLowerCase());
  if (!role) throw new Error("not a CCTP contract");
  return decodeCctpLog(log, positionOf(log), role) as CctpLog;
};

/** A v1 burn body and message, packed as Circle's BurnMessage and Message do. */
function v1Message(nonce: bigint, amount: bigint, recipient: Hex = pad(RECIPIENT)): Hex {
  const body = encodePacked(
    ["uint32", "bytes32", "bytes32", "uint256", "bytes32"],
    [0, pad(USDC), recipient, amount, pad(DEPOSITOR)],
  );
  return encodePacked(
    ["uint32", "uint32", "uint32", "uint64", "bytes32", "bytes32", "bytes32", "bytes"],
    [0, 6, 3, nonce, pad(V1.tokenMessenger), REMOTE, pad("0x"), body],
  );
}

function v1Burn(nonce: bigint, amount: bigint, at = 3, recipient: Hex = pad(RECIPIENT)): RawLog[] {
  const sent = raw(
    V1.messageTransmitter,
    encodeEventTopics({ abi: EVENTS, eventName: "MessageSent" }),
    encodeAbiParameters([{ type: "bytes" }], [v1Message(nonce, amount, recipient)]),
    at,
  );
  const deposit = raw(
    V1.tokenMessenger,
    encodeEventTopics({
      abi: EVENTS,
      eventName: "DepositForBurn",
      args: { nonce, burnToken: USDC, depositor: DEPOSITOR },
    }),
    encodeAbiParameters(
      [
        { type: "uint256" },
        { type: "bytes32" },
        { type: "uint32" },
        { type: "bytes32" },
        { type: "bytes32" },
      ],
      [amount, recipient, 3, REMOTE, pad("0x")],
    ),
    at + 1,
  );
  return [sent, deposit];
}

function v2Body(amount: bigint, fee: bigint, hook: Hex = "0x"): Hex {
  return encodePacked(
    ["uint32", "bytes32", "bytes32", "uint256", "bytes32", "uint256", "uint256", "uint256", "bytes"],
    [1, pad(USDC), pad(RECIPIENT), amount, pad(DEPOSITOR), 1_000n, fee, 0n, hook],
  );
}

function v2Mint(nonce: Hex, amount: bigint, fee: bigint, at = 7, token: Address = USDC): RawLog[] {
  const mint = raw(
    V2.tokenMessenger,
    encodeEventTopics({
      abi: EVENTS_V2,
      eventName: "MintAndWithdraw",
      args: { mintRecipient: RECIPIENT, mintToken: token },
    }),
    encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }], [amount - fee, fee]),
    at,
  );
  const received = raw(
    V2.messageTransmitter,
    encodeEventTopics({
      abi: EVENTS_V2,
      eventName: "MessageReceived",
      args: { caller: DEPOSITOR, nonce, finalityThresholdExecuted: 2000 },
    }),
    encodeAbiParameters(
      [{ type: "uint32" }, { type: "bytes32" }, { type: "bytes" }],
      [3, REMOTE, v2Body(amount, fee, "0xdeadbeef")],
    ),
    at + 1,
  );
  return [mint, received];
}

describe("CCTP's logs", () => {
  it("decode a v1 burn's MessageSent and DepositForBurn as viem encodes them", () => {
    const [sent, deposit] = v1Burn(184n, 6_000_000n).map(decode);
    expect(sent).toMatchObject({ event: "sent", version: 1 });
    expect(deposit).toMatchObject({
      event: "deposit",
      version: 1,
      nonce: "184",
      burnToken: USDC,
      depositor: DEPOSITOR,
      amount: 6_000_000n,
      destinationDomain: 3,
    });
  });

  it("pair a burn into the side the import's line makes: its deposit's log, the message's domains and nonce", () => {
    const sides = bridgeSides(v1Burn(184n, 6_000_000n).map(decode), CHAIN);
    expect(sides).toEqual([
      expect.objectContaining({
        side: "burn",
        logIndex: 4,
        sourceDomain: 6,
        destinationDomain: 3,
        nonce: "184",
        sender: DEPOSITOR,
        recipient: RECIPIENT,
        amount: 6_000_000n,
      }),
    ]);
  });

  it("pair a v2 mint: the attested nonce, the amount less the fee, the depositor the body names", () => {
    const nonce = `0x${"5a".repeat(32)}` as Hex;
    const sides = bridgeSides(v2Mint(nonce, 1_000_000n, 300n).map(decode), CHAIN);
    expect(sides).toEqual([
      expect.objectContaining({
        side: "mint",
        logIndex: 7,
        sourceDomain: 3,
        destinationDomain: 6,
        nonce,
        sender: DEPOSITOR,
        recipient: RECIPIENT,
        amount: 999_700n,
      }),
    ]);
  });

  it("read no side where the logs do not make one", () => {
    const [sent, deposit] = v1Burn(1n, 5n) as [RawLog, RawLog];
    // A deposit without its message, or whose message says another amount.
    expect(bridgeSides([decode(deposit)], CHAIN)).toEqual([]);
    const [otherSent] = v1Burn(1n, 6n) as [RawLog, RawLog];
    expect(bridgeSides([decode(otherSent), decode(deposit)], CHAIN)).toEqual([]);
    // A burn to an account of a chain that is not EVM (Solana's, 32 bytes).
    expect(bridgeSides(v1Burn(2n, 5n, 3, `0x${"9f".repeat(32)}`).map(decode), CHAIN)).toEqual([]);
    // A mint of another token than the chain's USDC.
    const eurc = "0x60a3e35cc302bfa44cb288bc5a4f316fdb1adb42" as Address;
    expect(bridgeSides(v2Mint(pad("0x01"), 10n, 0n, 7, eurc).map(decode), CHAIN)).toEqual([]);
    // The message of another transaction.
    expect(
      bridgeSides(
        [
          decode(
            raw(V1.messageTransmitter, sent.topics as Hex[], sent.data as Hex, 3, `0x${"ef".repeat(32)}`),
          ),
          decode(deposit),
        ],
        CHAIN,
      ),
    ).toEqual([]);
  });

  it("refuse a log whose layout is not its event's", () => {
    const [, deposit] = v1Burn(1n, 5n) as [RawLog, RawLog];
    expect(() => decode({ ...deposit, data: `0x${"00".repeat(64)}` })).toThrow(MalformedLogError);
    expect(() => decode({ ...deposit, data: "0x1234" })).toThrow(MalformedLogError);
  });
});
