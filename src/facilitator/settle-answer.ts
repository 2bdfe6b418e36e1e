/**
 * What /settle answers, from what it decided or from what the ledger's row of the authorization says.
 */
import type { Network, SettleResponse } from "@x402/core/types";
import { signedOf, termsOf } from "./authorization.ts";
import type { LedgerRow } from "./authorization-ledger.ts";
import type { BazaarOutcome } from "./bazaar.ts";
import {
  NONCE_ALREADY_USED,
  SETTLEMENT_IN_PROGRESS,
  SETTLEMENT_PENDING,
  UNEXPECTED_SETTLE_ERROR,
} from "./error-codes.ts";

/** The spec's reason for a transaction that was mined but failed. */
export const INVALID_TRANSACTION_STATE = "invalid_transaction_state";

export function settleFailure(
  network: Network,
  reason: string,
  message?: string,
  payer?: string,
  transaction = "",
): SettleResponse {
  return {
    success: false,
    errorReason: reason,
    ...(message ? { errorMessage: message } : {}),
    ...(payer ? { payer } : {}),
    transaction,
    network,
  };
}

/** What a row says, for a request that finds it already decided (or being decided). */
export function rowAnswer(network: Network, row: LedgerRow, bazaar?: BazaarOutcome): SettleResponse {
  const payer = payerOf(row);
  switch (row.state) {
    case "settled":
      return {
        success: true,
        payer,
        transaction: row.tx_hash ?? "",
        network,
        // upto says what it took, a deposit what it put in the channel, as the SDK's facilitator does.
        ...(row.payment_requirements.scheme !== "exact" ? { amount: row.settled_amount ?? "0" } : {}),
        ...(bazaar ? { extensionResponses: { bazaar } } : {}),
      };
    case "pending":
      return settleFailure(
        network,
        SETTLEMENT_PENDING,
        `transaction ${row.tx_hash} is broadcast but not yet confirmed: settle again later for its outcome`,
        payer,
        row.tx_hash ?? "",
      );
    case "failed":
      // The hash only when the transaction exists on chain (mined and reverted).
      return settleFailure(
        network,
        row.error_reason ?? INVALID_TRANSACTION_STATE,
        row.error_message ?? undefined,
        payer,
        row.block_number !== null && row.tx_hash ? row.tx_hash : "",
      );
    case "submitting":
      return settleFailure(
        network,
        SETTLEMENT_IN_PROGRESS,
        "another request is submitting this authorization",
        payer,
      );
    case "verified":
      return settleFailure(
        network,
        row.error_reason ?? UNEXPECTED_SETTLE_ERROR,
        row.error_message ?? undefined,
        payer,
      );
  }
}

/** A success someone else already got: every later caller is told the nonce is used, as the spec says it. */
export function alreadyDelivered(network: Network, delivered: SettleResponse): SettleResponse {
  return settleFailure(
    network,
    NONCE_ALREADY_USED,
    `this authorization was settled in transaction ${delivered.transaction} and its success already answered to another /settle: pay again for another delivery`,
    delivered.payer,
  );
}

export function payerOf(row: LedgerRow): string {
  return termsOf(signedOf(row.payment_payload)).payer;
}
