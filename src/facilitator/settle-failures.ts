/**
 * Why a settlement failed, as the ledger records it and /settle answers it: for a broadcast transaction the
 * chain decided against, and for an authorization nothing was broadcast for.
 */
import type { SettleResponse } from "@x402/core/types";
import type { KeyedSettlement } from "./access/index.ts";
import {
  INSUFFICIENT_FUNDS,
  SETTLED_ELSEWHERE,
  SETTLEMENT_DROPPED,
  UNEXPECTED_SETTLE_ERROR,
} from "./error-codes.ts";
import type { ChainOutcome } from "./outcome.ts";
import { INVALID_TRANSACTION_STATE } from "./settle-answer.ts";

export interface SettleFailure {
  reason: string;
  message?: string;
  blockNumber?: bigint;
}

/** The failure a chain outcome that ends a pending settlement without it records. */
export function chainFailure(
  outcome: Extract<ChainOutcome, { status: "reverted" | "dropped" | "settled_elsewhere" }>,
  hash: string,
): SettleFailure {
  switch (outcome.status) {
    case "reverted":
      return {
        reason: INVALID_TRANSACTION_STATE,
        message: `transaction ${hash} was mined in block ${outcome.blockNumber} without transferring`,
        blockNumber: outcome.blockNumber,
      };
    case "dropped":
      return {
        reason: SETTLEMENT_DROPPED,
        message: `transaction ${hash} was never mined and can no longer be: the payment did not happen`,
      };
    case "settled_elsewhere":
      return {
        reason: SETTLED_ELSEWHERE,
        message: "the authorization was used on chain by another transaction",
      };
  }
}

/**
 * Nothing was broadcast (refused before signing, or by the node): the authorization stays usable.
 * Funds moved away since /verify are said as the spec says it (`lacking`: what the balance lacks); a key
 * over its budget, as the gate.
 */
export function unsentFailure(
  result: SettleResponse,
  refusal: KeyedSettlement["refusal"],
  lacking: string | undefined,
): SettleFailure {
  return {
    reason:
      refusal?.reason ?? (lacking ? INSUFFICIENT_FUNDS : (result.errorReason ?? UNEXPECTED_SETTLE_ERROR)),
    message: refusal?.message ?? lacking ?? result.errorMessage,
  };
}
