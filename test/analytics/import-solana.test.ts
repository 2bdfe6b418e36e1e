import { afterEach, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { ImportError, importNdjson } from "../../src/analytics/import.ts";
import { addr, ndjsonFile, payment, tempAnalytics } from "../helpers/data.ts";
import {
  SOL_END_SLOT,
  SOL_USDC,
  solCheckpoint,
  solKey,
  solPayment,
  solSignature,
  solTime,
  solTransfer,
} from "../helpers/solana.ts";

/**
 * Solana's lines (issue 86 item 3): base58 keys and signatures kept as written (never lower-cased: two keys that
 * differ in case are two wallets), each line held to its chain's address form, USDC's mint the default asset, a
 * slot dated by its own time with skipped slots, one chain a file.
 */
let analytics: Analytics;
afterEach(() => analytics?.close());

const buyer = solKey("buyer");
const shop = solKey("shop");
const week = () => [
  solPayment({ payer: buyer, payTo: shop, amount: 10_000 }),
  solPayment({ payer: buyer, payTo: shop, amount: 20_000, slot: SOL_END_SLOT - 997 }),
  solPayment({ payer: solKey("other"), payTo: shop, amount: 5_000, slot: SOL_END_SLOT - 50_000 }),
  solTransfer(solKey("funder"), buyer, 1_000_000),
  { type: "balance", chain: "solana", wallet: buyer, block_number: SOL_END_SLOT - 300_000, amount: "970000" },
  {
    type: "hub",
    chain: "solana",
    address: solKey("exchange"),
    label: "An Exchange",
    kind: "exchange",
    source: "https://example.com/labels",
  },
  { type: "merchant", address: shop, name: "shop.example" },
  solCheckpoint(),
];

async function refusal(lines: object[]): Promise<string> {
  analytics = await tempAnalytics();
  const error = await importNdjson(analytics, ndjsonFile(lines)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportError);
  const { line, reason } = error as ImportError;
  return `line ${line}: ${reason}`;
}

describe("import of Solana lines", () => {
  it("stores them under solana with every key as written, the mint the default asset, whichever way it goes", async () => {
    const lines = week();
    analytics = await tempAnalytics();
    // A fresh store takes the bulk way; the same file again the exact way (its blocks are stored): nothing added.
    await importNdjson(analytics, ndjsonFile(lines));
    const again = await importNdjson(analytics, ndjsonFile(lines));
    expect(again.payment.added).toBe(0);
    const rows = await analytics.all<Record<string, unknown>>(
      "SELECT chain, tx_hash, payer, pay_to, facilitator, asset, block_number, epoch(block_time)::BIGINT AS t FROM payments ORDER BY block_number, amount",
    );
    expect(rows).toHaveLength(3);
    const first = rows[2] as Record<string, unknown>;
    expect(first).toMatchObject({
      chain: "solana",
      payer: buyer,
      pay_to: shop,
      facilitator: "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4",
      asset: SOL_USDC,
      block_number: BigInt(SOL_END_SLOT - 997),
      t: BigInt(solTime(SOL_END_SLOT - 997)),
    });
    expect(first.tx_hash).toBe((lines[1] as unknown as { tx_hash: string }).tx_hash);
    expect(await analytics.all("SELECT wallet FROM balances")).toEqual([{ wallet: buyer }]);
    expect(await analytics.all("SELECT address FROM hub_labels")).toEqual([{ address: solKey("exchange") }]);
    expect(await analytics.all("SELECT address, name FROM merchants")).toEqual([
      { address: shop, name: "shop.example" },
    ]);
    expect(await analytics.all("SELECT address, chain FROM merchant_chains")).toEqual([
      { address: shop, chain: "solana" },
    ]);
  });

  it("keeps two keys that differ only in case as two wallets", async () => {
    const upper = `${"7".repeat(10)}ABCDEFGHJKLMNPQRSTUVWXYZabcdefgh`;
    const lower = "7".repeat(10) + "ABCDEFGHJKLMNPQRSTUVWXYZabcdefgh".toLowerCase().replaceAll("l", "k");
    analytics = await tempAnalytics();
    await importNdjson(
      analytics,
      ndjsonFile([
        solPayment({ payer: upper, payTo: shop, amount: 1 }),
        solPayment({ payer: lower, payTo: shop, amount: 2 }),
        solCheckpoint(),
      ]),
    );
    const payers = await analytics.all<{ payer: string }>("SELECT payer FROM payments ORDER BY amount");
    expect(payers.map((p) => p.payer)).toEqual([upper, lower]);
  });

  it("holds each line to its chain's address and signature form", async () => {
    expect(await refusal([solPayment({ payer: addr("evm-buyer"), payTo: shop, amount: 1 })])).toBe(
      'line 1: "payer" must be an address: 0x followed by 40 hex digits (on Solana: a base58 public key)',
    );
    expect(await refusal([{ ...payment({ payer: buyer, payTo: addr("s"), amount: 1 }) }])).toBe(
      'line 1: "payer" must be an address: 0x followed by 40 hex digits (on Solana: a base58 public key)',
    );
    expect(
      await refusal([
        { ...solPayment({ payer: buyer, payTo: shop, amount: 1 }), tx_hash: `0x${"1".repeat(64)}` },
      ]),
    ).toBe(
      `line 1: "tx_hash" must be 0x followed by 64 hex digits (on Solana: a transaction's base58 signature)`,
    );
    // A base58 key with a character base58 leaves out (l) is no key.
    expect(await refusal([solPayment({ payer: buyer, payTo: `l${shop.slice(1)}`, amount: 1 })])).toMatch(
      /^line 1: "pay_to" must be an address/,
    );
    expect(
      await refusal([
        {
          type: "channel_event",
          chain: "solana",
          tx_hash: solSignature(),
          log_index: 0,
          block_number: 1,
          block_time: 1,
          event: "created",
          channel: "x",
          amount: "0",
        },
      ]),
    ).toMatch(/EVM escrow: Solana's channels are payment and transfer lines/);
  });

  it("takes skipped slots and shared seconds, refuses a time that goes back, and one chain a file", async () => {
    const at = (slot: number, time: number) => ({
      ...solPayment({ payer: buyer, payTo: shop, amount: 1, slot }),
      block_time: time,
    });
    analytics = await tempAnalytics();
    // Slots 10 and 11 share a second; 12 to 14 were skipped.
    await importNdjson(
      analytics,
      ndjsonFile([at(10, 1_790_000_000), at(11, 1_790_000_000), at(15, 1_790_000_002)]),
    );
    expect((await analytics.one<{ n: bigint }>("SELECT count(*) AS n FROM payments"))?.n).toBe(3n);
    analytics.close();
    expect(await refusal([at(10, 1_790_000_005), at(11, 1_790_000_004)])).toBe(
      "line 2: block 11 has time 1790000004, before a lower block's 1790000005: on Solana times never go back",
    );
    expect(
      await refusal([
        solPayment({ payer: buyer, payTo: shop, amount: 1 }),
        payment({ payer: addr("b"), payTo: addr("s"), amount: 1 }),
      ]),
    ).toMatch(/^line 2: "chain" is "base", but line 1 is of solana: one chain a file/);
  });
});
