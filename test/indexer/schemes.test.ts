/**
 * Every x402 settlement shape on a devnet, indexed: exact through EIP-3009 and through the Permit2 proxy,
 * upto, and a batch-settlement channel (an ERC-3009 deposit, two claims, a sweep, a refund). Each payment
 * keeps its scheme; a claim is its payer's payment to the receiver; the deposit, sweep and refund are no
 * payments, and the escrow and its collector are never merchants. The report counts exactly what was
 * claimed for that payer and nothing of the refund, beside the same payer's exact payment. Each payment's ERC-8021
 * builder codes too: the project's facilitator appends its own to what it settles, and a kit merchant's code and
 * a buyer's service code reach the chain when the SDK's client with the builder-code extension pays it; the
 * merchant's evidence and the flag feed name the app, with the caveat.
 */
import type { PaymentRequirements } from "@x402/core/types";
import { BuilderCodeClientExtension } from "@x402/extensions/builder-code";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import {
  BASE_CHAIN_ID,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  X402_BATCH_SETTLEMENT_ADDRESS,
} from "../../src/chain/base.ts";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { usdcAbi } from "../../src/chain/usdc.ts";
import { escapeText } from "../../src/common/html.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { inProcessClient } from "../../src/facilitator/index.ts";
import type { SenderChoice } from "../../src/indexer/block-data.ts";
import { runIndexer } from "../../src/indexer/index.ts";
import { ReportService } from "../../src/reports/index.ts";
import { APPS_CAVEAT } from "../../src/reports/model.ts";
import { renderEvidencePage } from "../../src/reports/render/evidence-page.ts";
import { startMiner } from "../helpers/chain.ts";
import {
  type ChannelConfigOf,
  channelConfig,
  claimChannel,
  computeChannelId,
  depositErc3009,
  facilitatorOf,
  payExactPermit2,
  walletOf,
} from "../helpers/channels.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { GENESIS, openTempAnalytics, startTestDevnet } from "../helpers/indexer.ts";
import { echo, startMerchant, testMerchant } from "../helpers/merchant.ts";
import { rpc } from "../helpers/settle.ts";
import {
  newMerchant,
  pay,
  payUpto,
  requirementsFor,
  uptoRequirementsFor,
  x402ClientFor,
} from "../helpers/x402.ts";

let devnet: Devnet;
let head: number;
let depositBlock: number;
let config: ChannelConfigOf;
let channelId: string;
let fundedWallet: DevnetAccount;
const merchant = newMerchant();
const M = merchant.toLowerCase();
const DEPOSIT = 2_000_000n;
const CLAIMS = [300_000n, 450_000n]; // cumulative 300,000 then 750,000
const REFUND = 1_000_000n;
/** The facilitator's builder code, the kit merchant's, and the buyer's service code. */
const CODES = { wallet: "test_facilitator", app: "test_shop", service: "test_agent" };

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 3 });
  const miner = startMiner(devnet);
  const ledger = await openTestDatabase(LEDGER_KIND);
  let facilitator: Facilitator | undefined;
  try {
    facilitator = await devnetFacilitator(devnet, ledger.db, { builderCode: CODES.wallet });
    const ours = facilitator;
    const [b0, b1, b2] = devnet.buyers as [DevnetAccount, DevnetAccount, DevnetAccount];
    const settle = async (payment: Awaited<ReturnType<typeof pay>>, r: PaymentRequirements, take: string) => {
      expect(await ours.verify(payment, r)).toMatchObject({ isValid: true });
      expect(await ours.settle(payment, { ...r, amount: take })).toMatchObject({ success: true });
    };
    // exact (EIP-3009) and upto through the project's facilitator
    const exact = requirementsFor(merchant, "5000");
    await settle(await pay(b0, exact), exact, "5000");
    const upto = uptoRequirementsFor(merchant, "1000000", ours.address);
    await settle(await payUpto(b1, upto), upto, "370000");
    // exact through the Permit2 proxy and a channel, through the stock SDK's facilitators
    const f = facilitatorOf(devnet);
    await payExactPermit2(devnet, f, b2, merchant, 250_000n);
    config = channelConfig(devnet, b0.address, merchant);
    channelId = computeChannelId(config, BASE_CHAIN_ID).toLowerCase();
    depositBlock = Number((await depositErc3009(devnet, f, b0, config, DEPOSIT)).blockNumber);
    await claimChannel(f, b0, config, CLAIMS[0] as bigint);
    await claimChannel(f, b0, config, (CLAIMS[0] as bigint) + (CLAIMS[1] as bigint));
    await f.escrow("settle", [merchant, devnet.usdc]);
    await f.escrow("refund", [config, REFUND]);
    // A merchant (buyer 2) funds a fresh wallet that opens a channel paying the merchant back.
    const key = generatePrivateKey();
    const funded = privateKeyToAccount(key);
    fundedWallet = { address: funded.address, privateKey: key };
    const transfer = await walletOf(devnet, b2).writeContract({
      address: devnet.usdc,
      abi: usdcAbi,
      functionName: "transfer",
      args: [funded.address, 600_000n],
    });
    await f.receiptOf(transfer);
    const loop = channelConfig(devnet, funded.address, b2.address, 2n);
    await depositErc3009(devnet, f, fundedWallet, loop, 600_000n);
    await claimChannel(f, fundedWallet, loop, 400_000n);
    await payKitMerchant(ours, b0);
  } finally {
    await facilitator?.close();
    await ledger.close();
    await miner.stop();
  }
  await devnet.mine(2);
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
}, 120_000);
afterAll(() => devnet?.stop());

/**
 * A kit merchant declaring its builder code, paid once by the SDK's exact client with the builder-code extension
 * through the project's facilitator. Its wallet is the buyer's own, so that the payment is flagged (self-payment)
 * and the flag feed has a row to name the app in.
 */
async function payKitMerchant(facilitator: Facilitator, buyer: DevnetAccount): Promise<void> {
  const state = await openTestDatabase(LEDGER_KIND);
  const shop = await startMerchant(
    (url) => ({ ...testMerchant(buyer.address, url, [echo]), builderCode: CODES.app }),
    state.db,
    inProcessClient(facilitator),
    { rpcUrl: devnet.rpc },
  );
  try {
    const client = x402ClientFor(buyer, "exact");
    client.registerExtension(new BuilderCodeClientExtension(CODES.service));
    const res = await wrapFetchWithPayment(fetch, client)(`${shop.url}/api/echo?text=hi`);
    expect(res.status, await res.clone().text()).toBe(200);
  } finally {
    await shop.close();
    await state.close();
  }
}

async function index(from: number, batchBlocks?: number, senderStrategy?: SenderChoice): Promise<Analytics> {
  const analytics = await openTempAnalytics();
  await runIndexer({
    analytics,
    rpc: { url: devnet.rpc },
    registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
    fromBlock: from,
    toBlock: head,
    reorgDepth: 4,
    ...(batchBlocks && { batchBlocks }),
    ...(senderStrategy && { senderStrategy }),
  });
  return analytics;
}

const PLUMBING = [X402_BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS].map((a) =>
  a.toLowerCase(),
);

describe("indexer, every settlement shape", () => {
  it("keeps each payment's scheme, a claim as its payer's payment, and no plumbing as a payment or transfer", async () => {
    const analytics = await index(GENESIS + 1);
    try {
      const payments = await analytics.all<Record<string, unknown>>(
        "SELECT payer, pay_to, amount, scheme, transfer_method, channel FROM payments WHERE pay_to = $m ORDER BY block_number, log_index",
        { m: M },
      );
      const [b0, b1, b2] = devnet.buyers.map((b) => b.address.toLowerCase());
      expect(payments).toEqual([
        { payer: b0, pay_to: M, amount: 5_000n, scheme: "exact", transfer_method: "eip3009", channel: null },
        { payer: b1, pay_to: M, amount: 370_000n, scheme: "upto", transfer_method: "permit2", channel: null },
        {
          payer: b2,
          pay_to: M,
          amount: 250_000n,
          scheme: "exact",
          transfer_method: "permit2",
          channel: null,
        },
        ...CLAIMS.map((amount) => ({
          payer: b0,
          pay_to: M,
          amount,
          scheme: "batch-settlement",
          transfer_method: "channel",
          channel: channelId,
        })),
      ]);
      const merchants = await analytics.all<{ address: string }>(
        "SELECT address FROM merchants ORDER BY address",
      );
      expect(merchants.map((m) => m.address)).toEqual([M, b0, b2].sort());
      // The channel is a wallet of its own: the deposit went in, the refund came out.
      const transfers = await analytics.all<{ from_address: string; to_address: string; amount: bigint }>(
        "SELECT from_address, to_address, amount FROM transfers ORDER BY block_number, log_index",
      );
      expect(
        transfers.filter((t) => PLUMBING.includes(t.from_address) || PLUMBING.includes(t.to_address)),
      ).toEqual([]);
      expect(transfers.filter((t) => t.to_address === channelId || t.from_address === channelId)).toEqual([
        { from_address: b0, to_address: channelId, amount: DEPOSIT },
        { from_address: channelId, to_address: b0, amount: REFUND },
      ]);
      const events = await analytics.all<{ event: string; amount: bigint }>(
        "SELECT event, amount FROM channel_events WHERE channel_id IN ($id, '') AND receiver = $m ORDER BY block_number, log_index",
        { id: channelId, m: M },
      );
      expect(events.map((e) => [e.event, e.amount])).toEqual([
        ["created", 0n],
        ["deposited", DEPOSIT],
        ["claimed", CLAIMS[0]],
        ["claimed", CLAIMS[1]],
        ["swept", 750_000n],
        ["refunded", REFUND],
      ]);
      const channels = await analytics.all<Record<string, unknown>>(
        "SELECT channel_id, payer, receiver, receiver_authorizer, block_number FROM channels WHERE receiver = $m",
        { m: M },
      );
      expect(channels).toEqual([
        {
          channel_id: channelId,
          payer: b0,
          receiver: M,
          receiver_authorizer: devnet.facilitatorAccount.address.toLowerCase(),
          block_number: BigInt(depositBlock),
        },
      ]);

      const { report } = await new ReportService(analytics, { publicUrl: "https://r.test" }).report(M);
      expect(report).toMatchObject({ tx: 5, buyers: 3, usd: 1.38, real_tx: 5, real_usd: 1.38 });
      expect(report.schemes).toEqual({
        exact: { tx: 2, usd: 0.26, real_tx: 2, real_usd: 0.26, tx_counts: "payments" },
        upto: { tx: 1, usd: 0.37, real_tx: 1, real_usd: 0.37, tx_counts: "payments" },
        "batch-settlement": { tx: 2, usd: 0.75, real_tx: 2, real_usd: 0.75, tx_counts: "claims" },
      });
    } finally {
      analytics.close();
    }
  });

  it("flags a merchant's money that came back to it through a channel it funded", async () => {
    const analytics = await index(GENESIS + 1);
    try {
      const b2 = (devnet.buyers[2] as DevnetAccount).address.toLowerCase();
      const { report } = await new ReportService(analytics, { publicUrl: "https://r.test" }).report(b2);
      expect(report).toMatchObject({ tx: 1, usd: 0.4, real_tx: 0, real_usd: 0 });
      expect(report.flags).toEqual({ merchant_funded: { tx: 1, usd: 0.4 } });
      expect(report.schemes).toEqual({
        "batch-settlement": { tx: 1, usd: 0.4, real_tx: 0, real_usd: 0, tx_counts: "claims" },
      });
    } finally {
      analytics.close();
    }
  });

  it("stores the same rows block by block, and reads back the config of a channel opened before its start", async () => {
    const whole = await index(GENESIS + 1);
    const byBlock = await index(GENESIS + 1, 1);
    const late = await index(depositBlock + 1);
    const rows = (a: Analytics, table: string) =>
      a
        .all(`SELECT * EXCLUDE (chain) FROM ${table} ORDER BY ALL`)
        .then((r) => JSON.stringify(r, (_, v) => (typeof v === "bigint" ? v.toString() : v)));
    try {
      for (const table of ["payments", "transfers", "channels", "channel_events", "balances"]) {
        expect(await rows(byBlock, table), table).toBe(await rows(whole, table));
      }
      // From after the deposit: the claims are still the payer's payments, its config read from the chain.
      const claims = await late.all<{ payer: string; amount: bigint }>(
        "SELECT payer, amount FROM payments WHERE channel = $id ORDER BY block_number",
        { id: channelId },
      );
      expect(claims.map((c) => c.amount)).toEqual(CLAIMS);
      expect(
        await late.all("SELECT channel_id, block_number FROM channels WHERE channel_id = $id", {
          id: channelId,
        }),
      ).toEqual([{ channel_id: channelId, block_number: -1n }]);
    } finally {
      whole.close();
      byBlock.close();
      late.close();
    }
  });
  it("keeps each payment's builder codes, the same read from traces or by hash, and the evidence and feed name the app", async () => {
    const traced = await index(GENESIS + 1);
    const byHash = await index(GENESIS + 1, undefined, "tx");
    const b0 = (devnet.buyers[0] as DevnetAccount).address.toLowerCase();
    const codes = (a: Analytics) =>
      a.all<Record<string, unknown>>(
        `SELECT pay_to, scheme, transfer_method, builder_app, builder_wallet, builder_services FROM payments
         WHERE pay_to IN ($m, $b0) ORDER BY block_number, log_index`,
        { m: M, b0 },
      );
    try {
      const ours = { builder_app: null, builder_wallet: CODES.wallet, builder_services: null };
      const none = { builder_app: null, builder_wallet: null, builder_services: null };
      expect(await codes(traced)).toEqual([
        // Hand-made payments carry no codes: the project's facilitator appends its own alone.
        { pay_to: M, scheme: "exact", transfer_method: "eip3009", ...ours },
        { pay_to: M, scheme: "upto", transfer_method: "permit2", ...ours },
        // The stock SDK's facilitator, without the extension, appends nothing; claims' transactions are not read.
        { pay_to: M, scheme: "exact", transfer_method: "permit2", ...none },
        ...CLAIMS.map(() => ({ pay_to: M, scheme: "batch-settlement", transfer_method: "channel", ...none })),
        {
          pay_to: b0,
          scheme: "exact",
          transfer_method: "eip3009",
          builder_app: CODES.app,
          builder_wallet: CODES.wallet,
          builder_services: CODES.service,
        },
      ]);
      expect(await codes(byHash)).toEqual(await codes(traced));

      const service = new ReportService(traced, { publicUrl: "https://r.test" });
      const evidence = await service.evidence(b0);
      const page = renderEvidencePage(evidence, {});
      expect(page).toContain("Apps its payments came from");
      expect(page).toContain(`<code>${CODES.app}</code>`);
      expect(page).toContain(escapeText(APPS_CAVEAT));
      expect(evidence.apps).toEqual({
        caveat: APPS_CAVEAT,
        apps: [{ app: CODES.app, tx: 1, usd: 0.002 }],
        none: { tx: 0, usd: 0 },
      });
      expect((await service.evidence(M)).apps).toEqual({
        caveat: APPS_CAVEAT,
        apps: [],
        none: { tx: 5, usd: 1.375 },
      });
      const feed = await service.flags(undefined, { merchant: b0 });
      expect(feed.apps_caveat).toBe(APPS_CAVEAT);
      expect(feed.wallets.map((w) => w.merchants.map((m) => [m.kind, m.apps]))).toEqual([
        [["self_payment", [CODES.app]]],
      ]);
    } finally {
      traced.close();
      byHash.close();
    }
  });
});
