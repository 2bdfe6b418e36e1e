import { type Abi, encodeAbiParameters, encodeEventTopics, pad, toHex } from "viem";
import { describe, expect, it } from "vitest";
import {
  BASE_USDC,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_EXACT_PROXY_ADDRESS,
} from "../../src/chain/base.ts";
import { batchSettlementAbi } from "../../src/chain/batch-settlement.ts";
import { BlockClock } from "../../src/chain/block-clock.ts";
import { CHANNEL_TOPICS, type ChannelConfig, type ChannelLog } from "../../src/indexer/channel-logs.ts";
import { ChannelBook } from "../../src/indexer/channels.ts";
import {
  AUTHORIZATION_USED_TOPIC,
  decodeLog,
  TRANSFER_TOPIC,
  UPTO_SETTLED_TOPIC,
  type X402Log,
} from "../../src/indexer/decode.ts";
import { MalformedLogError, type RawLog } from "../../src/indexer/raw-log.ts";
import { pairSettlements } from "../../src/indexer/settlements.ts";

const PAYER = "0x00000000000000000000000000000000000000aa";
const MERCHANT = "0x00000000000000000000000000000000000000bb";
const RELAYER = "0x00000000000000000000000000000000000000cc";
const ESCROW = X402_BATCH_SETTLEMENT_ADDRESS.toLowerCase();
const COLLECTOR = ERC3009_DEPOSIT_COLLECTOR_ADDRESS.toLowerCase();
const ID = `0x${"7e".repeat(32)}`;
const CONFIG: ChannelConfig = {
  payer: PAYER,
  payerAuthorizer: "0x0000000000000000000000000000000000000000",
  receiver: MERCHANT,
  receiverAuthorizer: RELAYER,
  token: BASE_USDC,
  withdrawDelay: 900,
  salt: `0x${"00".repeat(31)}01`,
};
const GENESIS = 1_700_000_000;
const at = (block: number) => ({
  blockNumber: toHex(block),
  blockHash: `0x${block.toString(16).padStart(64, "0")}`,
  blockTimestamp: toHex(GENESIS + 2 * block),
  transactionIndex: "0x0",
});

let logIndex = 0;
function escrowLog(block: number, tx: string, name: string, args: Record<string, unknown>): RawLog {
  const event = (batchSettlementAbi as Abi).find((e) => e.type === "event" && e.name === name);
  if (event?.type !== "event") throw new Error(name);
  const topics = encodeEventTopics({ abi: [event], eventName: name, args } as never) as string[];
  const plain = event.inputs.filter((i) => !i.indexed);
  const data = encodeAbiParameters(
    plain,
    plain.map((i) => args[i.name as string]),
  );
  return {
    address: ESCROW,
    topics,
    data,
    ...at(block),
    transactionHash: tx,
    logIndex: toHex(logIndex++),
  };
}

function usdcLog(block: number, tx: string, topics: string[], data = "0x"): RawLog {
  return { address: BASE_USDC, topics, data, ...at(block), transactionHash: tx, logIndex: toHex(logIndex++) };
}
const transfer = (block: number, tx: string, from: string, to: string, value: bigint) =>
  usdcLog(
    block,
    tx,
    [TRANSFER_TOPIC, pad(from as `0x${string}`), pad(to as `0x${string}`)],
    pad(toHex(value)),
  );
const tx = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const config = { ...CONFIG, withdrawDelay: 900 };

/** A channel's life on chain: an ERC-3009 deposit, two claims, a sweep, a refund, a timed withdrawal. */
function life(): RawLog[] {
  logIndex = 0;
  return [
    // deposit (ERC-3009 through the collector): what the indexer used to count as a payment to the collector
    usdcLog(10, tx(1), [AUTHORIZATION_USED_TOPIC, pad(PAYER as `0x${string}`), `0x${"99".repeat(32)}`]),
    transfer(10, tx(1), PAYER, COLLECTOR, 1_000_000n),
    transfer(10, tx(1), COLLECTOR, ESCROW, 1_000_000n),
    escrowLog(10, tx(1), "ChannelCreated", { channelId: ID, config }),
    escrowLog(10, tx(1), "Deposited", {
      channelId: ID,
      sender: RELAYER,
      amount: 1_000_000n,
      newBalance: 1_000_000n,
    }),
    escrowLog(12, tx(2), "Claimed", {
      channelId: ID,
      sender: RELAYER,
      claimAmount: 300n,
      newTotalClaimed: 300n,
    }),
    escrowLog(14, tx(3), "Claimed", {
      channelId: ID,
      sender: MERCHANT,
      claimAmount: 200n,
      newTotalClaimed: 500n,
    }),
    transfer(15, tx(4), ESCROW, MERCHANT, 500n),
    escrowLog(15, tx(4), "Settled", { receiver: MERCHANT, token: BASE_USDC, sender: RELAYER, amount: 500n }),
    transfer(16, tx(5), ESCROW, PAYER, 400_000n),
    escrowLog(16, tx(5), "Refunded", { channelId: ID, sender: MERCHANT, amount: 400_000n }),
    escrowLog(17, tx(6), "WithdrawInitiated", { channelId: ID, amount: 599_500n, finalizeAfter: 3_000 }),
    transfer(18, tx(7), ESCROW, PAYER, 599_500n),
    escrowLog(18, tx(7), "WithdrawFinalized", { channelId: ID, sender: PAYER, amount: 599_500n }),
    escrowLog(18, tx(7), "ChannelClosed", { channelId: ID, config }),
  ];
}

const clock = () => new BlockClock(0, GENESIS);
const noLookup = async () => {
  throw new Error("no lookup expected");
};

describe("batch-settlement logs", () => {
  it("decodes every event of the escrow with the x402 contract's layout", () => {
    const decoded = life()
      .map(decodeLog)
      .filter((l): l is ChannelLog => l?.kind === "channel");
    expect(decoded.map((l) => [l.event, l.channelId, l.sender, l.amount])).toEqual([
      ["created", ID, "", 0n],
      ["deposited", ID, RELAYER, 1_000_000n],
      ["claimed", ID, RELAYER, 300n],
      ["claimed", ID, MERCHANT, 200n],
      ["swept", "", RELAYER, 500n],
      ["refunded", ID, MERCHANT, 400_000n],
      ["withdrawInitiated", ID, "", 599_500n],
      ["withdrawFinalized", ID, PAYER, 599_500n],
      ["closed", ID, "", 0n],
    ]);
    expect(decoded[0]?.config).toEqual(CONFIG);
    expect(decoded[4]).toMatchObject({ receiver: MERCHANT, token: BASE_USDC });
    expect(Object.keys(CHANNEL_TOPICS)).toHaveLength(8);
  });

  it("refuses an escrow log whose layout is not the event's", () => {
    const [, , , , deposited] = life();
    const log = deposited as RawLog;
    expect(() => decodeLog({ ...log, data: `${log.data}00` })).toThrow(MalformedLogError);
    expect(() => decodeLog({ ...log, topics: log.topics.slice(0, 2) })).toThrow(MalformedLogError);
    // Another contract's event of the same name is not the escrow's.
    expect(decodeLog({ ...log, address: BASE_USDC })).toBeUndefined();
  });

  it("sets the escrow's plumbing apart: a deposit is no payment to the collector, a sweep or refund no transfer", () => {
    const paired = pairSettlements(
      life()
        .map(decodeLog)
        .filter((l): l is X402Log => l !== undefined),
    );
    expect(paired.settlements).toEqual([]);
    expect(paired.transfers).toEqual([]);
    expect(paired.channels).toHaveLength(9);
  });

  it("pairs the exact Permit2 proxy's Settled with its Transfer as an exact payment through Permit2", () => {
    logIndex = 0;
    const logs = [
      transfer(20, tx(9), PAYER, MERCHANT, 1_000n),
      { ...usdcLog(20, tx(9), [UPTO_SETTLED_TOPIC]), address: X402_EXACT_PROXY_ADDRESS },
    ];
    const paired = pairSettlements(logs.map(decodeLog).filter((l): l is X402Log => l !== undefined));
    expect(paired.settlements.map((s) => [s.scheme, s.method, s.transfer.value])).toEqual([
      ["exact", "permit2", 1_000n],
    ]);
  });

  it("turns a channel's life into claims paid by its payer, and moves between the payer and the channel", async () => {
    const book = new ChannelBook(BASE_USDC);
    const logs = pairSettlements(
      life()
        .map(decodeLog)
        .filter((l): l is X402Log => l !== undefined),
    ).channels;
    const rows = await book.rows(logs, clock(), noLookup);
    expect(
      rows.payments.map((p) => [p.payer, p.payTo, p.amount, p.facilitator, p.scheme, p.method, p.channel]),
    ).toEqual([
      [PAYER, MERCHANT, 300n, RELAYER, "batch-settlement", "channel", ID],
      [PAYER, MERCHANT, 200n, MERCHANT, "batch-settlement", "channel", ID],
    ]);
    // Deposited, refunded, withdrawn: the channel is a wallet of its own, named by its id.
    expect(rows.moves.map((m) => [m.from, m.to, m.amount])).toEqual([
      [PAYER, ID, 1_000_000n],
      [ID, PAYER, 400_000n],
      [ID, PAYER, 599_500n],
    ]);
    expect(rows.channels).toEqual([{ channelId: ID, block: 10, tx: tx(1), ...CONFIG }]);
    expect(rows.events.map((e) => e.event)).toEqual([
      "created",
      "deposited",
      "claimed",
      "claimed",
      "swept",
      "refunded",
      "withdrawInitiated",
      "withdrawFinalized",
      "closed",
    ]);
    expect(rows.events.every((e) => e.receiver === MERCHANT)).toBe(true);
    // Claims add up to what was swept; deposits less refunds and withdrawals to what was claimed.
    const claimed = rows.payments.reduce((s, p) => s + p.amount, 0n);
    const net = rows.moves.reduce((s, m) => s + (m.to === ID ? m.amount : -m.amount), 0n);
    expect(net).toBe(claimed);
  });

  it("reads the config of a channel created before the indexed blocks, once", async () => {
    const book = new ChannelBook(BASE_USDC);
    const all = pairSettlements(
      life()
        .map(decodeLog)
        .filter((l): l is X402Log => l !== undefined),
    ).channels;
    const later = all.filter((l) => l.block >= 12);
    const asked: [readonly string[], number][] = [];
    const rows = await book.rows(later, clock(), async (ids, below) => {
      asked.push([ids, below]);
      return new Map([[ID, CONFIG]]);
    });
    expect(asked).toEqual([[[ID], 12]]);
    expect(rows.payments).toHaveLength(2);
    expect(rows.channels).toEqual([{ channelId: ID, block: -1, tx: "", ...CONFIG }]);
    book.learn(rows.channels);
    await book.rows(later, clock(), noLookup);
  });

  it("counts no payment on a channel of another token, but keeps its events", async () => {
    const book = new ChannelBook(BASE_USDC);
    const other = { ...CONFIG, token: "0x00000000000000000000000000000000000000dd" };
    const logs = pairSettlements(
      life()
        .map(decodeLog)
        .filter((l): l is X402Log => l !== undefined),
    ).channels.map((l) => (l.config ? { ...l, config: other } : l));
    const rows = await book.rows(logs, clock(), noLookup);
    expect(rows.payments).toEqual([]);
    expect(rows.moves).toEqual([]);
    expect(rows.events).toHaveLength(9);
  });
});
