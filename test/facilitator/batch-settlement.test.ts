/**
 * batch-settlement through the project's facilitator, over its HTTP face with API keys, on the devnet's
 * escrow: buyers sign deposits and vouchers with the SDK's own client, and the merchant's side sends what the
 * SDK's channel manager sends (claims, settles, completed refunds, with `maxTimeoutSeconds: 0`), leaving the
 * receiverAuthorizer's signatures to the facilitator. Deposits are relayed once through the ledger; claims,
 * settles and refunds once each through the channel actions; every on-chain action goes through the payee,
 * the key's authority, rate and gas budget.
 *
 * The cases run in order on shared channels: A (buyer 0) is deposited into, claimed, swept and refunded.
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { BATCH_SETTLEMENT_DOMAIN, claimBatchTypes } from "@x402/evm";
import {
  BatchSettlementEvmScheme as BatchClient,
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from "@x402/evm/batch-settlement/client";
import { getAddress, type Hex, pad, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_CHAIN_ID, BASE_USDC, X402_BATCH_SETTLEMENT_ADDRESS as ESCROW } from "../../src/chain/base.ts";
import { batchSettlementAbi } from "../../src/chain/batch-settlement.ts";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { addKey } from "../../src/facilitator/access/index.ts";
import { type Facilitator, reasons } from "../../src/facilitator/index.ts";
import { builderCodesOf } from "../../src/indexer/builder-codes.ts";
import { useDevnet } from "../helpers/chain.ts";
import { DATABASE_KINDS, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { rpc } from "../helpers/settle.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

/** The facilitator's ERC-8021 builder code, which it appends to what it settles. */
const BUILDER_CODE = "test_facilitator";

const DELAY = 900;
const USDC = getAddress(BASE_USDC);

const chain = useDevnet({ buyers: 4 });
let usdc: ReturnType<typeof usdcReader>;

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
}, 60_000);

type Config = Parameters<typeof computeChannelId>[0];

const buyer = (i: number) => chain.devnet.buyers[i] as DevnetAccount;
const account = (b: DevnetAccount) => privateKeyToAccount(b.privateKey);

function configOf(payer: DevnetAccount, receiver: `0x${string}`, salt: number): Config {
  return {
    payer: payer.address,
    payerAuthorizer: payer.address,
    receiver,
    receiverAuthorizer: chain.devnet.facilitatorAccount.address,
    token: USDC,
    withdrawDelay: DELAY,
    salt: pad(`0x${salt.toString(16)}`, { size: 32 }),
  };
}

/** What a paid route's 402 asks for (the SDK server fills receiverAuthorizer from /supported). */
function routeRequirements(
  receiver: `0x${string}`,
  extra: Record<string, unknown> = {},
): PaymentRequirements {
  return {
    scheme: "batch-settlement",
    network: NETWORK,
    asset: USDC,
    amount: "1000",
    payTo: receiver,
    maxTimeoutSeconds: 300,
    extra: {
      name: "USD Coin",
      version: "2",
      receiverAuthorizer: chain.devnet.facilitatorAccount.address,
      withdrawDelay: DELAY,
      ...extra,
    },
  };
}

/** What the SDK's channel manager sends with a claim, a settle or a refund. */
function managerRequirements(receiver: `0x${string}`): PaymentRequirements {
  return {
    scheme: "batch-settlement",
    network: NETWORK,
    asset: USDC,
    amount: "0",
    payTo: receiver,
    maxTimeoutSeconds: 0,
    extra: {},
  };
}

async function depositOf(payer: DevnetAccount, config: Config, amount: bigint, charged: bigint) {
  const requirements = routeRequirements(config.receiver);
  const signed = await createBatchSettlementEIP3009DepositPayload(
    account(payer),
    2,
    requirements,
    config,
    amount.toString(),
    charged.toString(),
  );
  const payment: PaymentPayload = { x402Version: 2, accepted: requirements, payload: signed.payload };
  return { payment, requirements };
}

async function voucherOf(payer: DevnetAccount, config: Config, max: bigint) {
  return signVoucher(account(payer), computeChannelId(config, NETWORK), max.toString(), NETWORK);
}

function managerPayment(receiver: `0x${string}`, payload: Record<string, unknown>) {
  const requirements = managerRequirements(receiver);
  return { payment: { x402Version: 2, accepted: requirements, payload } as PaymentPayload, requirements };
}

async function claimOf(payer: DevnetAccount, config: Config, total: bigint) {
  const voucher = await voucherOf(payer, config, total);
  const claims = [
    {
      voucher: { channel: config, maxClaimableAmount: total.toString() },
      signature: voucher.signature,
      totalClaimed: total.toString(),
    },
  ];
  return managerPayment(config.receiver, { type: "claim", claims });
}

const channelOf = (config: Config) =>
  usdc.client.readContract({
    address: ESCROW,
    abi: batchSettlementAbi,
    functionName: "channels",
    args: [computeChannelId(config, NETWORK)],
  });

describe.each(DATABASE_KINDS)("facilitator, batch-settlement (ledger on %s)", (kind) => {
  let db: Database;
  let closeDb: () => Promise<void>;
  let facilitator: Facilitator;
  let key: string;
  let keyId: string;
  const receiver = newMerchant();
  const sent = () => usdc.nonceOf(chain.devnet.facilitatorAccount.address);

  beforeAll(async () => {
    ({ db, close: closeDb } = await openTestDatabase(kind));
    // Closed: no allow-list, every payee needs a key.
    facilitator = await devnetFacilitator(chain.devnet, db, {
      access: { open: false },
      builderCode: BUILDER_CODE,
    });
    const issued = await addKey(db, {
      name: "channels",
      payees: [receiver.toLowerCase()],
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 1000,
    });
    ({ key } = issued);
    keyId = issued.apiKey.id;
  });
  afterAll(async () => {
    await facilitator?.close();
    await closeDb?.();
  });

  const post = async (
    path: "/verify" | "/settle",
    { payment, requirements }: { payment: PaymentPayload; requirements: PaymentRequirements },
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

  async function ledgerRows(payer: `0x${string}`) {
    const { rows } = await db.query<{
      state: string;
      amount: string;
      settled_amount: string;
      tx_hash: string;
    }>(
      "SELECT state, amount, settled_amount, tx_hash FROM facilitator_authorizations WHERE payer = $1 ORDER BY verified_at",
      [payer.toLowerCase()],
    );
    return rows;
  }

  async function actionRow(hash: unknown) {
    const { rows } = await db.query<Record<string, unknown>>(
      "SELECT kind, state, key_id, authorized, vouchers, gas_used, cost_wei FROM facilitator_channel_actions WHERE tx_hash = $1",
      [String(hash).toLowerCase()],
    );
    return rows[0];
  }

  async function chargeOf(hash: unknown) {
    const { rows } = await db.query<{
      action: string;
      state: string;
      key_id: string;
      reserved_wei: string;
      charged_wei: string;
    }>(
      "SELECT action, state, key_id, reserved_wei, charged_wei FROM facilitator_key_charges WHERE tx_hash = $1",
      [String(hash).toLowerCase()],
    );
    return rows[0];
  }

  const A = () => configOf(buyer(0), receiver, 0xa);
  const DEPOSIT_A = 5_000_000n;

  it("verifies and relays an ERC-3009 deposit once: USDC into the escrow, its ledger row; a retry answers the same", async () => {
    const deposit = await depositOf(buyer(0), A(), DEPOSIT_A, 1000n);
    const [payerBefore, escrowBefore] = await Promise.all([
      usdc.balanceOf(buyer(0).address),
      usdc.balanceOf(ESCROW),
    ]);

    const verified = await post("/verify", deposit);
    expect(verified.body, JSON.stringify(verified.body)).toMatchObject({
      isValid: true,
      payer: buyer(0).address,
      extra: { channelId: computeChannelId(A(), NETWORK), balance: "0", totalClaimed: "0" },
    });
    expect(await ledgerRows(buyer(0).address)).toMatchObject([
      { state: "verified", amount: DEPOSIT_A.toString() },
    ]);

    const settled = await post("/settle", deposit);
    expect(settled.body, JSON.stringify(settled.body)).toMatchObject({
      success: true,
      payer: buyer(0).address,
      amount: DEPOSIT_A.toString(),
      extra: { channelState: { balance: DEPOSIT_A.toString(), totalClaimed: "0" } },
    });
    const hash = settled.body.transaction as Hex;
    expect((await usdc.receipt(hash)).to?.toLowerCase()).toBe(ESCROW.toLowerCase());
    expect(await usdc.balanceOf(buyer(0).address)).toBe(payerBefore - DEPOSIT_A);
    expect(await usdc.balanceOf(ESCROW)).toBe(escrowBefore + DEPOSIT_A);
    expect(await channelOf(A())).toEqual([DEPOSIT_A, 0n]);
    expect(await ledgerRows(buyer(0).address)).toMatchObject([
      { state: "settled", settled_amount: DEPOSIT_A.toString(), tx_hash: hash.toLowerCase() },
    ]);
    expect(await chargeOf(hash)).toMatchObject({ action: "deposit", state: "charged", key_id: keyId });

    // A retried /settle is answered the deposit's outcome, and nothing is sent again.
    const nonce = await sent();
    const again = await post("/settle", deposit);
    expect(again.body).toMatchObject({ success: true, transaction: hash, amount: DEPOSIT_A.toString() });
    expect(again.body.extra).toMatchObject({ channelState: { balance: DEPOSIT_A.toString() } });
    expect((await post("/verify", deposit)).body).toMatchObject({
      isValid: false,
      invalidReason: reasons.NONCE_ALREADY_USED,
    });
    expect(await sent()).toBe(nonce);
    expect(await usdc.balanceOf(buyer(0).address)).toBe(payerBefore - DEPOSIT_A);
  });

  it("relays the same deposit sent twice at once in one transaction", async () => {
    const config = configOf(buyer(1), receiver, 0xb);
    const deposit = await depositOf(buyer(1), config, 2_000_000n, 1000n);
    expect((await post("/verify", deposit)).body).toMatchObject({ isValid: true });
    const [before, nonce] = await Promise.all([usdc.balanceOf(buyer(1).address), sent()]);

    const answers = await Promise.all([post("/settle", deposit), post("/settle", deposit)]);
    expect(answers.map((a) => a.body.success)).toEqual([true, true]);
    expect(answers[0]?.body.transaction).toBe(answers[1]?.body.transaction);
    expect(await sent()).toBe(nonce + 1);
    expect(await usdc.balanceOf(buyer(1).address)).toBe(before - 2_000_000n);
    expect(await channelOf(config)).toEqual([2_000_000n, 0n]);
  });

  it("relays a Permit2 deposit the SDK's client signs, keyed by its Permit2 nonce", async () => {
    const requirements = routeRequirements(receiver, { assetTransferMethod: "permit2" });
    const signed = await new BatchClient(account(buyer(2))).createPaymentPayload(2, requirements);
    const deposit = {
      payment: { x402Version: 2, accepted: requirements, payload: signed.payload },
      requirements,
    };
    const { channelConfig, deposit: d } = signed.payload as {
      channelConfig: Config;
      deposit: { amount: string; authorization: { permit2Authorization: { nonce: string } } };
    };
    const before = await usdc.balanceOf(buyer(2).address);
    expect((await post("/verify", deposit)).body).toMatchObject({ isValid: true });
    const settled = await post("/settle", deposit);
    expect(settled.body, JSON.stringify(settled.body)).toMatchObject({ success: true, amount: d.amount });
    expect(await usdc.balanceOf(buyer(2).address)).toBe(before - BigInt(d.amount));
    expect(await channelOf(channelConfig)).toEqual([BigInt(d.amount), 0n]);
    const nonce = `0x${BigInt(d.authorization.permit2Authorization.nonce).toString(16).padStart(64, "0")}`;
    expect(await ledgerRows(buyer(2).address)).toMatchObject([
      { state: "settled", tx_hash: settled.body.transaction },
    ]);
    const { rows } = await db.query("SELECT 1 FROM facilitator_authorizations WHERE nonce = $1", [nonce]);
    expect(rows).toHaveLength(1);
  });

  it("verifies a voucher against the channel, and sends nothing for one", async () => {
    const voucher = await voucherOf(buyer(0), A(), 300_000n);
    const payload = { type: "voucher", channelConfig: A(), voucher };
    const requirements = routeRequirements(receiver);
    const request = {
      payment: { x402Version: 2, accepted: requirements, payload } as PaymentPayload,
      requirements,
    };
    expect((await post("/verify", request)).body).toMatchObject({
      isValid: true,
      payer: buyer(0).address,
      extra: { balance: DEPOSIT_A.toString(), totalClaimed: "0" },
    });
    // Beyond the channel's balance: refused.
    const over = {
      type: "voucher",
      channelConfig: A(),
      voucher: await voucherOf(buyer(0), A(), DEPOSIT_A + 1n),
    };
    expect(
      (await post("/verify", { ...request, payment: { ...request.payment, payload: over } })).body,
    ).toMatchObject({
      isValid: false,
      invalidReason: "invalid_batch_settlement_evm_cumulative_exceeds_balance",
    });
    const nonce = await sent();
    expect((await post("/settle", request)).body).toMatchObject({
      success: false,
      errorReason: reasons.CHANNEL_PAYLOAD_TYPE,
      transaction: "",
    });
    expect(await sent()).toBe(nonce);
  });

  it("claims, sweeps and refunds for the keyed receiver, signing as its receiverAuthorizer, each once", async () => {
    const claim = await claimOf(buyer(0), A(), 300_000n);
    const claimed = await post("/settle", claim);
    expect(claimed.body, JSON.stringify(claimed.body)).toMatchObject({ success: true, network: NETWORK });
    expect(await channelOf(A())).toEqual([DEPOSIT_A, 300_000n]);
    // The claim's calldata ends with the facilitator's ERC-8021 code (the merchant's action carries none).
    const { input } = await usdc.client.getTransaction({ hash: claimed.body.transaction as `0x${string}` });
    expect(builderCodesOf(input)).toEqual({ app: null, wallet: BUILDER_CODE, services: null });
    expect(await actionRow(claimed.body.transaction)).toMatchObject({
      kind: "claim",
      state: "settled",
      key_id: keyId,
      authorized: true,
      vouchers: 1,
    });
    expect(await chargeOf(claimed.body.transaction)).toMatchObject({ action: "claim", state: "charged" });
    // The same claim again is answered, not sent.
    const nonce = await sent();
    expect((await post("/settle", claim)).body).toMatchObject({
      success: true,
      transaction: claimed.body.transaction,
    });
    expect(await sent()).toBe(nonce);

    const before = await usdc.balanceOf(receiver);
    const swept = await post("/settle", managerPayment(receiver, { type: "settle", receiver, token: USDC }));
    expect(swept.body, JSON.stringify(swept.body)).toMatchObject({ success: true, amount: "300000" });
    expect(await usdc.balanceOf(receiver)).toBe(before + 300_000n);
    expect(await actionRow(swept.body.transaction)).toMatchObject({
      kind: "settle",
      authorized: false,
      key_id: keyId,
    });

    // A refund of part of the rest, as the SDK's server completes it: the payer's last voucher (charged
    // 400,000, of which 300,000 claimed) claimed in the same transaction.
    const payerBefore = await usdc.balanceOf(buyer(0).address);
    const voucher = await voucherOf(buyer(0), A(), 400_000n);
    const refund = managerPayment(receiver, {
      type: "refund",
      channelConfig: A(),
      voucher,
      amount: "1000000",
      refundNonce: "0",
      claims: [
        {
          voucher: { channel: A(), maxClaimableAmount: "400000" },
          signature: voucher.signature,
          totalClaimed: "400000",
        },
      ],
    });
    const refunded = await post("/settle", refund);
    expect(refunded.body, JSON.stringify(refunded.body)).toMatchObject({
      success: true,
      payer: buyer(0).address,
      amount: "1000000",
      extra: {
        channelState: {
          balance: (DEPOSIT_A - 1_000_000n).toString(),
          totalClaimed: "400000",
          refundNonce: "1",
        },
      },
    });
    expect(await channelOf(A())).toEqual([DEPOSIT_A - 1_000_000n, 400_000n]);
    expect(await usdc.balanceOf(buyer(0).address)).toBe(payerBefore + 1_000_000n);
    expect(await actionRow(refunded.body.transaction)).toMatchObject({
      kind: "refund",
      authorized: true,
      vouchers: 1,
    });
    expect((await post("/settle", refund)).body).toMatchObject({ transaction: refunded.body.transaction });
  });

  it("refuses a payee the key does not have, and its channels, before anything is sent", async () => {
    const stranger = newMerchant();
    const nonce = await sent();
    // A deposit into a channel whose claims this facilitator would sign: the key must name its receiver.
    const deposit = await depositOf(buyer(2), configOf(buyer(2), stranger, 0xe), 1_000_000n, 1000n);
    for (const path of ["/verify", "/settle"] as const) {
      const refused = await post(path, deposit);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({
        [path === "/verify" ? "invalidReason" : "errorReason"]: reasons.AUTHORIZER_KEY_REQUIRED,
      });
    }
    // Claims this facilitator would sign for the stranger's channel: the key does not name it.
    const foreign = await claimOf(buyer(2), configOf(buyer(2), stranger, 0xe), 1000n);
    expect(await post("/settle", foreign)).toMatchObject({
      status: 403,
      body: { success: false, errorReason: reasons.AUTHORIZER_KEY_REQUIRED, transaction: "" },
    });
    // The stranger's channel under the key's payee: the channels must be the payee's.
    const smuggled = { ...foreign, requirements: managerRequirements(receiver) };
    smuggled.payment = { ...foreign.payment, accepted: smuggled.requirements };
    expect((await post("/settle", smuggled)).body).toMatchObject({ errorReason: reasons.RECEIVER_MISMATCH });
    // With the receiverAuthorizer's own signature the gate asks only for the payee: still not the key's.
    const signedClaim = managerPayment(stranger, {
      ...(foreign.payment.payload as Record<string, unknown>),
      claimAuthorizerSignature: `0x${"11".repeat(65)}`,
    });
    expect(await post("/settle", signedClaim)).toMatchObject({
      status: 403,
      body: { errorReason: reasons.PAYEE_NOT_ALLOWED },
    });
    expect(await ledgerRows(buyer(2).address)).toHaveLength(1); // its Permit2 deposit only
    expect(await sent()).toBe(nonce);
  });

  it("signs claims and refunds only for a key that names the receiver, allow-listed or not", async () => {
    const allowed = newMerchant();
    facilitator.gate.allow([allowed]);
    const anyPayee = await addKey(db, {
      name: "any",
      payees: null,
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 10,
    });
    // Nor does it relay a deposit into such a channel for a caller that could not have its claims signed:
    // the receiver would serve vouchers it can never claim.
    const nonce = await sent();
    const deposit = await depositOf(buyer(2), configOf(buyer(2), allowed, 0xf), 1_000_000n, 1000n);
    for (const [path, reason] of [
      ["/verify", "invalidReason"],
      ["/settle", "errorReason"],
    ] as const) {
      expect(await post(path, deposit, null)).toMatchObject({
        status: 401,
        body: { [reason]: reasons.AUTHORIZER_KEY_REQUIRED },
      });
    }
    expect(await sent()).toBe(nonce);
    const claim = await claimOf(buyer(2), configOf(buyer(2), allowed, 0xf), 1000n);
    expect(await post("/settle", claim, null)).toMatchObject({
      status: 401,
      body: { errorReason: reasons.AUTHORIZER_KEY_REQUIRED },
    });
    expect(await post("/settle", claim, anyPayee.key)).toMatchObject({
      status: 403,
      body: { errorReason: reasons.AUTHORIZER_KEY_REQUIRED },
    });
    // In this process, for a payee of the allow-list (a merchant it serves): signed, and refused on chain
    // only because the channel has no money.
    expect(await facilitator.settle(claim.payment, claim.requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_batch_settlement_evm_claim_simulation_failed",
    });
    const elsewhere = await claimOf(buyer(2), configOf(buyer(2), newMerchant(), 0xf), 1000n);
    expect(await facilitator.settle(elsewhere.payment, elsewhere.requirements)).toMatchObject({
      success: false,
      errorReason: reasons.AUTHORIZER_KEY_REQUIRED,
    });
  });

  it("charges each action to the key's gas budget, and refuses the one it cannot cover before sending", async () => {
    const payee = newMerchant();
    const keyFor = (name: string, gasBudgetWei: bigint) =>
      addKey(db, { name, payees: [payee.toLowerCase()], gasBudgetWei, ratePerMinute: 1000 });
    const roomy = await keyFor("roomy", parseEther("1"));
    const channels = [configOf(buyer(3), payee, 0x11), configOf(buyer(3), payee, 0x12)] as const;
    for (const config of channels) {
      const deposit = await depositOf(buyer(3), config, 1_000_000n, 1000n);
      expect((await post("/verify", deposit, roomy.key)).body).toMatchObject({ isValid: true });
      expect((await post("/settle", deposit, roomy.key)).body).toMatchObject({ success: true });
    }
    // What a claim's worst case is on this chain now (gas limit x max fee): a first claim's reservation,
    // the receiver's first too, so costlier than the next one.
    const probe = await post("/settle", await claimOf(buyer(3), channels[0], 100_000n), roomy.key);
    expect(probe.body).toMatchObject({ success: true });
    const worst = BigInt((await chargeOf(probe.body.transaction))?.reserved_wei ?? 0);
    expect(worst).toBeGreaterThan(0n);

    // Room for one claim: then a sweep (the SDK's 120k gas limit) finds the day too short.
    const tight = await keyFor("tight", worst);
    const first = await post("/settle", await claimOf(buyer(3), channels[1], 100_000n), tight.key);
    expect(first.body, JSON.stringify(first.body)).toMatchObject({ success: true });
    const charged = await chargeOf(first.body.transaction);
    expect(charged).toMatchObject({ action: "claim", state: "charged", key_id: tight.apiKey.id });
    const nonce = await sent();
    const before = await usdc.balanceOf(payee);
    const next = await post(
      "/settle",
      managerPayment(payee, { type: "settle", receiver: payee, token: USDC }),
      tight.key,
    );
    expect(next.status).toBe(429);
    expect(next.body).toMatchObject({
      success: false,
      errorReason: reasons.KEY_OVER_BUDGET,
      transaction: "",
    });
    expect(await sent()).toBe(nonce);
    expect(await usdc.balanceOf(payee)).toBe(before);
    const { rows } = await db.query<{ kind: string; state: string; error_reason: string | null }>(
      "SELECT kind, state, error_reason FROM facilitator_channel_actions WHERE key_id = $1 ORDER BY created_at",
      [tight.apiKey.id],
    );
    expect(rows).toEqual([
      { kind: "claim", state: "settled", error_reason: null },
      { kind: "settle", state: "refused", error_reason: reasons.KEY_OVER_BUDGET },
    ]);
    const { rows: day } = await db.query<{ spent_wei: string; reserved_wei: string; settlements: string }>(
      "SELECT spent_wei, reserved_wei, settlements::text FROM facilitator_key_days WHERE key_id = $1",
      [tight.apiKey.id],
    );
    expect(day).toEqual([{ spent_wei: charged?.charged_wei, reserved_wei: "0", settlements: "1" }]);
  });

  it("refuses what is not its receiver's to ask: a claim in /verify, a refund not completed", async () => {
    const claim = await claimOf(buyer(0), A(), 400_000n);
    expect((await post("/verify", claim)).body).toMatchObject({
      isValid: false,
      invalidReason: reasons.CHANNEL_PAYLOAD_TYPE,
    });
    const bare = managerPayment(receiver, {
      type: "refund",
      channelConfig: A(),
      voucher: await voucherOf(buyer(0), A(), 300_000n),
    });
    expect((await post("/settle", bare)).body).toMatchObject({ errorReason: reasons.REFUND_PAYLOAD });
    const malformed = managerPayment(receiver, { type: "claim", claims: [] });
    expect((await post("/settle", malformed)).status).toBe(400);
  });
});

describe("a batch-settlement receipt that does not come in time", () => {
  let db: Database;
  let closeDb: () => Promise<void>;
  let facilitator: Facilitator;
  // Its own signer, so that its nonces never meet the other facilitators' on this chain.
  const key = generatePrivateKey();
  const signer = privateKeyToAccount(key).address;
  beforeAll(async () => {
    ({ db, close: closeDb } = await openTestDatabase(DATABASE_KINDS.at(-1) ?? "pglite"));
    await rpc(chain.devnet.rpc, "anvil_setBalance", [signer, "0xde0b6b3a7640000"]); // 1 ETH
    facilitator = await devnetFacilitator(chain.devnet, db, { privateKey: key, confirmationTimeoutMs: 300 });
  });
  afterAll(async () => {
    chain.miner.resume();
    await facilitator?.close();
    await closeDb?.();
  });

  /** A claim the merchant signs itself as the channel's receiverAuthorizer (the devnet's facilitator key). */
  async function signedClaimOf(payer: DevnetAccount, config: Config, total: bigint) {
    const claim = await claimOf(payer, config, total);
    const claimAuthorizerSignature = await account(chain.devnet.facilitatorAccount).signTypedData({
      domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: BASE_CHAIN_ID, verifyingContract: ESCROW },
      types: claimBatchTypes,
      primaryType: "ClaimBatch",
      message: {
        claims: [
          { channelId: computeChannelId(config, NETWORK), maxClaimableAmount: total, totalClaimed: total },
        ],
      },
    });
    const payload = { ...(claim.payment.payload as Record<string, unknown>), claimAuthorizerSignature };
    return managerPayment(config.receiver, payload);
  }

  it("answers pending with the hash, then the outcome to a retry, sending nothing again", async () => {
    const receiver = newMerchant();
    // The receiver signs its own claims with the devnet's facilitator key, not this facilitator's: it
    // registers that authorizer, or its channels' deposits would be refused as unclaimable.
    facilitator.channelAuthorizers.register(receiver, [chain.devnet.facilitatorAccount.address]);
    const open = configOf(buyer(3), receiver, 0x20);
    const funded = await depositOf(buyer(3), open, 1_000_000n, 1000n);
    expect(await facilitator.verify(funded.payment, funded.requirements)).toMatchObject({ isValid: true });
    expect(await facilitator.settle(funded.payment, funded.requirements)).toMatchObject({ success: true });
    const deposit = await depositOf(buyer(3), configOf(buyer(3), receiver, 0x21), 500_000n, 1000n);
    expect(await facilitator.verify(deposit.payment, deposit.requirements)).toMatchObject({ isValid: true });
    const claim = await signedClaimOf(buyer(3), open, 50_000n);

    chain.miner.pause();
    const [late, lateClaim] = await Promise.all([
      facilitator.settle(deposit.payment, deposit.requirements),
      facilitator.settle(claim.payment, claim.requirements),
    ]).finally(() => chain.miner.resume());
    for (const answer of [late, lateClaim]) {
      expect(answer).toMatchObject({ success: false, errorReason: reasons.SETTLEMENT_PENDING });
      expect(answer.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    }
    const sent = await usdc.nonceOf(signer);

    expect(await facilitator.settle(deposit.payment, deposit.requirements)).toMatchObject({
      success: true,
      transaction: late.transaction,
      amount: "500000",
      extra: { channelState: { balance: "500000", totalClaimed: "0" } },
    });
    expect(await facilitator.settle(claim.payment, claim.requirements)).toMatchObject({
      success: true,
      transaction: lateClaim.transaction,
    });
    expect(await usdc.nonceOf(signer)).toBe(sent);
    expect(await channelOf(open)).toEqual([1_000_000n, 50_000n]);
    const { rows } = await db.query("SELECT kind, state, authorized FROM facilitator_channel_actions");
    expect(rows).toEqual([{ kind: "claim", state: "settled", authorized: false }]);
  });
});
