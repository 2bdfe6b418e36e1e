/**
 * The facilitator's upto scheme: a buyer signs a Permit2 maximum with the SDK's own client, the merchant
 * settles what it metered (at most that), through the project's ledger, on the devnet's Permit2 and upto
 * proxy. Concurrent settles of one payment move money once; a wallet that covers one call of two pays one.
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { type Facilitator, reasons } from "../../src/facilitator/index.ts";
import { authorizationUsed } from "../../src/facilitator/outcome.ts";
import { permit2WalletHolding, useDevnet } from "../helpers/chain.ts";
import { DATABASE_KINDS, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { newMerchant, payUpto, uptoRequirementsFor, usdcReader } from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 3 });
let usdc: ReturnType<typeof usdcReader>;

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
});

const MAX = "1000000"; // 1 USDC

/** The settle requirements of a metered call: the verified ones with the amount taken. */
const metered = (requirements: PaymentRequirements, amount: bigint): PaymentRequirements => ({
  ...requirements,
  amount: amount.toString(),
});

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

async function ledgerRow(db: Database, payment: PaymentPayload) {
  const key = permit2Of(payment);
  const { rows } = await db.query<{ state: string; settled_amount: string | null; tx_hash: string | null }>(
    "SELECT state, settled_amount, tx_hash FROM facilitator_authorizations WHERE payer = $1 AND nonce = $2",
    [key.payer.toLowerCase(), key.nonce],
  );
  return rows[0];
}

describe.each(DATABASE_KINDS)("facilitator, upto scheme (ledger on %s)", (kind) => {
  let db: Database;
  let closeDb: () => Promise<void>;
  let facilitator: Facilitator;
  beforeAll(async () => {
    ({ db, close: closeDb } = await openTestDatabase(kind));
    facilitator = await devnetFacilitator(chain.devnet, db);
  });
  afterAll(async () => {
    await facilitator?.close();
    await closeDb?.();
  });

  const requirementsFor = (merchant: `0x${string}`, max = MAX) =>
    uptoRequirementsFor(merchant, max, facilitator.address);

  it("verifies the signed maximum and settles the metered amount: the buyer pays exactly that", async () => {
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant);
    const payment = await payUpto(buyer, requirements);
    const before = await usdc.balanceOf(buyer.address);

    const verified = await facilitator.verify(payment, requirements);
    expect(verified, JSON.stringify(verified)).toMatchObject({ isValid: true, payer: buyer.address });
    expect(await ledgerRow(db, payment)).toMatchObject({ state: "verified", settled_amount: null });

    const settled = await facilitator.settle(payment, metered(requirements, 370_000n));
    expect(settled, JSON.stringify(settled)).toMatchObject({
      success: true,
      payer: buyer.address,
      amount: "370000",
      network: "eip155:8453",
    });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 370_000n);
    expect(await usdc.balanceOf(merchant)).toBe(370_000n);
    expect(await ledgerRow(db, payment)).toMatchObject({
      state: "settled",
      settled_amount: "370000",
      tx_hash: settled.transaction.toLowerCase(),
    });
    expect(await authorizationUsed(usdc.client, permit2Of(payment))).toBe(true);

    // Delivered once: a repeat is told the payment is used, and nothing moves.
    const again = await facilitator.settle(payment, metered(requirements, 370_000n));
    expect(again).toMatchObject({ success: false, errorReason: reasons.NONCE_ALREADY_USED });
    expect(await facilitator.verify(payment, requirements)).toMatchObject({
      isValid: false,
      invalidReason: reasons.NONCE_ALREADY_USED,
    });
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 370_000n);
  });

  it("settles one payment sent eight times at once exactly once", async () => {
    const buyer = chain.devnet.buyers[1] as DevnetAccount;
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant);
    const payment = await payUpto(buyer, requirements);
    const before = await usdc.balanceOf(buyer.address);
    expect(await facilitator.verify(payment, requirements)).toMatchObject({ isValid: true });

    const answers = await Promise.all(
      Array.from({ length: 8 }, () => facilitator.settle(payment, metered(requirements, 250_000n))),
    );
    const successes = answers.filter((a) => a.success);
    expect(successes, JSON.stringify(answers)).toHaveLength(1);
    expect(answers.filter((a) => !a.success).map((a) => a.errorReason)).toEqual(
      Array(7).fill(reasons.NONCE_ALREADY_USED),
    );
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 250_000n);
    expect(await usdc.balanceOf(merchant)).toBe(250_000n);
  });

  it("settles nothing for a metered 0, and spends the payment all the same", async () => {
    const buyer = chain.devnet.buyers[2] as DevnetAccount;
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant);
    const payment = await payUpto(buyer, requirements);
    const before = await usdc.balanceOf(buyer.address);
    expect(await facilitator.verify(payment, requirements)).toMatchObject({ isValid: true });

    const zero = await facilitator.settle(payment, metered(requirements, 0n));
    expect(zero).toMatchObject({ success: true, transaction: "", amount: "0", payer: buyer.address });
    expect(await ledgerRow(db, payment)).toMatchObject({
      state: "settled",
      settled_amount: "0",
      tx_hash: null,
    });
    expect(await usdc.balanceOf(buyer.address)).toBe(before);
    // The signature could still move money on chain, but this facilitator is the only one allowed to send it.
    expect(await authorizationUsed(usdc.client, permit2Of(payment))).toBe(false);
    const later = await facilitator.settle(payment, metered(requirements, 500_000n));
    expect(later).toMatchObject({ success: false, errorReason: reasons.NONCE_ALREADY_USED });
    expect(await usdc.balanceOf(buyer.address)).toBe(before);
  });

  it("refuses more than the maximum and leaves the payment usable for what it allows", async () => {
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, "200000");
    const payment = await payUpto(buyer, requirements);
    expect(await facilitator.verify(payment, requirements)).toMatchObject({ isValid: true });

    const over = await facilitator.settle(payment, metered(requirements, 200_001n));
    expect(over).toMatchObject({ success: false, transaction: "" });
    expect(await usdc.balanceOf(merchant)).toBe(0n);
    expect(await ledgerRow(db, payment)).toMatchObject({ state: "verified" });

    expect(await facilitator.settle(payment, metered(requirements, 200_000n))).toMatchObject({
      success: true,
      amount: "200000",
    });
    expect(await usdc.balanceOf(merchant)).toBe(200_000n);
  });

  it("refuses a payment signed for another facilitator, at /settle too, where it is verified first", async () => {
    const buyer = chain.devnet.buyers[1] as DevnetAccount;
    const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
    const requirements = uptoRequirementsFor(newMerchant(), MAX, elsewhere);
    const payment = await payUpto(buyer, requirements);
    const refused = await facilitator.verify(payment, requirements);
    expect(refused).toMatchObject({ isValid: false });
    expect(await facilitator.settle(payment, metered(requirements, 1n))).toMatchObject({
      success: false,
      errorReason: refused.invalidReason,
      transaction: "",
    });
  });

  it("of two calls a wallet can pay only one of, settled at once, settles one and refuses the other", async () => {
    const wallet = await permit2WalletHolding(chain.devnet, 600_000n);
    const merchant = newMerchant();
    // Each call may cost up to 0.6 USDC; the wallet holds 0.6 in all.
    const requirements = requirementsFor(merchant, "600000");
    const payments = [await payUpto(wallet, requirements), await payUpto(wallet, requirements)];
    for (const payment of payments) {
      expect(await facilitator.verify(payment, requirements)).toMatchObject({ isValid: true });
    }

    const answers = await Promise.all(
      payments.map((payment) => facilitator.settle(payment, metered(requirements, 500_000n))),
    );
    expect(
      answers.filter((a) => a.success),
      JSON.stringify(answers),
    ).toHaveLength(1);
    const refused = answers.find((a) => !a.success);
    expect(refused?.errorReason).toMatch(
      /insufficient_funds|simulation_failed|transaction_failed|transaction_state/,
    );
    expect(await usdc.balanceOf(wallet.address)).toBe(100_000n);
    expect(await usdc.balanceOf(merchant)).toBe(500_000n);
  });
});
