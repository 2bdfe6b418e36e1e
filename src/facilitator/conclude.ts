/**
 * Records what the chain said about a pending row (settled, reverted, dropped, used elsewhere) and answers
 * accordingly; a row the chain has not decided stays pending. Whichever request or pass records a mined
 * transaction counts its gas and ends its key's reservation.
 */
import type { SettleResponse } from "@x402/core/types";
import { findAuthorization, keyOf, type LedgerRow, markFailed, markSettled } from "./authorization-ledger.ts";
import { PAYMENT_NOT_VERIFIED } from "./error-codes.ts";
import type { ChainOutcome } from "./outcome.ts";
import { rowAnswer, settleFailure } from "./settle-answer.ts";
import type { SettleContext } from "./settle-context.ts";
import { chainFailure } from "./settle-failures.ts";

export async function conclude(
  ctx: SettleContext,
  row: LedgerRow,
  outcome: ChainOutcome,
): Promise<SettleResponse> {
  const { db, gas } = ctx;
  const network = ctx.scope.network;
  const key = keyOf(row);
  const hash = row.tx_hash as string;
  switch (outcome.status) {
    case "pending":
      return rowAnswer(network, row);
    case "settled": {
      const settled = await markSettled(db, key, hash, outcome.blockNumber);
      if (settled) {
        gas.count(outcome.cost);
        await gas.chargeMined(key, hash);
        return rowAnswer(network, settled, await ctx.recordInBazaar(settled));
      }
      break;
    }
    case "reverted":
      if (await markFailed(db, key, hash, chainFailure(outcome, hash))) {
        // Reverted on chain: its gas was paid all the same.
        gas.count(outcome.cost);
        await gas.chargeMined(key, hash);
      }
      break;
    case "dropped":
    case "settled_elsewhere":
      if (await markFailed(db, key, hash, chainFailure(outcome, hash))) await gas.release(key);
      break;
  }
  // Ours or a racing request's update: the row now holds the decision.
  const now = await findAuthorization(db, key);
  return now
    ? rowAnswer(network, now)
    : settleFailure(network, PAYMENT_NOT_VERIFIED, "the authorization left the ledger");
}
