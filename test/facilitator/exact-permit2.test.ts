/**
 * The exact scheme paid through x402's exact Permit2 proxy (`assetTransferMethod: "permit2"`, for wallets and
 * tokens without EIP-3009): a buyer signs with the SDK's own client, the project's facilitator verifies and
 * settles it over HTTP with an API key, through its ledger keyed by the Permit2 nonce, as upto is. One
 * payment moves money once whatever arrives; a payee nobody allowed is refused before anything is read.
 */
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { getAddress, parseEther, parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_USDC, X402_EXACT_PROXY_ADDRESS } from "../../src/chain/base.ts";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import { exactProxyAbi } from "../../src/chain/exact-proxy.ts";
import type { Database } from "../../src/common/db/index.ts";
import { addKey } from "../../src/facilitator/access/index.ts";
import { type Facilitator, reasons } from "../../src/facilitator/index.ts";
import { authorizationUsed } from "../../src/facilitator/outcome.ts";
import { builderCodesOf } from "../../src/indexer/builder-codes.ts";
import { useDevnet } from "../helpers/chain.ts";
import { DATABASE_KINDS, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

/** The facilitator's ERC-8021 builder code, which it appends to what it settles. */
const BUILDER_CODE = "test_facilitator";

const chain = useDevnet({ buyers: 2 });
let usdc: ReturnType<typeof usdcReader>;

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
}, 60_000);

function permit2Requirements(payTo: `0x${string}`, amount: string): PaymentRequirements {
  return {
    scheme: "exact",
    network: NETWORK,
    asset: getAddress(BASE_USDC),
    amount,
    payTo,
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2", assetTransferMethod: "permit2" },
  };
}

/** A Permit2 payment signed by the SDK's own exact client (the devnet's buyers have approved Permit2). */
function payPermit2(buyer: DevnetAccount, requirements: PaymentRequirements): Promise<PaymentPayload> {
  return new x402Client()
    .register(NETWORK, new ExactEvmScheme(privateKeyToAccount(buyer.privateKey)))
    .createPaymentPayload({
      x402Version: 2,
      resource: { url: "http://shop.test/report" },
      accepts: [requirements],
    });
}

function permit2Of(payment: PaymentPayload) {
  const { from, nonce } = (
    payment.payload as { permit2Authorization: { from: `0x${string}`; nonce: string } }
  ).permit2Authorization;
  return {
    method: "permit2" as const,
    asset: chain.devnet.usdc,
    payer: from,
    nonce: `0x${BigInt(nonce).toString(16).padStart(64, "0")}` as const,
  };
}

describe.each(DATABASE_KINDS)("facilitator, exact through the Permit2 proxy (ledger on %s)", (kind) => {
  let db: Database;
  let closeDb: () => Promise<void>;
  let facilitator: Facilitator;
  let key: string;
  let payee: `0x${string}`;
  beforeAll(async () => {
    ({ db, close: closeDb } = await openTestDatabase(kind));
    // Closed: no allow-list, every payee needs a key.
    facilitator = await devnetFacilitator(chain.devnet, db, {
      access: { open: false },
      builderCode: BUILDER_CODE,
    });
    payee = newMerchant();
    ({ key } = await addKey(db, {
      name: "shop",
      payees: [payee.toLowerCase()],
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 1000,
    }));
  });
  afterAll(async () => {
    await facilitator?.close();
    await closeDb?.();
  });

  const post = async (
    path: "/verify" | "/settle",
    payment: PaymentPayload,
    requirements: PaymentRequirements,
    bearer: string | null = key,
  ) => {
    const response = await facilitator.app.request(path, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
      },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: requirements }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  async function ledgerRow(payment: PaymentPayload) {
    const { payer, nonce } = permit2Of(payment);
    const { rows } = await db.query<{
      state: string;
      settled_amount: string;
      tx_hash: string;
      pay_to: string;
    }>(
      "SELECT state, settled_amount, tx_hash, pay_to FROM facilitator_authorizations WHERE payer = $1 AND nonce = $2",
      [payer.toLowerCase(), nonce],
    );
    return rows[0];
  }

  it("verifies and settles it once through the proxy, keyed by its Permit2 nonce; a replay moves nothing", async () => {
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const requirements = permit2Requirements(payee, "250000");
    const payment = await payPermit2(buyer, requirements);
    expect(payment.payload).toHaveProperty("permit2Authorization");
    const [buyerBefore, payeeBefore] = await Promise.all([
      usdc.balanceOf(buyer.address),
      usdc.balanceOf(payee),
    ]);

    const verified = await post("/verify", payment, requirements);
    expect(verified.body, JSON.stringify(verified.body)).toMatchObject({
      isValid: true,
      payer: buyer.address,
    });
    expect(await ledgerRow(payment)).toMatchObject({ state: "verified", pay_to: payee.toLowerCase() });

    const settled = await post("/settle", payment, requirements);
    expect(settled.body, JSON.stringify(settled.body)).toMatchObject({
      success: true,
      payer: buyer.address,
      network: NETWORK,
    });
    const hash = settled.body.transaction as `0x${string}`;
    const receipt = await usdc.receipt(hash);
    expect(receipt.to?.toLowerCase()).toBe(X402_EXACT_PROXY_ADDRESS.toLowerCase());
    // The proxy's calldata ends with the facilitator's ERC-8021 code, which the proxy ignores.
    const { input } = await usdc.client.getTransaction({ hash });
    expect(builderCodesOf(input)).toEqual({ app: null, wallet: BUILDER_CODE, services: null });
    expect(parseEventLogs({ abi: exactProxyAbi, logs: receipt.logs, eventName: "Settled" })).toHaveLength(1);
    expect(await usdc.balanceOf(buyer.address)).toBe(buyerBefore - 250_000n);
    expect(await usdc.balanceOf(payee)).toBe(payeeBefore + 250_000n);
    expect(await ledgerRow(payment)).toMatchObject({
      state: "settled",
      settled_amount: "250000",
      tx_hash: hash.toLowerCase(),
    });
    expect(await authorizationUsed(usdc.client, permit2Of(payment))).toBe(true);

    // A replay: answered as a used nonce, and nothing is sent.
    const sent = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);
    expect((await post("/settle", payment, requirements)).body).toMatchObject({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
      transaction: "",
    });
    expect((await post("/verify", payment, requirements)).body).toMatchObject({
      isValid: false,
      invalidReason: reasons.NONCE_ALREADY_USED,
    });
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(sent);
    expect(await usdc.balanceOf(payee)).toBe(payeeBefore + 250_000n);
  });

  it("settles one payment sent six times at once exactly once", async () => {
    const buyer = chain.devnet.buyers[1] as DevnetAccount;
    const requirements = permit2Requirements(payee, "1000");
    const payment = await payPermit2(buyer, requirements);
    const before = await usdc.balanceOf(buyer.address);
    expect((await post("/verify", payment, requirements)).body).toMatchObject({ isValid: true });
    const sent = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);

    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post("/settle", payment, requirements)),
    );
    expect(answers.filter((a) => a.body.success === true)).toHaveLength(1);
    expect(answers.filter((a) => a.body.success !== true).map((a) => a.body.errorReason)).toEqual(
      Array(5).fill(reasons.NONCE_ALREADY_USED),
    );
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(sent + 1);
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 1000n);
  });

  it("refuses a payee nobody allowed, without a key, before reading the chain or signing", async () => {
    const stranger = newMerchant();
    const requirements = permit2Requirements(stranger, "1000");
    const payment = await payPermit2(chain.devnet.buyers[0] as DevnetAccount, requirements);
    const sent = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);

    const verified = await post("/verify", payment, requirements, null);
    expect(verified.status).toBe(401);
    expect(verified.body).toMatchObject({ isValid: false, invalidReason: reasons.PAYEE_NOT_ALLOWED });
    const settled = await post("/settle", payment, requirements, null);
    expect(settled.status).toBe(401);
    expect(settled.body).toMatchObject({
      success: false,
      errorReason: reasons.PAYEE_NOT_ALLOWED,
      transaction: "",
    });
    // With the key of another payee: 403.
    expect((await post("/settle", payment, requirements)).status).toBe(403);
    expect(await ledgerRow(payment)).toBeUndefined();
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(sent);
    expect(await usdc.balanceOf(stranger)).toBe(0n);
  });
});
