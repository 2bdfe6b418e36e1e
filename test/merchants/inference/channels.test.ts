/**
 * The inference API paid through a payment channel, end to end on a devnet: the SDK's own batch-settlement
 * client through `@x402/fetch` makes a deposit and 50 metered chat calls (vouchers) on the offline engine,
 * the merchant's schedule claims them and sweeps the money to its wallet, the buyer takes part of what is left
 * back with the SDK client's cooperative refund, and pays one call with `exact` beside. What is checked: each
 * call's charge (the tokens it used, at the tier's rates), the merchant's ledger, the channel's state, what the
 * claim and the sweep moved on chain, what the refund returned, and the chain indexed: the report counts what
 * was claimed from that payer's channel and nothing of the refund, beside the exact payment once. Through each
 * facilitator the merchants may be paid through: the stock SDK's own and the project's.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../../src/chain/facilitators.ts";
import { usdcAbi } from "../../../src/chain/usdc.ts";
import type { DatabaseKind } from "../../../src/common/db/database.ts";
import { inProcessClient } from "../../../src/facilitator/index.ts";
import { runIndexer } from "../../../src/indexer/index.ts";
import { ChannelSchedule } from "../../../src/merchant-kit/channels/schedule.ts";
import { DEFAULT_CHANNEL_SETTINGS } from "../../../src/merchant-kit/channels/settings.ts";
import { ChannelStore } from "../../../src/merchant-kit/channels/storage.ts";
import { priceToAtomic } from "../../../src/merchant-kit/price.ts";
import { REFUND_PATH } from "../../../src/merchant-kit/routes.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../src/merchants/inference/catalogue.ts";
import { meteredAmount } from "../../../src/merchants/inference/metering.ts";
import { defaultRates, TIERS } from "../../../src/merchants/inference/tiers.ts";
import { ReportService } from "../../../src/reports/index.ts";
import { useDevnet } from "../../helpers/chain.ts";
import { type ChannelShop, channelOf, escrowOf } from "../../helpers/channel-shop.ts";
import { DATABASE_KINDS, LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { openTempAnalytics } from "../../helpers/indexer.ts";
import { startMerchant } from "../../helpers/merchant.ts";
import { rpc } from "../../helpers/settle.ts";
import { channelClient, channelPayer, stockFacilitator } from "../../helpers/stock-facilitator.ts";
import { NETWORK, newMerchant, usdcReader, x402ClientFor } from "../../helpers/x402.ts";

const TIER_2 = TIERS[1] as (typeof TIERS)[number];
/** Tier 2's /upto maximum ($0.015187) and its exact price ($0.002237). */
const MAX = 15_187n;
const EXACT = 2_237n;
/** What the buyer deposits: $0.5, enough for the 50 calls and more. */
const DEPOSIT = 500_000n;
const REFUNDED = 100_000n;
/** Atomic units as the report's dollars: rounded half up to the cent. */
const usdOf = (atomic: bigint) => Number((atomic + 5_000n) / 10_000n) / 100;

const chain = useDevnet({ buyers: 2 });
let usdc: ReturnType<typeof usdcReader>;
const closers: (() => Promise<void>)[] = [];
/**
 * The facilitators to pay a merchant through, each started for its wallet once the devnet is up. The
 * project's signs claims and refunds as the channels' receiver authorizer for the merchants of its own
 * process, as `serve` and the demo allow them (src/services/start.ts).
 */
const facilitators: Record<string, (payTo: `0x${string}`) => Promise<FacilitatorClient>> = {
  "the stock SDK's facilitator": async () => stockFacilitator(chain.devnet),
  "the project's facilitator": async (payTo) => {
    const ledger = await openTestDatabase(LEDGER_KIND);
    closers.push(ledger.close);
    const facilitator = await devnetFacilitator(chain.devnet, ledger.db);
    closers.push(() => facilitator.close());
    facilitator.gate.allow([payTo]);
    return inProcessClient(facilitator);
  },
};

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const chat = (content: string) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ messages: [{ role: "user", content }], max_tokens: 16 }),
});

// Each facilitator once and each store once (the last store with every facilitator when there is only
// one): the channel's state is the kit's whichever facilitator relays it, and each case costs 51 paid calls.
const names = Object.keys(facilitators);
const cases = names.map(
  (name, i) => [DATABASE_KINDS[Math.min(i, DATABASE_KINDS.length - 1)] as DatabaseKind, name] as const,
);
let salt = 100n;

describe.each(cases)(
  "the inference API paid through a channel, merchant state on %s, through %s",
  (kind, name) => {
    let shop: ChannelShop;
    let facilitator: FacilitatorClient;
    const payTo = newMerchant();
    const buyer = () => chain.devnet.buyers[0] as DevnetAccount;
    const client = () => channelClient(chain.devnet, buyer(), { salt, deposit: DEPOSIT });
    let state: Awaited<ReturnType<typeof openTestDatabase>>;

    beforeAll(async () => {
      salt++;
      facilitator = await (facilitators[name] as (typeof facilitators)[string])(payTo);
      state = await openTestDatabase(kind);
      closers.push(state.close);
      const host = await startMerchant(
        (url) => inferenceMerchant({ payTo, publicUrl: url }, OFFLINE_SETTINGS),
        state.db,
        facilitator,
        { rpcUrl: chain.devnet.rpc },
      );
      closers.push(() => host.close());
      shop = {
        host,
        url: host.url,
        payTo,
        store: new ChannelStore(state.db, payTo),
        close: () => host.close(),
      };
    });

    it("takes a deposit, 50 vouchers, a claim, a settle and a partial refund, charges each call what it used, and is reported as what was claimed beside an exact payment", async () => {
      const payer = client();
      const pay = wrapFetchWithPayment(fetch, channelPayer(payer));
      const url = `${shop.url}/v1/chat/completions/_t/t2/upto`;
      const walletBefore = await usdc.balanceOf(buyer().address);
      let charged = 0n;
      for (let i = 0; i <= 50; i++) {
        const answer = await pay(url, chat(`Call number ${i}`));
        expect(answer.status, await answer.clone().text()).toBe(200);
        const reply = (await answer.json()) as {
          usage: { prompt_tokens: number; completion_tokens: number };
        };
        const cost = meteredAmount(
          { promptTokens: reply.usage.prompt_tokens, completionTokens: reply.usage.completion_tokens },
          defaultRates(TIER_2),
          MAX,
        );
        expect(cost).toBeGreaterThan(0n);
        expect(cost).toBeLessThan(MAX);
        charged += cost;
        const receipt = decodePaymentResponseHeader(answer.headers.get("payment-response") as string);
        // The first call deposits (a transaction moving the deposit); the others are vouchers, no transaction.
        expect(receipt).toMatchObject(
          i === 0
            ? { success: true, amount: DEPOSIT.toString() }
            : { success: true, transaction: "", amount: "" },
        );
        if (i === 0) expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
        expect(receipt.extra).toMatchObject({
          chargedAmount: cost.toString(),
          channelState: { chargedCumulativeAmount: charged.toString() },
        });
      }
      // One deposit left the wallet; the vouchers moved nothing.
      expect(walletBefore - (await usdc.balanceOf(buyer().address))).toBe(DEPOSIT);
      const { id, row } = await channelOf(shop, payer);
      expect(row).toMatchObject({
        chargedCumulativeAmount: charged.toString(),
        balance: DEPOSIT.toString(),
        totalClaimed: "0",
      });
      expect(row?.pendingRequest).toBeUndefined();
      // The ledger: 51 calls of this payer, each settled, the deposit's among them.
      const { rows } = await state.db.query<{ settled: bigint; vouchers: bigint }>(
        `SELECT count(*) FILTER (WHERE state = 'settled') AS settled, count(*) FILTER (WHERE nonce LIKE 'channel:%') AS vouchers
       FROM merchant_payments WHERE payer = $1`,
        [buyer().address.toLowerCase()],
      );
      expect(rows[0]).toEqual({ settled: 51n, vouchers: 50n });
      // The deposit's row is keyed by the nonce the chain marks used (what the funds reservation reads).
      const deposit = await state.db.query<{ nonce: `0x${string}` }>(
        "SELECT nonce FROM merchant_payments WHERE payer = $1 AND nonce NOT LIKE 'channel:%'",
        [buyer().address.toLowerCase()],
      );
      expect(deposit.rows).toHaveLength(1);
      const used = await usdc.client.readContract({
        address: chain.devnet.usdc,
        abi: usdcAbi,
        functionName: "authorizationState",
        args: [buyer().address, deposit.rows[0]?.nonce as `0x${string}`],
      });
      expect(used).toBe(true);

      // The schedule claims the channel (its interval has passed, gas is free) and sweeps it to the wallet.
      const schedule = new ChannelSchedule({
        db: state.db,
        receiver: payTo,
        facilitator,
        network: NETWORK,
        asset: { address: chain.devnet.usdc, decimals: 6 },
        atomic: priceToAtomic,
        settings: DEFAULT_CHANNEL_SETTINGS,
        gasPrice: async () => 0n,
      });
      const look = await schedule.tick();
      expect(look).toMatchObject({ claimed: { reason: "interval", channels: [id.toLowerCase()] } });
      expect(look.claimed?.transactions).toHaveLength(1);
      expect(look.settled).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await escrowOf(chain.devnet, id)).toEqual({ balance: DEPOSIT, totalClaimed: charged });
      expect(await usdc.balanceOf(payTo)).toBe(charged);
      const claimed = charged;
      expect((await channelOf(shop, payer)).row?.totalClaimed).toBe(charged.toString());
      expect(await schedule.tick()).toEqual({ idle: "nothing" });

      // Part of what is left comes back on the buyer's request, through the refund route.
      const beforeRefund = await usdc.balanceOf(buyer().address);
      const refund = await payer.refund(`${shop.url}${REFUND_PATH}`, { amount: REFUNDED.toString() });
      expect(refund).toMatchObject({ success: true, amount: REFUNDED.toString() });
      expect((await usdc.balanceOf(buyer().address)) - beforeRefund).toBe(REFUNDED);
      expect(await escrowOf(chain.devnet, id)).toEqual({
        balance: DEPOSIT - REFUNDED,
        totalClaimed: charged,
      });
      expect((await channelOf(shop, payer)).row).toMatchObject({
        chargedCumulativeAmount: charged.toString(),
        balance: (DEPOSIT - REFUNDED).toString(),
        refundNonce: 1,
      });
      // The channel goes on: the next call is a voucher on what is left; the merchant was paid nothing more.
      const after = await pay(url, chat("After the refund"));
      expect(after.status).toBe(200);
      expect(decodePaymentResponseHeader(after.headers.get("payment-response") as string).transaction).toBe(
        "",
      );
      expect(await usdc.balanceOf(payTo)).toBe(charged);

      // Beside the channel, the same payer pays one call exactly; then the chain is indexed: the report
      // counts what was claimed from the channel, for that payer, and nothing of the refund.
      const beforeExact = await usdc.balanceOf(payTo);
      const exact = wrapFetchWithPayment(fetch, x402ClientFor(buyer(), "exact"));
      expect((await exact(`${shop.url}/v1/chat/completions/_t/t2`, chat("Paid exactly"))).status).toBe(200);
      expect((await usdc.balanceOf(payTo)) - beforeExact).toBe(EXACT);
      await chain.devnet.mine(1);
      const analytics = await openTempAnalytics();
      try {
        await runIndexer({
          analytics,
          rpc: { url: chain.devnet.rpc },
          registry: FacilitatorRegistry.base(),
          fromBlock: 1,
          toBlock: Number(await rpc(chain.devnet.rpc, "eth_blockNumber")),
          reorgDepth: 1,
        });
        const merchant = payTo.toLowerCase();
        const { report } = await new ReportService(analytics, { publicUrl: "https://r.test" }).report(
          merchant,
        );
        expect(report).toMatchObject({ tx: 2, buyers: 1, real_tx: 2 });
        expect(report.schemes).toEqual({
          exact: { tx: 1, usd: usdOf(EXACT), real_tx: 1, real_usd: usdOf(EXACT), tx_counts: "payments" },
          "batch-settlement": {
            tx: 1,
            usd: usdOf(claimed),
            real_tx: 1,
            real_usd: usdOf(claimed),
            tx_counts: "claims",
          },
        });
        const paid = await analytics.all<{ payer: string; amount: bigint; scheme: string }>(
          "SELECT payer, amount, scheme FROM payments WHERE pay_to = $m ORDER BY scheme",
          { m: merchant },
        );
        const payer = buyer().address.toLowerCase();
        expect(paid).toEqual([
          { payer, amount: claimed, scheme: "batch-settlement" },
          { payer, amount: EXACT, scheme: "exact" },
        ]);
      } finally {
        analytics.close();
      }
    });
  },
);
