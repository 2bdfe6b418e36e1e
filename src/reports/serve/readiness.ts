import type { Analytics } from "../../analytics/duckdb.ts";
import { type CheckFn, cachedCheck } from "../../common/health.ts";
import type { Follower } from "../../indexer/index.ts";

/**
 * The service's health: `degraded` while its data lags (its indexer's RPC fails, or it is behind), with
 * the details under their own names (`indexer`). `/healthz` answers 200 either way: the reports are
 * served from what is stored, each saying the block its window ends at, so a load balancer keeps
 * sending traffic; monitoring reads `status` and the lag.
 */
export interface ServiceHealth {
  status: "ok" | "degraded";
  [detail: string]: unknown;
}

/**
 * What the report service needs to serve: `analytics`, its database answers; for each indexer following a
 * chain (`follower()`, undefined until it has started), `indexer` (`indexer_<chain>` when several are
 * followed), always ok: reports are served from what is stored however far it lags, and the body says how
 * far (`lag_blocks`, `lag_seconds`, its RPC's state), as `/healthz` does.
 */
export function reportReadiness(
  analytics: Analytics,
  followed: readonly { chain: string; follower: () => Follower | undefined }[] = [],
): Record<string, CheckFn> {
  const checks: Record<string, CheckFn> = {
    analytics: cachedCheck("analytics", async () => {
      await analytics.one("SELECT 1");
    }),
  };
  for (const { chain, follower } of followed) {
    checks[followed.length === 1 ? "indexer" : `indexer_${chain}`] = async () => {
      const following = follower();
      if (!following) return { ok: true, state: "starting" };
      const { state, indexed_block, chain_head, lag_blocks, lag_seconds, rpc } = following.health();
      return {
        ok: true,
        degraded: following.degraded(),
        state,
        indexed_block,
        chain_head,
        lag_blocks,
        lag_seconds,
        rpc_ok: rpc.ok,
      };
    };
  }
  return checks;
}
