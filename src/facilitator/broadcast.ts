/**
 * Where a claimed authorization's settlement is broadcast: the SDK re-verifies it, signs through our signer
 * (which records the hash before sending, submitter.ts), broadcasts and waits for the receipt; then the
 * ledger records what happened, or the authorization is released when nothing was sent.
 */
import type { SettleResponse } from "@x402/core/types";
import { log } from "../common/log.ts";
import type { Grant, KeyedSettlement } from "./access/index.ts";
import { actionOf, amountAtStake, type CheckedPayment } from "./authorization.ts";
import {
  findAuthorization,
  markSettled,
  markSettledWithoutTransfer,
  release,
} from "./authorization-ledger.ts";
import { withSubject } from "./call-subject.ts";
import { conclude } from "./conclude.ts";
import {
  INSUFFICIENT_FUNDS,
  PAYMENT_NOT_VERIFIED,
  SETTLEMENT_PENDING,
  UNEXPECTED_SETTLE_ERROR,
} from "./error-codes.ts";
import { balanceOf, fundsSuspected, lackOfFunds } from "./funds.ts";
import { settlementCost } from "./outcome.ts";
import { checkPending } from "./pending-check.ts";
import { payerOf, rowAnswer, settleFailure } from "./settle-answer.ts";
import type { SettleContext } from "./settle-context.ts";
import { unsentFailure } from "./settle-failures.ts";
import { takeReceipt } from "./signer-hooks.ts";

/**
 * The claimed submission, once the payer's other settlements in flight leave it the money: broadcast
 * against money they claim, it would revert on chain at the facilitator's cost (payer-funds.ts).
 */
export async function broadcast(
  ctx: SettleContext,
  payment: CheckedPayment,
  grant: Grant | undefined,
): Promise<SettleResponse> {
  const { lacking, leave } = await ctx.payerFunds.enter(
    { asset: payment.requirements.asset, payer: payment.terms.payer },
    amountAtStake(payment),
    () => balanceOf(ctx.client, payment),
  );
  try {
    if (lacking === undefined) return await broadcastClaimed(ctx, payment, grant);
    await release(ctx.db, payment.key, INSUFFICIENT_FUNDS, lacking);
    return settleFailure(ctx.scope.network, INSUFFICIENT_FUNDS, lacking, payment.terms.payer);
  } finally {
    leave();
  }
}

/** The SDK re-verifies, signs through our signer (hash recorded), waits. */
async function broadcastClaimed(
  ctx: SettleContext,
  payment: CheckedPayment,
  grant: Grant | undefined,
): Promise<SettleResponse> {
  const { db, client } = ctx;
  const network = ctx.scope.network;
  const { result, keyed } = await sdkSettle(ctx, payment, grant);
  const recorded = await recordSuccess(ctx, payment, result, keyed);
  if (recorded) return recorded;
  const row = await findAuthorization(db, payment.key);
  if (!row) return settleFailure(network, PAYMENT_NOT_VERIFIED, "the authorization left the ledger");
  if (row.tx_hash) takeReceipt(ctx.receiptBlocks, row.tx_hash);
  if (row.state === "submitting") {
    // Nothing was broadcast (refused before signing, or by the node): the authorization stays usable.
    if (keyed && keyed.reserved > 0n) await ctx.gas.release(payment.key);
    const refusal = keyed?.refusal;
    const lacking =
      !refusal && fundsSuspected(result.errorReason) ? await lackOfFunds(client, payment) : undefined;
    const { reason, message } = unsentFailure(result, refusal, lacking);
    await release(db, payment.key, reason, message);
    return settleFailure(network, reason, message, payerOf(row));
  }
  if (row.state !== "pending" || !row.tx_hash) return rowAnswer(network, row);
  if (!result.success && result.errorReason === SETTLEMENT_PENDING) return rowAnswer(network, row);
  // Any other answer about a broadcast transaction: the chain, not the SDK's reading, decides.
  return conclude(ctx, row, await checkPending(ctx, row, 0));
}

/** The SDK's settle of the payment, with its gas reserved against the key's budget when it has a `grant`. */
async function sdkSettle(
  ctx: SettleContext,
  payment: CheckedPayment,
  grant: Grant | undefined,
): Promise<{ result: SettleResponse; keyed: KeyedSettlement | undefined }> {
  let result: SettleResponse;
  // The SDK re-verifies first (no simulation at settle: the gas estimate is one) and reads the payer's
  // code twice doing so: once is enough.
  const hold = ctx.reads.hold({ code: [payment.terms.payer] });
  const keyed: KeyedSettlement | undefined = grant
    ? ctx.budgets.begin(payment.key, grant, actionOf(payment.signed, payment.requirements.scheme))
    : undefined;
  try {
    result = await withSubject({ kind: "authorization", key: payment.key }, () =>
      ctx.sponsoring.settle(payment, (payload) => ctx.sdk.settle(payload, payment.requirements)),
    );
  } catch (error) {
    // The first line only: a viem error's further lines can carry the call's arguments (the signature).
    log("error", "settlement threw", { error });
    result = settleFailure(ctx.scope.network, UNEXPECTED_SETTLE_ERROR, (error as Error)?.message);
  } finally {
    hold.release();
    if (keyed) ctx.budgets.end(payment.key);
  }
  return { result, keyed };
}

/**
 * The SDK's success recorded: the answer, or undefined when the row was not where the success says it is
 * (the ledger then decides).
 */
async function recordSuccess(
  ctx: SettleContext,
  payment: CheckedPayment,
  result: SettleResponse,
  keyed: KeyedSettlement | undefined,
): Promise<SettleResponse | undefined> {
  const { db, client, gas } = ctx;
  const network = ctx.scope.network;
  if (result.success && !result.transaction && amountAtStake(payment) === 0n) {
    // upto with nothing to take: the SDK sent nothing. The authorization is spent all the same.
    const settled = await markSettledWithoutTransfer(db, payment.key);
    if (settled) return rowAnswer(network, settled, await ctx.recordInBazaar(settled));
  } else if (result.success) {
    // The usual case in one statement: the row is settled only if it is pending with this very
    // transaction (what reading it first would have checked), and the update answers with the row.
    const hash = result.transaction.toLowerCase();
    const receipt = takeReceipt(ctx.receiptBlocks, hash);
    const settled = await markSettled(db, payment.key, hash, receipt?.block ?? null, true);
    if (settled) {
      // The SDK waited for this receipt (`onReceipt`); read again only if it somehow did not.
      if (receipt) gas.count(receipt.cost);
      else
        await client
          .getTransactionReceipt({ hash: hash as `0x${string}` })
          .then(async (mined) => gas.count(await settlementCost(client, mined)))
          .catch((error: unknown) => log("warn", "a settlement's gas could not be read", { hash, error }));
      if (keyed && keyed.reserved > 0n) {
        const cost = receipt?.cost;
        if (cost !== undefined) await gas.charge(payment.key, cost, hash);
        else await gas.chargeMined(payment.key, hash);
      }
      const answer = rowAnswer(network, settled, await ctx.recordInBazaar(settled));
      // A deposit's answer carries the channel's state as the SDK read it after its receipt.
      const response =
        result.extra && payment.signed.method === "deposit" ? { ...answer, extra: result.extra } : answer;
      ctx.deliveredWhenSettled.add(response);
      return response;
    }
  }
  return undefined;
}
