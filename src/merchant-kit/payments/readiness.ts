/**
 * What a merchant host needs to take a payment, as `/readyz` checks it (src/common/health.ts): its state
 * database, its facilitator, and the chain it reads payers' balances from.
 */
import type { Database } from "../../common/db/index.ts";
import { type CheckFn, cachedCheck, chainCheck } from "../../common/health.ts";
import type { WatchedFacilitator } from "./facilitator-watch.ts";

export interface PaymentReadinessOptions {
  /** The merchant's state: the ledger, the endpoints' tables. */
  db: Database;
  facilitator: WatchedFacilitator;
  /**
   * The chain whose balances the host reads before guarded work (payments/funds.ts): checked when the host
   * has such an endpoint and reads the chain itself. None: no chain check.
   */
  rpcUrl?: string;
}

/**
 * The checks: `database` (a `SELECT 1`), `facilitator` (its watch's last outcome, or a fresh probe of
 * `/supported`: payments/facilitator-watch.ts), and with `rpcUrl` `chain` (`eth_blockNumber`).
 */
export function paymentReadiness(options: PaymentReadinessOptions): Record<string, CheckFn> {
  const { db, facilitator, rpcUrl } = options;
  return {
    database: cachedCheck("merchant database", async () => {
      await db.query("SELECT 1");
    }),
    facilitator: async () => {
      const health = await facilitator.health();
      return health.reachable
        ? { ok: true }
        : { ok: false, reason: `cannot be reached: ${health.error}`, since: health.since };
    },
    ...(rpcUrl !== undefined && { chain: chainCheck(rpcUrl, "merchant chain") }),
  };
}
