/**
 * POST /settle: settle an authorization that /verify accepted, at most once, whatever arrives.
 *
 * - Only a verified authorization is settled: its ledger row must exist with the same signed content. One
 *   that has no row is verified here first, as /verify would (x402's `upfront` flow sends no /verify).
 * - One transaction per authorization: the row is claimed by a conditional UPDATE (verified ->
 *   submitting) that exactly one request wins; identical concurrent requests in this process share that
 *   request's answer, and requests elsewhere wait for the row to move on.
 * - The transaction's hash is in the ledger before it is broadcast (broadcast.ts). A receipt that does not
 *   come within the confirmation timeout makes the answer "pending" (`settlement_pending` with the hash),
 *   never "failed"; pending rows are resolved later by looking at the chain (a later /settle of the same
 *   authorization, or the periodic check: conclude.ts, resolve-pending.ts), never by sending again.
 * - One success per authorization: of all the /settle calls that find it settled (the one that settled
 *   it, identical concurrent ones, retries of a pending one, repeats), the first to claim its delivery
 *   gets `success` (the one that settled it claims it in the statement that records the settlement);
 *   every other gets `invalid_exact_evm_nonce_already_used`, as the official facilitator answers a used
 *   nonce. A stock resource server, which verifies and settles every
 *   request carrying the same payment, then delivers it once. A failure is answered to every caller.
 */
import type { SettleResponse, VerifyResponse } from "@x402/core/types";
import { sleep } from "../common/sleep.ts";
import type { Grant } from "./access/index.ts";
import { amountAtStake, type CheckedPayment, keyString } from "./authorization.ts";
import { claim, claimDelivery, findAuthorization, reclaimStale } from "./authorization-ledger.ts";
import { broadcast } from "./broadcast.ts";
import { withChannelState } from "./channels/state.ts";
import { conclude } from "./conclude.ts";
import { PAYMENT_NOT_VERIFIED } from "./error-codes.ts";
import { InFlight } from "./inflight.ts";
import { createPayerFunds } from "./payer-funds.ts";
import { checkPending } from "./pending-check.ts";
import { type ResolveSummary, resolvePending } from "./resolve-pending.ts";
import { alreadyDelivered, rowAnswer, settleFailure } from "./settle-answer.ts";
import { type SettleContext, type SettlementOptions, STALE_CLAIM_SECONDS } from "./settle-context.ts";
import { SettlementGas } from "./settlement-gas.ts";
import { checkPayment } from "./wire.ts";

/** How often a request waiting for another process's claim looks at the row again. */
const CLAIM_POLL_MS = 100;

export interface Settlement {
  /** With a `grant`, the settlement's gas is reserved against the key's budget before it is signed. */
  settle(payload: unknown, requirements: unknown, grant?: Grant): Promise<SettleResponse>;
  /** Looks at every pending settlement on chain once and records the final ones. */
  resolvePending(): Promise<ResolveSummary>;
  /** Waits for the settlements under way. */
  drain(): Promise<void>;
}

export function createSettlement(options: SettlementOptions): Settlement {
  const ctx: SettleContext = {
    ...options,
    gas: new SettlementGas(options.budgets, options.client),
    payerFunds: createPayerFunds(),
    inflight: new InFlight(),
    deliveredWhenSettled: new WeakSet<SettleResponse>(),
  };
  const { db, scope } = options;
  const network = scope.network;

  return {
    async settle(payload, requirements, grant) {
      const checked = checkPayment(payload, requirements, scope);
      if (!checked.ok) return settleFailure(network, checked.reason, checked.message);
      const { payment } = checked;
      const { answered, shared } = await ctx.inflight.share(keyString(payment.key), payment.digest, () =>
        settleVerified(ctx, payment, grant, () => options.verify(payload, requirements)),
      );
      // A deposit's outcome is answered to every /settle of it: the server charges the request to its
      // channel's cumulative voucher, which refuses a second delivery, and a retry must learn the deposit
      // happened (its transaction, the channel's state) rather than that its nonce is used.
      if (payment.signed.method === "deposit") return withChannelState(ctx, payment, answered);
      if (!answered.success || (!shared && ctx.deliveredWhenSettled.has(answered))) return answered;
      if (await claimDelivery(db, payment.key)) return answered;
      return alreadyDelivered(network, answered);
    },

    resolvePending: () => resolvePending(ctx),

    drain: () => ctx.inflight.drain(),
  };
}

/** Claims the verified row and broadcasts, or answers what the row says once another request decided it. */
async function settleVerified(
  ctx: SettleContext,
  payment: CheckedPayment,
  grant: Grant | undefined,
  verifyFirst: () => Promise<VerifyResponse>,
): Promise<SettleResponse> {
  let unverified = true;
  const { db } = ctx;
  const network = ctx.scope.network;
  const payer = payment.terms.payer;
  const amount = amountAtStake(payment);
  const deadline = Date.now() + ctx.confirmationTimeoutMs;
  // The usual case first, in one statement: the row is verified with this very content. The claim's
  // condition is the one the loop below checks after reading the row.
  if (await claim(db, payment.key, payment.digest, amount, payment.version))
    return broadcast(ctx, payment, grant);
  for (;;) {
    const row = await findAuthorization(db, payment.key);
    if (!row && unverified) {
      // Never verified (the `upfront` flow): /verify's checks and its row now, then claimed as usual.
      unverified = false;
      const verified = await verifyFirst();
      if (!verified.isValid) {
        return settleFailure(
          network,
          verified.invalidReason ?? PAYMENT_NOT_VERIFIED,
          verified.invalidMessage ?? "the payment did not verify",
          payer,
        );
      }
      continue;
    }
    if (!row || row.digest !== payment.digest) {
      return settleFailure(
        network,
        PAYMENT_NOT_VERIFIED,
        "settle only what /verify accepted: verify this payment first",
        payer,
      );
    }
    switch (row.state) {
      case "verified":
        if (await claim(db, payment.key, payment.digest, amount, payment.version))
          return broadcast(ctx, payment, grant);
        break; // another request claimed it first: look again
      case "submitting":
        if (await reclaimStale(db, payment.key, STALE_CLAIM_SECONDS)) return broadcast(ctx, payment, grant);
        if (Date.now() > deadline) return rowAnswer(network, row);
        await sleep(CLAIM_POLL_MS);
        break;
      case "pending":
        return conclude(ctx, row, await checkPending(ctx, row, Math.max(0, deadline - Date.now())));
      case "settled":
      case "failed":
        return rowAnswer(network, row);
    }
  }
}
