/**
 * The periodic pass over unresolved rows: pending ones are looked at on chain once (never sent again), and
 * claims abandoned before broadcasting by a process that died are released.
 */
import { keyString } from "./authorization.ts";
import { keyOf, listUnresolved, reclaimStale, release } from "./authorization-ledger.ts";
import { conclude } from "./conclude.ts";
import { SETTLEMENT_PENDING, UNEXPECTED_SETTLE_ERROR } from "./error-codes.ts";
import { checkPending } from "./pending-check.ts";
import { type SettleContext, STALE_CLAIM_SECONDS } from "./settle-context.ts";

/** Pending rows looked at per periodic pass. */
const RESOLVE_BATCH = 100;

export interface ResolveSummary {
  /** Rows looked at. */
  checked: number;
  /** Rows that reached a final state (settled or failed) or were released. */
  resolved: number;
}

export async function resolvePending(ctx: SettleContext): Promise<ResolveSummary> {
  const { db } = ctx;
  const rows = await listUnresolved(db, ctx.scope.network, RESOLVE_BATCH);
  let resolved = 0;
  for (const row of rows) {
    // A request of this process is deciding it right now.
    if (ctx.inflight.has(keyString(keyOf(row)))) continue;
    if (row.state === "submitting") {
      if (await reclaimStale(db, keyOf(row), STALE_CLAIM_SECONDS)) {
        await release(
          db,
          keyOf(row),
          UNEXPECTED_SETTLE_ERROR,
          "a settlement was abandoned before broadcasting",
        );
        await ctx.gas.release(keyOf(row));
        resolved++;
      }
      continue;
    }
    const answered = await conclude(ctx, row, await checkPending(ctx, row, 0));
    if (answered.errorReason !== SETTLEMENT_PENDING) resolved++;
  }
  return { checked: rows.length, resolved };
}
