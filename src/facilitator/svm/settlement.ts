/**
 * /settle of a Solana payment (facilitator.ts): claimed by one request in the ledger, settled by the SDK's scheme
 * (whose signer, signer.ts, reserves the fee and records the signature before sending), its outcome recorded,
 * and its success answered once whatever else asks for it.
 */
import type { x402Facilitator } from "@x402/core/facilitator";
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  VerifyResponse,
} from "@x402/core/types";
import type { Database } from "../../common/db/index.ts";
import { sleep } from "../../common/sleep.ts";
import type { GasBudgets, Grant } from "../access/index.ts";
import { type AuthorizationKey, keyString } from "../authorization.ts";
import {
  claim,
  claimDelivery,
  findAuthorization,
  type LedgerRow,
  reclaimStale,
} from "../authorization-ledger.ts";
import {
  KEY_OVER_BUDGET,
  PAYMENT_NOT_VERIFIED,
  SETTLEMENT_IN_PROGRESS,
  SETTLEMENT_PENDING,
} from "../error-codes.ts";
import type { InFlight } from "../inflight.ts";
import { settleFailure } from "../settle-answer.ts";
import { STALE_CLAIM_SECONDS } from "../settle-context.ts";
import { markSvmFailed, markSvmSettled, releaseSvmUnsent } from "./ledger.ts";
import { type Signing, type StatusOf, WEI_PER_LAMPORT } from "./signer.ts";
import type { SvmPayment } from "./transaction.ts";

/** `@x402/svm`'s reason for a transaction already settled. */
export const DUPLICATE_SETTLEMENT = "duplicate_settlement";

/** A checked request: its transaction read, its ledger key and content digest. */
export interface Checked {
  payment: SvmPayment;
  key: AuthorizationKey;
  digest: string;
  payer: string;
}

/** What a settlement needs of its facilitator. */
export interface SvmContext {
  db: Database;
  sdk: x402Facilitator;
  network: Network;
  budgets: GasBudgets;
  signing: Map<string, Signing>;
  statusOf: StatusOf;
  inflight: InFlight;
  /** Answers whose success was claimed by the statement that recorded the settlement. */
  deliveredHere: WeakSet<SettleResponse>;
  confirmationTimeoutMs: number;
  /** /verify's check and record, for a payment never verified (x402's `upfront` flow). */
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
}

/** A payment's /settle: one settlement per payment, its success answered to one caller. */
export async function settleSvm(
  ctx: SvmContext,
  checked: Checked,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  grant?: Grant,
): Promise<SettleResponse> {
  const { db, network, inflight, deliveredHere } = ctx;
  const { answered, shared } = await inflight.share(keyString(checked.key), checked.digest, () =>
    settleOnce(ctx, checked, payload, requirements, grant),
  );
  if (!answered.success || (!shared && deliveredHere.has(answered))) return answered;
  if (await claimDelivery(db, checked.key)) return answered;
  return settleFailure(
    network,
    DUPLICATE_SETTLEMENT,
    `this payment was settled in transaction ${answered.transaction} and its success already answered to another /settle: pay again for another delivery`,
    answered.payer,
  );
}

/** Claims the verified row and settles it, or answers what the row says once another request decided it. */
async function settleOnce(
  ctx: SvmContext,
  checked: Checked,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  grant: Grant | undefined,
): Promise<SettleResponse> {
  const { db, network, confirmationTimeoutMs } = ctx;
  const { key, digest, payer } = checked;
  const amount = BigInt(requirements.amount);
  const deadline = Date.now() + confirmationTimeoutMs;
  let unverified = true;
  for (;;) {
    if (await claim(db, key, digest, amount, 2))
      return settleClaimed(ctx, checked, payload, requirements, grant);
    const row = await findAuthorization(db, key);
    if (!row && unverified) {
      // Never verified (x402's `upfront` flow sends no /verify): verified now, then claimed.
      unverified = false;
      const verified = await ctx.verify(payload, requirements);
      if (!verified.isValid)
        return settleFailure(
          network,
          verified.invalidReason ?? PAYMENT_NOT_VERIFIED,
          verified.invalidMessage,
          payer,
        );
      continue;
    }
    if (!row || row.digest !== digest)
      return settleFailure(
        network,
        PAYMENT_NOT_VERIFIED,
        "settle only what /verify accepted: verify this payment first",
        payer,
      );
    if (row.state === "verified") continue;
    if (row.state !== "submitting") return rowAnswer(ctx, row, payer);
    if (await reclaimStale(db, key, STALE_CLAIM_SECONDS))
      return settleClaimed(ctx, checked, payload, requirements, grant);
    if (Date.now() > deadline) return rowAnswer(ctx, row, payer);
    await sleep(100);
  }
}

/** The SDK's settle of a claimed payment, its outcome recorded. */
async function settleClaimed(
  ctx: SvmContext,
  checked: Checked,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  grant: Grant | undefined,
): Promise<SettleResponse> {
  const { db, sdk, network, budgets, signing, statusOf, deliveredHere } = ctx;
  const { key, payer, payment } = checked;
  const current: Signing = { key, keyed: grant !== undefined };
  signing.set(payment.messageHash, current);
  if (grant) budgets.begin(key, grant, "exact");
  try {
    const answer = await sdk.settle(payload, requirements);
    const fee = payment.feeLamports * WEI_PER_LAMPORT;
    const signature = current.signature;
    if (answer.success && signature) {
      const row = await markSvmSettled(db, key, signature, current.slot ?? null, true);
      if (grant) await budgets.charge(key, fee, signature);
      const settled = { success: true, transaction: signature, network, payer } satisfies SettleResponse;
      if (row) deliveredHere.add(settled);
      return settled;
    }
    if (signature && answer.transaction && answer.errorReason !== SETTLEMENT_PENDING) {
      // Landed and failed: the fee was paid all the same.
      await markSvmFailed(db, key, signature, {
        reason: answer.errorReason ?? "invalid_exact_svm_transaction_failed",
        message: answer.errorMessage,
        slot: current.slot ?? null,
      });
      if (grant) await budgets.charge(key, fee, signature);
      return answer;
    }
    if (signature && answer.errorReason === SETTLEMENT_PENDING)
      return pendingAnswer(network, signature, payer);
    // Nothing reached the chain that anyone can see: the row goes back to verified, and a retry signs the
    // very same bytes again (Ed25519 is deterministic), which the chain would take once at most.
    if (signature && (await statusOf(signature).catch(() => undefined)))
      return pendingAnswer(network, signature, payer);
    const reason = current.refusal ? KEY_OVER_BUDGET : (answer.errorReason ?? "unexpected_settle_error");
    const message = current.refusal ?? answer.errorMessage ?? "the transaction was not sent";
    await releaseSvmUnsent(db, key, reason, message);
    if (grant) await budgets.release(key);
    return settleFailure(network, reason, message, payer);
  } finally {
    signing.delete(payment.messageHash);
    if (grant) budgets.end(key);
  }
}

function pendingAnswer(network: Network, signature: string, payer: string): SettleResponse {
  return settleFailure(
    network,
    SETTLEMENT_PENDING,
    `transaction ${signature} is sent but not yet confirmed: settle again later for its outcome`,
    payer,
    signature,
  );
}

/** A row another request decided (or is deciding), as an answer; a pending one looked up on chain first. */
async function rowAnswer(ctx: SvmContext, row: LedgerRow, payer: string): Promise<SettleResponse> {
  const { db, network, statusOf } = ctx;
  switch (row.state) {
    case "settled":
      return { success: true, transaction: row.tx_hash ?? "", network, payer };
    case "failed":
      return settleFailure(
        network,
        row.error_reason ?? "invalid_exact_svm_transaction_failed",
        row.error_message ?? undefined,
        payer,
      );
    case "pending": {
      const signature = row.tx_hash ?? "";
      const status = await statusOf(signature).catch(() => undefined);
      if (!status) return pendingAnswer(network, signature, payer);
      const key = { network: row.network, asset: row.asset, payer: row.payer, nonce: row.nonce };
      if (status.err) {
        await markSvmFailed(db, key, signature, {
          reason: "invalid_exact_svm_transaction_failed",
          slot: status.slot,
        });
      } else await markSvmSettled(db, key, signature, status.slot, false);
      const now = await findAuthorization(db, key);
      return now && now.state !== "pending"
        ? rowAnswer(ctx, now, payer)
        : pendingAnswer(network, signature, payer);
    }
    case "submitting":
      return settleFailure(
        network,
        SETTLEMENT_IN_PROGRESS,
        "another request is submitting this payment",
        payer,
      );
    case "verified":
      return settleFailure(
        network,
        row.error_reason ?? "unexpected_settle_error",
        row.error_message ?? undefined,
        payer,
      );
  }
}
