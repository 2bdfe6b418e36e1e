/**
 * Solana's payment channels read by `index --chain solana` (issue 86 item 8): transactions built to the
 * payment-channels program's published layout (`test/helpers/solana-recorded.ts`), served by the devnet's RPC front,
 * read through the reader into the store. `upto` settles a one-request channel with `settleAndSeal` and a sealed
 * `distribute` (scheme_upto_svm.md); `batch-settlement` claims with `settle` and `distribute` on an open channel and
 * closes with `settleAndSeal` (scheme_batch_settlement_svm.md). Each payout leg is a payment from the channel's payer,
 * as x402scan counts them; deposits and refunds are transfers through the channel, which the provenance screens walk.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { SOLANA_RECORD } from "../../../src/chain/chains.ts";
import { FacilitatorRegistry } from "../../../src/chain/facilitators.ts";
import { PAYMENT_CHANNELS_PROGRAM, SOLANA_USDC_MINT } from "../../../src/chain/solana/constants.ts";
import { indexSolana } from "../../../src/indexer/index.ts";
import { channelMoves } from "../../../src/indexer/solana/channels.ts";
import type { ParsedTransaction } from "../../../src/indexer/solana/decode.ts";
import { ReportService } from "../../../src/reports/index.ts";
import { tempAnalytics } from "../../helpers/data.ts";
import { solKey } from "../../helpers/solana.ts";
import {
  ataOf,
  batch,
  type Channel,
  channelOf,
  closeAccount,
  createEscrow,
  distributeIx,
  type Holding,
  memoIx,
  openIx,
  RecordedSolana,
  settleAndSealIx,
  settleIx,
  TREASURY_OWNER,
  transferChecked,
  transferIx,
  voucherIx,
} from "../../helpers/solana-recorded.ts";

const F = solKey("channel facilitator");
const M = solKey("channel merchant");
const R = solKey("receiver authorizer");
const B = solKey("upto buyer");
const B2 = solKey("batch buyer");
const B3 = solKey("buyer paying itself");
const X = solKey("someone cranking distribute");
const IMPOSTOR = solKey("a look-alike program");
const BATCH_MEMO = `x402:batch-settlement:svm:rcvauth:v1:${R}`;

const solana = new RecordedSolana(300_000_000n, Math.floor(Date.now() / 1000) - 3_600);
const sig: Record<string, string> = {};
let acct: Record<"b" | "b2" | "b3" | "m" | "f" | "t", string>;
let c1: Channel;
let c2: Channel;
let analytics: Analytics;

const holdings = (entries: [string, string, bigint | undefined, bigint | undefined][]) =>
  new Map<string, Holding>(entries.map(([account, owner, pre, post]) => [account, { owner, pre, post }]));

/** x402's shape for both schemes: the facilitator is payee (zero share) and rent payer, `payTo` the one recipient. */
const channel = (payer: string, payTo: string, salt: bigint, program?: string) =>
  channelOf(
    {
      payer,
      payee: F,
      authorizedSigner: R,
      salt,
      openSlot: 300_000_000n,
      recipients: [{ recipient: payTo, bps: 10_000 }],
    },
    program,
  );

beforeAll(async () => {
  acct = {
    b: await ataOf(B),
    b2: await ataOf(B2),
    b3: await ataOf(B3),
    m: await ataOf(M),
    f: await ataOf(F),
    t: await ataOf(TREASURY_OWNER),
  };
  const { b, b2, b3, m, f, t } = acct;
  c1 = await channel(B, M, 1n);
  c2 = await channel(B2, M, 2n);
  const c4 = await channel(B3, B3, 4n);
  const idle = (...owners: [string, string][]) =>
    owners.map(([a, o]) => [a, o, 0n, 0n] as [string, string, bigint, bigint]);

  // The merchant funds the upto buyer, as in the screens' merchant_funded case: its own money comes back.
  sig.funding = solana.record(
    M,
    [transferIx(m, b, M, 1_000_000n)],
    [],
    holdings([
      [m, M, 5_000_000n, 4_000_000n],
      [b, B, 0n, 1_000_000n],
    ]),
  );
  // upto: the deposit (the buyer signs `open`, the facilitator co-signs as fee and rent payer)...
  const open1 = await openIx(c1, F, 50_000n);
  sig.open1 = solana.record(
    F,
    [open1, memoIx("a1b2c3d4e5f60718293a4b5c6d7e8f90")],
    [{ index: 0, instructions: [createEscrow(F, c1), transferChecked(b, c1.escrow, B, 50_000n)] }],
    holdings([
      [b, B, 1_000_000n, 950_000n],
      [c1.escrow, c1.address, undefined, 50_000n],
    ]),
  );
  // ...then the claim: the voucher, settleAndSeal, and the sealed distribute paying payTo and refunding the rest
  // in one Batch, the escrow closed.
  sig.claim1 = solana.record(
    F,
    [voucherIx(c1, 12_345n), settleAndSealIx(c1), await distributeIx(c1, F)],
    [
      {
        index: 2,
        instructions: [
          batch([
            transferChecked(c1.escrow, m, c1.address, 12_345n),
            transferChecked(c1.escrow, b, c1.address, 37_655n),
          ]),
          closeAccount(c1.escrow, F, c1.address),
        ],
      },
    ],
    holdings([
      [c1.escrow, c1.address, 50_000n, undefined],
      [m, M, 4_000_000n, 4_012_345n],
      [b, B, 950_000n, 987_655n],
      ...idle([f, F], [t, TREASURY_OWNER]),
    ]),
  );
  // batch-settlement: an open carrying the receiver-authorizer binding memo, a claim, then the cooperative close.
  sig.open2 = solana.record(
    F,
    [await openIx(c2, F, 100_000n), memoIx("0f1e2d3c4b5a69788796a5b4c3d2e1f0"), memoIx(BATCH_MEMO)],
    [{ index: 0, instructions: [transferChecked(b2, c2.escrow, B2, 100_000n)] }],
    holdings([
      [b2, B2, 500_000n, 400_000n],
      [c2.escrow, c2.address, undefined, 100_000n],
    ]),
  );
  sig.claim2 = solana.record(
    F,
    [voucherIx(c2, 3_000n), settleIx(c2), await distributeIx(c2, F)],
    [{ index: 2, instructions: [transferChecked(c2.escrow, m, c2.address, 3_000n)] }],
    holdings([
      [c2.escrow, c2.address, 100_000n, 97_000n],
      [m, M, 4_012_345n, 4_015_345n],
      ...idle([b2, B2], [f, F], [t, TREASURY_OWNER]),
    ]),
  );
  sig.close2 = solana.record(
    F,
    [voucherIx(c2, 4_000n), settleAndSealIx(c2), await distributeIx(c2, F)],
    [
      {
        index: 2,
        instructions: [
          batch([
            transferChecked(c2.escrow, m, c2.address, 1_000n),
            transferChecked(c2.escrow, b2, c2.address, 96_000n),
          ]),
          closeAccount(c2.escrow, F, c2.address),
        ],
      },
    ],
    holdings([
      [c2.escrow, c2.address, 97_000n, undefined],
      [m, M, 4_015_345n, 4_016_345n],
      [b2, B2, 400_000n, 496_000n],
      ...idle([f, F], [t, TREASURY_OWNER]),
    ]),
  );
  // Adversarial: a look-alike program with the distribute layout, paying the merchant from its own PDA's escrow.
  const fake = await channel(B, M, 5n, IMPOSTOR);
  sig.impostor = solana.record(
    F,
    [await distributeIx(fake, F, IMPOSTOR)],
    [{ index: 0, instructions: [transferChecked(fake.escrow, m, fake.address, 777n)] }],
    holdings([
      [fake.escrow, fake.address, 777n, 0n],
      [m, M, 4_016_345n, 4_017_122n],
      ...idle([b, B], [f, F], [t, TREASURY_OWNER]),
    ]),
  );
  // Adversarial: the program's distribute, but its escrow held by a PDA that is not the channel (of the look-alike).
  const real = await channel(B, M, 6n);
  const stranger = { ...real, escrow: fake.escrow };
  sig.strangeEscrow = solana.record(
    F,
    // (The escrow's owner signs the transfer, so the message names it: here beside a memo.)
    [await distributeIx(stranger, F), { ...memoIx("strange"), accounts: [{ address: fake.address }] }],
    [{ index: 0, instructions: [transferChecked(fake.escrow, m, fake.address, 888n)] }],
    holdings([
      [fake.escrow, fake.address, 888n, 0n],
      [m, M, 4_017_122n, 4_018_010n],
      ...idle([b, B], [f, F], [t, TREASURY_OWNER]),
    ]),
  );
  // A payer whose payTo is itself: the payout and the refund both go to its own token account.
  sig.self = solana.record(
    F,
    [voucherIx(c4, 500n), settleAndSealIx(c4), await distributeIx(c4, F)],
    [
      {
        index: 2,
        instructions: [
          batch([
            transferChecked(c4.escrow, b3, c4.address, 500n),
            transferChecked(c4.escrow, b3, c4.address, 1_500n),
          ]),
          closeAccount(c4.escrow, F, c4.address),
        ],
      },
    ],
    holdings([
      [c4.escrow, c4.address, 2_000n, undefined],
      [b3, B3, 0n, 2_000n],
      ...idle([f, F], [t, TREASURY_OWNER]),
    ]),
  );
  // Not the facilitator's: someone else cranks distribute (permissionless), naming the facilitator as rent payer.
  sig.cranked = solana.record(
    X,
    [await distributeIx(c2, F)],
    [{ index: 0, instructions: [transferChecked(c2.escrow, m, c2.address, 2_000n)] }],
    holdings([
      [c2.escrow, c2.address, 2_000n, 0n],
      [m, M, 4_018_010n, 4_020_010n],
      ...idle([b2, B2], [f, F], [t, TREASURY_OWNER]),
    ]),
  );
  await solana.start();
  analytics = await tempAnalytics();
  const registry = FacilitatorRegistry.forChain(SOLANA_RECORD).withSigners([F]);
  const summary = await indexSolana({ rpc: solana.url, analytics, registry });
  expect(summary).toMatchObject({ chain: "solana", payments: 4, transfers: 6 });
});

afterAll(async () => {
  analytics?.close();
  await solana.stop();
});

const rows = (sql: string) => analytics.all<Record<string, unknown>>(sql);

describe("Solana's payment channels, read through the reader", () => {
  it("makes one payment per distribute payout leg, from the channel's payer, its scheme told by the transaction and the channel's open", async () => {
    const payments = await rows(
      "SELECT tx_hash, log_index, facilitator, payer, pay_to, amount, scheme, transfer_method FROM payments ORDER BY block_number, log_index",
    );
    expect(payments).toEqual([
      // upto: the sealed distribute's Batch pays payTo (its first instruction, number 3 after the 3 top-level
      // ones) and refunds the payer (number 4).
      {
        tx_hash: sig.claim1,
        log_index: 3,
        facilitator: F,
        payer: B,
        pay_to: M,
        amount: 12_345n,
        scheme: "upto",
        transfer_method: "channel",
      },
      {
        tx_hash: sig.claim2,
        log_index: 3,
        facilitator: F,
        payer: B2,
        pay_to: M,
        amount: 3_000n,
        scheme: "batch-settlement",
        transfer_method: "channel",
      },
      // The cooperative close holds settleAndSeal, as upto's settlement does: its channel's open says batch-settlement.
      {
        tx_hash: sig.close2,
        log_index: 3,
        facilitator: F,
        payer: B2,
        pay_to: M,
        amount: 1_000n,
        scheme: "batch-settlement",
        transfer_method: "channel",
      },
      // A payer paying itself is a payment (the self_payment screen's to flag); its refund is not (below).
      {
        tx_hash: sig.self,
        log_index: 3,
        facilitator: F,
        payer: B3,
        pay_to: B3,
        amount: 500n,
        scheme: "upto",
        transfer_method: "channel",
      },
    ]);
  });

  it("keeps deposits, refunds and the payers' funding as transfers through the channel, and nothing of what is not the program's or the facilitator's", async () => {
    const transfers = await rows(
      "SELECT tx_hash, log_index, from_address, to_address, amount FROM transfers ORDER BY block_number, log_index",
    );
    expect(transfers).toEqual([
      { tx_hash: sig.funding, log_index: 0, from_address: M, to_address: B, amount: 1_000_000n },
      // open's CPIs: the escrow's creation (2), the deposit (3), into the escrow the channel's PDA owns.
      { tx_hash: sig.open1, log_index: 3, from_address: B, to_address: c1.address, amount: 50_000n },
      { tx_hash: sig.claim1, log_index: 4, from_address: c1.address, to_address: B, amount: 37_655n },
      { tx_hash: sig.open2, log_index: 3, from_address: B2, to_address: c2.address, amount: 100_000n },
      { tx_hash: sig.close2, log_index: 4, from_address: c2.address, to_address: B2, amount: 96_000n },
      {
        tx_hash: sig.self,
        log_index: 4,
        from_address: (await channel(B3, B3, 4n)).address,
        to_address: B3,
        amount: 1_500n,
      },
    ]);
    // The look-alike program's payout, a payout from an escrow the channel does not own (the program refuses
    // one: the escrow must be the channel's associated account), and a distribute no known facilitator paid for
    // (x402scan counts only facilitator-signed transfers) are in neither table.
    const all = await rows("SELECT tx_hash FROM payments UNION ALL SELECT tx_hash FROM transfers");
    for (const name of ["impostor", "strangeEscrow", "cranked"])
      expect(all.map((r) => r.tx_hash)).not.toContain(sig[name]);
  });

  it("is idempotent: a second run over the same slots adds nothing", async () => {
    const registry = FacilitatorRegistry.forChain(SOLANA_RECORD).withSigners([F]);
    await indexSolana({ rpc: solana.url, analytics, registry });
    const [p, t] = await Promise.all([
      rows("SELECT count(*) AS n FROM payments"),
      rows("SELECT count(*) AS n FROM transfers"),
    ]);
    expect([p[0]?.n, t[0]?.n]).toEqual([4n, 6n]);
  });

  it("reports the merchant's channel payments by buyer, the one it funded flagged through the channel", async () => {
    const service = new ReportService(analytics, { publicUrl: "https://reports.test", chain: SOLANA_RECORD });
    const { report } = await service.report(M);
    expect(report).toMatchObject({ chain: "solana", address: M, tx: 3, buyers: 2 });
    // The upto buyer's money was the merchant's: merchant to buyer, buyer into its channel, the channel to the
    // merchant. The batch buyer's payments pass.
    expect(report).toMatchObject({ real_tx: 2, real_buyers: 1 });
    expect(Object.keys(report.flags)).toEqual(["merchant_funded"]);
    expect(report.flags.merchant_funded?.tx).toBe(1);
    expect(report.schemes).toMatchObject({ upto: { tx: 1 }, "batch-settlement": { tx: 2, real_tx: 2 } });
  });
});

describe("the channel decoder", () => {
  /** getTransaction's answer, as the reader gets it. */
  const fetched = async (signature: string): Promise<ParsedTransaction> => {
    const response = await fetch(solana.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "getTransaction",
        params: [signature, { encoding: "jsonParsed", maxSupportedTransactionVersion: 0 }],
      }),
    });
    return ((await response.json()) as { result: ParsedTransaction }).result;
  };

  it("reads a Batch the RPC parsed (mainnet's `batch` with its instructions) as it reads one left raw", async () => {
    const raw = await fetched(sig.claim1 as string);
    const inner = raw.meta?.innerInstructions?.[0]?.instructions ?? [];
    expect(inner[0]).toMatchObject({
      programId: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
      data: expect.any(String),
    });
    const parsed = structuredClone(raw);
    const legs = [
      [acct.m, 12_345],
      [acct.b, 37_655],
    ].map(([destination, amount]) => ({
      type: "transferChecked",
      info: {
        source: c1.escrow,
        mint: SOLANA_USDC_MINT,
        destination,
        authority: c1.address,
        tokenAmount: { amount: String(amount), decimals: 6 },
      },
    }));
    (parsed.meta?.innerInstructions?.[0]?.instructions as unknown[])[0] = {
      program: "spl-token",
      programId: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
      parsed: { type: "batch", info: { instructions: legs } },
      stackHeight: 2,
    };
    const strip = (read: ReturnType<typeof channelMoves>) => ({
      payments: read.payments.map((p) => [p.index, p.from, p.to, p.amount, p.scheme]),
      moves: read.moves.map((m) => [m.index, m.from, m.to, m.amount]),
    });
    const expected = {
      payments: [[3, B, M, 12_345n, "upto"]],
      moves: [[4, c1.address, B, 37_655n]],
    };
    expect(strip(channelMoves(raw, SOLANA_USDC_MINT))).toEqual(expected);
    expect(strip(channelMoves(parsed, SOLANA_USDC_MINT))).toEqual(expected);
  });

  it("reads nothing from a transaction that failed, or that holds no instruction of the program", async () => {
    const failed = structuredClone(await fetched(sig.claim1 as string));
    (failed.meta as { err: unknown }).err = { InstructionError: [2, { Custom: 2408 }] };
    expect(channelMoves(failed, SOLANA_USDC_MINT).payments).toEqual([]);
    const elsewhere = structuredClone(await fetched(sig.claim1 as string));
    for (const ix of elsewhere.transaction.message.instructions)
      if (ix.programId === PAYMENT_CHANNELS_PROGRAM) ix.programId = IMPOSTOR;
    expect(channelMoves(elsewhere, SOLANA_USDC_MINT)).toEqual({
      payments: [],
      moves: [],
      batchChannels: [],
      payerAccounts: [],
    });
  });
});
