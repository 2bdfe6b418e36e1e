/**
 * EIP-3009 settlements found in a run of USDC logs.
 *
 * `transferWithAuthorization` (and `receiveWithAuthorization`) mark the authorization as used, then
 * move the money: `AuthorizationUsed` at log n and `Transfer(authorizer -> payee)` at log n + 1 of the
 * same transaction, as Circle's FiatToken and the devnet's token both do. One transaction may carry
 * several settlements (a facilitator batching them through a contract): each pair is one settlement,
 * keyed by its Transfer log. Whether a settlement is an x402 payment depends on who sent the
 * transaction, which logs do not say: see `classify.ts`.
 */
import type { TransferLog, UsdcLog } from "./decode.ts";

export interface Settlement {
  /** The Transfer log of the pair; its (tx, logIndex) is the payment's key. */
  transfer: TransferLog;
}

export interface PairedLogs {
  settlements: Settlement[];
  /** Every Transfer that is not the second half of a settlement (mints, burns, plain transfers). */
  transfers: TransferLog[];
  /** AuthorizationUsed logs without their Transfer (none on USDC; counted for the logs, not stored). */
  unpaired: number;
}

/**
 * Pairs AuthorizationUsed with the Transfer that follows it. `logs` must be in chain order (block, then
 * log index), as eth_getLogs returns them; only USDC logs of the two kinds are expected.
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
    const next = logs[i + 1];
    if (
      next?.kind === "transfer" &&
      next.tx === log.tx &&
      next.block === log.block &&
      next.logIndex === log.logIndex + 1 &&
      next.from === log.authorizer
    ) {
      settlements.push({ transfer: next });
      i++;
    } else {
      unpaired++;
    }
  }
  return { settlements, transfers, unpaired };
}
