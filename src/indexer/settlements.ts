/**
 * x402 settlements found in a run of USDC and upto-proxy logs.
 *
 * - exact (EIP-3009): `transferWithAuthorization` (and `receiveWithAuthorization`) mark the authorization
 *   as used, then move the money: `AuthorizationUsed` at log n and `Transfer(authorizer -> payee)` at log
 *   n + 1 of the same transaction, as Circle's FiatToken and the devnet's token both do.
 * - upto (Permit2): the x402 upto proxy has Permit2 move the money (`Transfer(payer -> payee)`), then emits
 *   `Settled()` (or `SettledWithPermit()`): the Transfer is the last USDC log before it in the transaction.
 *   USDC logs of other kinds are not fetched, so it is the log just before, of the same transaction.
 *
 * One transaction may carry several settlements (a facilitator batching them through a contract): each
 * pair is one settlement, keyed by its Transfer log. Whether a settlement is an x402 payment depends on who
 * sent the transaction, which logs do not say: see `classify.ts`.
 */
import type { TransferLog, UsdcLog } from "./decode.ts";

export interface Settlement {
  /** The Transfer log of the pair; its (tx, logIndex) is the payment's key. */
  transfer: TransferLog;
  /** How it was paid: an EIP-3009 authorization (exact) or Permit2 through the upto proxy. */
  scheme: "exact" | "upto";
}

export interface PairedLogs {
  settlements: Settlement[];
  /** Every Transfer that is not the second half of a settlement (mints, burns, plain transfers). */
  transfers: TransferLog[];
  /** AuthorizationUsed or Settled logs without their Transfer (none on USDC; counted, not stored). */
  unpaired: number;
}

/**
 * Pairs each AuthorizationUsed with the Transfer that follows it, and each upto Settled with the Transfer
 * before it. `logs` must be in chain order (block, then log index), as eth_getLogs returns them; only the
 * logs `decodeLog` knows are expected.
 */
export function pairSettlements(logs: readonly UsdcLog[]): PairedLogs {
  const settlements: Settlement[] = [];
  const transfers: TransferLog[] = [];
  let unpaired = 0;
  for (let i = 0; i < logs.length; i++) {
    const log = logs[i] as UsdcLog;
    if (log.kind === "transfer") {
      transfers.push(log);
      continue;
    }
    if (log.kind === "upto") {
      const previous = logs[i - 1];
      const last = transfers[transfers.length - 1];
      // The Transfer just before, not already taken by an earlier settlement (it is still the last plain one).
      if (
        previous?.kind === "transfer" &&
        previous === last &&
        previous.tx === log.tx &&
        previous.block === log.block
      ) {
        transfers.pop();
        settlements.push({ transfer: previous, scheme: "upto" });
      } else {
        unpaired++;
      }
      continue;
    }
    const next = logs[i + 1];
    if (
      next?.kind === "transfer" &&
      next.tx === log.tx &&
      next.block === log.block &&
      next.logIndex === log.logIndex + 1 &&
      next.from === log.authorizer
    ) {
      settlements.push({ transfer: next, scheme: "exact" });
      i++;
    } else {
      unpaired++;
    }
  }
  return { settlements, transfers, unpaired };
}
