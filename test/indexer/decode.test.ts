import { ERC_8021_MARKER, encodeBuilderCodeSuffix } from "@x402/extensions/builder-code";
import { encodeAbiParameters, pad, toEventSelector } from "viem";
import { describe, expect, it } from "vitest";
import { X402_EXACT_PROXY_ADDRESS, X402_UPTO_PROXY_ADDRESS } from "../../src/chain/base.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { builderCodesOf } from "../../src/indexer/builder-codes.ts";
import type { PaymentRow, TransferRow } from "../../src/indexer/classify.ts";
import {
  AUTHORIZATION_USED_TOPIC,
  decodeLog,
  TRANSFER_TOPIC,
  UPTO_SETTLED_TOPIC,
  UPTO_SETTLED_WITH_PERMIT_TOPIC,
  type UsdcLog,
} from "../../src/indexer/decode.ts";
import { itemListings } from "../../src/indexer/discovery.ts";
import { WalletBook } from "../../src/indexer/funding.ts";
import { MalformedLogError, type RawLog } from "../../src/indexer/raw-log.ts";
import { pairSettlements } from "../../src/indexer/settlements.ts";

const A = "0x00000000000000000000000000000000000000aa";
const B = "0x00000000000000000000000000000000000000bb";
const C = "0x00000000000000000000000000000000000000cc";
const topic = (address: string) => pad(address as `0x${string}`, { size: 32 });

function raw(fields: Partial<RawLog> & Pick<RawLog, "topics">): RawLog {
  return {
    address: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
    data: "0x",
    blockNumber: "0x10",
    blockHash: `0x${"ab".repeat(32)}`,
    transactionHash: `0x${"01".repeat(32)}`,
    transactionIndex: "0x0",
    logIndex: "0x0",
    ...fields,
  };
}

describe("log decoding", () => {
  it("uses the event signatures of Transfer, AuthorizationUsed and the upto proxy's Settled", () => {
    expect(TRANSFER_TOPIC).toBe(toEventSelector("Transfer(address,address,uint256)"));
    expect(AUTHORIZATION_USED_TOPIC).toBe(toEventSelector("AuthorizationUsed(address,bytes32)"));
    expect(UPTO_SETTLED_TOPIC).toBe(toEventSelector("Settled()"));
    expect(UPTO_SETTLED_WITH_PERMIT_TOPIC).toBe(toEventSelector("SettledWithPermit()"));
  });

  it("decodes Settled from the Permit2 proxies only, each as its scheme", () => {
    const proxy = X402_UPTO_PROXY_ADDRESS.toLowerCase();
    for (const sig of [UPTO_SETTLED_TOPIC, UPTO_SETTLED_WITH_PERMIT_TOPIC]) {
      expect(decodeLog(raw({ address: proxy, topics: [sig], logIndex: "0x3" }))).toMatchObject({
        kind: "proxy",
        scheme: "upto",
        logIndex: 3,
        block: 16,
      });
      expect(decodeLog(raw({ address: X402_EXACT_PROXY_ADDRESS, topics: [sig] }))).toMatchObject({
        kind: "proxy",
        scheme: "exact",
      });
      // Any contract may emit an event of that name.
      expect(decodeLog(raw({ address: C, topics: [sig] }))).toBeUndefined();
      expect(() => decodeLog(raw({ address: proxy, topics: [sig, topic(A)] }))).toThrow(MalformedLogError);
    }
  });

  it("decodes the fixed layouts into lower-case addresses and exact amounts", () => {
    const transfer = decodeLog(
      raw({
        topics: [TRANSFER_TOPIC, topic(A.toUpperCase().replace("0X", "0x")), topic(B)],
        data: encodeAbiParameters([{ type: "uint256" }], [123_456_789_012n]),
        blockTimestamp: "0x6af6da43",
        logIndex: "0x7",
      }),
    );
    expect(transfer).toMatchObject({
      kind: "transfer",
      from: A,
      to: B,
      value: 123_456_789_012n,
      block: 16,
      logIndex: 7,
      blockTime: 0x6af6da43,
    });
    const auth = decodeLog(raw({ topics: [AUTHORIZATION_USED_TOPIC, topic(A), `0x${"99".repeat(32)}`] }));
    expect(auth).toMatchObject({ kind: "authorization", authorizer: A, blockTime: undefined });
    expect(decodeLog(raw({ topics: [`0x${"12".repeat(32)}`] }))).toBeUndefined();
    expect(decodeLog(raw({ topics: [TRANSFER_TOPIC, topic(A), topic(B)], removed: true }))).toBeUndefined();
  });

  it("rejects logs that do not have the layout their topic promises", () => {
    expect(() => decodeLog(raw({ topics: [TRANSFER_TOPIC, topic(A)] }))).toThrow(MalformedLogError);
    expect(() => decodeLog(raw({ topics: [TRANSFER_TOPIC, topic(A), topic(B)], data: "0x01" }))).toThrow(
      MalformedLogError,
    );
    expect(() =>
      decodeLog(
        raw({ topics: [TRANSFER_TOPIC, `0x${"ff".repeat(32)}`, topic(B)], data: `0x${"0".repeat(64)}` }),
      ),
    ).toThrow(/not an address/);
  });
});

describe("settlement pairing", () => {
  const position = { block: 5, blockHash: "0xh", blockTime: undefined };
  const auth = (tx: string, logIndex: number, authorizer: string): UsdcLog => ({
    kind: "authorization",
    ...position,
    tx,
    logIndex,
    authorizer,
  });
  const transfer = (tx: string, logIndex: number, from: string, to: string, value = 1n): UsdcLog => ({
    kind: "transfer",
    ...position,
    tx,
    logIndex,
    from,
    to,
    value,
  });

  it("pairs AuthorizationUsed with the Transfer right after it from the same authorizer, several per transaction", () => {
    const paired = pairSettlements([
      transfer("0x1", 0, "0x0000000000000000000000000000000000000000", A), // a mint
      auth("0x2", 1, A),
      transfer("0x2", 2, A, B),
      auth("0x2", 3, B),
      transfer("0x2", 4, B, C),
      auth("0x3", 5, A), // its Transfer is from someone else: not a settlement
      transfer("0x3", 6, C, B),
      auth("0x4", 7, A), // no Transfer at all (cancelled elsewhere, another token's layout)
      transfer("0x5", 8, A, C), // a plain transfer
    ]);
    expect(paired.settlements.map((s) => [s.transfer.tx, s.transfer.logIndex])).toEqual([
      ["0x2", 2],
      ["0x2", 4],
    ]);
    expect(paired.transfers.map((t) => t.logIndex)).toEqual([0, 6, 8]);
    expect(paired.unpaired).toBe(2);
    expect(paired.settlements.every((s) => s.scheme === "exact")).toBe(true);
  });

  it("pairs the upto proxy's Settled with the Transfer just before it in its transaction", () => {
    const settled = (tx: string, logIndex: number): UsdcLog => ({
      kind: "proxy",
      scheme: "upto",
      ...position,
      tx,
      logIndex,
    });
    const paired = pairSettlements([
      transfer("0x1", 0, A, B, 370_000n),
      settled("0x1", 1),
      // A batch: two settlements in one transaction.
      transfer("0x2", 2, A, C, 5n),
      settled("0x2", 3),
      transfer("0x2", 4, B, C, 6n),
      settled("0x2", 5),
      settled("0x3", 6), // nothing moved before it in its transaction
      transfer("0x4", 7, C, A), // a plain transfer, then a Settled of another transaction
      settled("0x5", 8),
      auth("0x6", 9, A), // an exact settlement's Transfer is not taken twice
      transfer("0x6", 10, A, B),
      settled("0x6", 11),
    ]);
    expect(paired.settlements.map((s) => [s.transfer.tx, s.transfer.logIndex, s.scheme])).toEqual([
      ["0x1", 0, "upto"],
      ["0x2", 2, "upto"],
      ["0x2", 4, "upto"],
      ["0x6", 10, "exact"],
    ]);
    expect(paired.transfers.map((t) => t.logIndex)).toEqual([7]);
    expect(paired.unpaired).toBe(3);
  });
});

describe("funding edges", () => {
  const payment = (payer: string, payTo: string, block: number) => ({ payer, payTo, block }) as PaymentRow;
  const move = (from: string, to: string, block: number) => ({ from, to, block }) as TransferRow;

  it("keeps a transfer when either side was seen in a payment at or before its block, however batches fall", () => {
    const transfers = [move(B, A, 9), move(B, A, 10), move(C, "0xdd", 11), move("0xee", C, 30)];
    const whole = new WalletBook();
    whole.addPayments([payment(A, B, 10), payment(C, B, 30)]);
    const kept = whole.select(transfers);
    expect(kept).toEqual([move(B, A, 10), move("0xee", C, 30)]);

    // The same blocks in two batches give the same rows.
    const split = new WalletBook();
    split.addPayments([payment(A, B, 10)]);
    const first = split.select(transfers.filter((t) => t.block <= 20));
    split.addPayments([payment(C, B, 30)]);
    const second = split.select(transfers.filter((t) => t.block > 20));
    expect([...first, ...second]).toEqual(kept);

    // A book loaded from the analytics database remembers first blocks.
    const loaded = WalletBook.from([{ wallet: A, first_block: 10n }]);
    expect(loaded.select([move(A, C, 9), move(A, C, 10)])).toEqual([move(A, C, 10)]);
  });

  it("names the payers paying for the first time, a merchant's first payment as payer too, in any batch split", () => {
    const book = new WalletBook();
    expect([...book.newPayers([payment(A, B, 12), payment(A, C, 10), payment(C, B, 11)])]).toEqual([
      [A, 10],
      [C, 11],
    ]);
    // newPayers reads the book without changing it.
    expect(book.size).toBe(0);
    book.addPayments([payment(A, B, 10)]);
    // A paid already; B was only paid, so its first payment starts its funding history.
    expect([...book.newPayers([payment(A, C, 20), payment(B, C, 21)])]).toEqual([[B, 21]]);
    expect(book.first(B)).toBe(10);

    // Loaded from the analytics database: whether a wallet ever paid is remembered.
    const loaded = WalletBook.from([
      { wallet: A, first_block: 10n, paid: true },
      { wallet: B, first_block: 10n, paid: false },
    ]);
    expect([...loaded.newPayers([payment(A, C, 20), payment(B, C, 21)])]).toEqual([[B, 21]]);
    loaded.addPayments([payment(B, C, 21)]);
    expect([...loaded.newPayers([payment(B, A, 30)])]).toEqual([]);
  });
});

describe("facilitator registry", () => {
  const registry = FacilitatorRegistry.base();

  it("knows a signer from its start date on, and labels unconfirmed senders", () => {
    const coinbase = "0xdbdf3d8ed80f84c35d01c6c9f9271761bad90ba6";
    const since = Date.parse("2025-05-05T00:00:00Z") / 1000;
    expect(registry.judge(coinbase, since)).toMatchObject({
      known: true,
      signer: { facilitator: "coinbase" },
    });
    expect(registry.judge(coinbase, since - 1)).toEqual({ known: false, reason: "before_since" });
    expect(registry.judge("0x0be1a164e2354875e001bb7fa4cf9f6d6f0a6fa6", since)).toEqual({
      known: false,
      reason: "unknown_sender",
      label: "true402 (proposed, not merged upstream)",
    });
    expect(registry.earliestSince()).toBeLessThanOrEqual(since);
  });

  it("takes extra signers valid from the first block, in any case, and rejects what is not an address", () => {
    const devnet = registry.withSigners(["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"]);
    expect(devnet.judge("0x70997970c51812dc3a010c7d01b50e0d17dc79c8", 0)).toMatchObject({ known: true });
    expect(registry.judge("0x70997970c51812dc3a010c7d01b50e0d17dc79c8", 0)).toMatchObject({ known: false });
    expect(devnet.earliestSince()).toBe(registry.earliestSince());
    expect(() => registry.withSigners(["0x1234"])).toThrow(/not an address/);
  });
});

describe("discovery items", () => {
  it("reads v2 amounts and v1 maxAmountRequired, the method from the Bazaar extension or the v1 output schema", () => {
    const usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
    expect(
      itemListings({
        resource: "https://a.test/x",
        accepts: [
          { network: "eip155:8453", asset: usdc, amount: "1500", payTo: A.toUpperCase().replace("0X", "0x") },
        ],
        extensions: { bazaar: { info: { input: { method: "post" } } } },
        description: "  X  ",
      }),
    ).toEqual([
      { payTo: A, resource: "https://a.test/x", method: "POST", priceUsd: 0.0015, description: "  X  " },
    ]);
    expect(
      itemListings({
        resource: "https://a.test/y",
        accepts: [
          {
            network: "base",
            asset: usdc,
            maxAmountRequired: "20000",
            payTo: A,
            outputSchema: { input: { method: "GET" } },
          },
        ],
      }),
    ).toEqual([{ payTo: A, resource: "https://a.test/y", method: "GET", priceUsd: 0.02, description: "" }]);
    // Other networks, other assets, amounts that are not integers, resources that are not web URLs.
    for (const item of [
      {
        resource: "https://a.test/z",
        accepts: [{ network: "eip155:84532", asset: usdc, amount: "1", payTo: A }],
      },
      {
        resource: "https://a.test/z",
        accepts: [{ network: "eip155:8453", asset: B, amount: "1", payTo: A }],
      },
      {
        resource: "https://a.test/z",
        accepts: [{ network: "eip155:8453", asset: usdc, amount: "0.5", payTo: A }],
      },
      {
        resource: "ftp://a.test/z",
        accepts: [{ network: "eip155:8453", asset: usdc, amount: "1", payTo: A }],
      },
      { resource: "https://a.test/z", accepts: "nope" },
      null,
    ]) {
      expect(itemListings(item)).toEqual([]);
    }
  });
});

describe("builder codes", () => {
  const calldata = `0xe3ee160e${"00".repeat(64)}`;
  it("reads the ERC-8021 codes a settlement's input ends with, keeps the spec's codes only, and none from an input without", () => {
    const suffix = encodeBuilderCodeSuffix({
      a: "shop_app",
      w: "x402_merchants",
      s: ["agent", "cdp_sdk_client"],
    });
    expect(builderCodesOf(`${calldata}${suffix.slice(2)}`)).toEqual({
      app: "shop_app",
      wallet: "x402_merchants",
      services: "agent,cdp_sdk_client",
    });
    // Upper-case hex, as some nodes answer it, and the facilitator's code alone.
    const only = encodeBuilderCodeSuffix({ w: "fac" }).slice(2).toUpperCase();
    expect(builderCodesOf(`${calldata}${only}`)).toEqual({ app: null, wallet: "fac", services: null });
    // A code outside [a-z0-9_]{1,32} is anyone's bytes, not a code: dropped, and a suffix of nothing else is none.
    const odd = encodeBuilderCodeSuffix({ a: "Shop,App", s: ["ok_code", "<b>"] });
    expect(builderCodesOf(`${calldata}${odd.slice(2)}`)).toEqual({
      app: null,
      wallet: null,
      services: "ok_code",
    });
    expect(
      builderCodesOf(`${calldata}${encodeBuilderCodeSuffix({ a: "x".repeat(33) }).slice(2)}`),
    ).toBeUndefined();
    expect(builderCodesOf(calldata)).toBeUndefined();
    expect(builderCodesOf(undefined)).toBeUndefined();
    // The marker alone, or a length that runs before the input's start: no suffix.
    expect(builderCodesOf(`0x${ERC_8021_MARKER}`)).toBeUndefined();
    expect(builderCodesOf(`0x00ffff02${ERC_8021_MARKER}`)).toBeUndefined();
  });

  it("reads a suffix the facilitator capped, and reads nothing, without throwing, from suffixes built to break it", () => {
    const capped = encodeBuilderCodeSuffix({ a: "shop_app", w: "x402_merchants", s: ["x".repeat(32)] });
    expect(builderCodesOf(`${calldata}${capped.slice(2)}`)).toEqual({
      app: "shop_app",
      wallet: "x402_merchants",
      services: "x".repeat(32),
    });
    const trailer = (cbor: string, length = cbor.length / 2, schema = "02") =>
      `${calldata}${cbor}${length.toString(16).padStart(4, "0")}${schema}${ERC_8021_MARKER}`;
    const body = capped.slice(2, -38);
    for (const input of [
      trailer(body, 0xffff), // a length past the input's start
      trailer(body, 0), // a length short of the codes
      trailer(body, body.length / 2 - 1),
      trailer(body, undefined, "01"), // another schema
      trailer(`bf${body.slice(2)}`), // an indefinite-length map
      trailer(`b8ff${body.slice(2)}`), // a map claiming 255 entries
      trailer("a1617399ffff"), // an array claiming 65,535 codes
      trailer(`a1617a${"ff".repeat(4)}`), // a string claiming 4 GiB
      trailer(`a161${"ff".repeat(2)}`), // a key that is no key
      `${calldata}zz000102${ERC_8021_MARKER}`, // not hex
      `${calldata}${"GG".repeat(3)}02${ERC_8021_MARKER}`, // a length that is not hex
    ]) {
      expect(() => builderCodesOf(input), input).not.toThrow();
      expect(builderCodesOf(input), input).toBeUndefined();
    }
    // A string claiming more bytes than the suffix holds is read as the bytes there are (the SDK's parser): a
    // claim like any other, kept only if it is a code the spec allows.
    expect(builderCodesOf(trailer(body.slice(0, -10)))).toEqual({
      app: "shop_app",
      wallet: "x402_merchants",
      services: "x".repeat(27),
    });
    expect(builderCodesOf(trailer(`a1617381${"78ff"}${"61".repeat(10)}`))?.services).toBe("a".repeat(10));
    expect(builderCodesOf(trailer(`a1617381${"78ff"}${"ff".repeat(10)}`))).toBeUndefined();
  });
});
