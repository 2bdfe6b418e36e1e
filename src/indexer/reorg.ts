/**
 * Reorgs. The indexer keeps the hashes of the blocks it indexed within `--reorg-depth` of its
 * checkpoint. When the chain's block at the checkpoint no longer has the stored hash, the newest
 * stored block whose hash the chain still has is the common ancestor (a matching hash vouches for every
 * block before it); everything above it is deleted in one transaction and indexed again.
 */

import type { Analytics } from "../analytics/duckdb.ts";
import { bumpDataVersion } from "../analytics/migrations.ts";
import { unsealAbove } from "../analytics/payment-days.ts";
import { BASE_RECORD, type ChainRecord } from "../chain/chains.ts";
import { AppError } from "../common/errors.ts";
import { fetchHeaders } from "./block-data.ts";
import type { RpcClient } from "./rpc/client.ts";
import { type Cursor, recentBlocks } from "./state.ts";

/** The chain forked below every block hash we kept: rows above the fork cannot be told apart. */
export class ReorgTooDeepError extends AppError {
  constructor(message: string) {
    super(500, "reorg_too_deep", message);
  }
}

/** The newest kept block still on the chain, or throws ReorgTooDeepError. */
export async function findCommonAncestor(
  analytics: Analytics,
  client: RpcClient,
  cursor: Cursor,
  chain: ChainRecord = BASE_RECORD,
): Promise<Cursor> {
  const kept = await recentBlocks(analytics, cursor.block, chain);
  // Every kept block is at or below a head the chain had: a missing one is a lagging node, asked again.
  const headers = await fetchHeaders(
    client,
    kept.map((b) => b.block),
  );
  for (let i = 0; i < kept.length; i++) {
    if (headers[i]?.hash === kept[i]?.hash) return kept[i] as Cursor;
  }
  const oldest = kept.at(-1)?.block ?? cursor.block;
  throw new ReorgTooDeepError(
    `the chain no longer holds any indexed block kept for reorg checks (blocks ${oldest} to ${cursor.block}): ` +
      "the fork is deeper than --reorg-depth. Index again into a fresh --data directory.",
  );
}

/** Deletes everything above `ancestor` and makes it the checkpoint, in one transaction. */
export async function rewindTo(
  analytics: Analytics,
  ancestor: Cursor,
  chain: ChainRecord = BASE_RECORD,
): Promise<void> {
  const above = { chain: chain.slug, block: ancestor.block };
  await analytics.storeTurn(() =>
    analytics.transaction(async () => {
      for (const table of [
        "payments",
        "transfers",
        "balances",
        "facilitator_candidates",
        "channels",
        "channel_events",
        "bridge_messages",
        "indexer_blocks",
        "checkpoints",
      ]) {
        await analytics.run(`DELETE FROM ${table} WHERE chain = $chain AND block_number > $block`, above);
      }
      await unsealAbove(analytics, chain, ancestor.block);
      await analytics.run(
        "INSERT OR REPLACE INTO checkpoints VALUES ($chain, $block, to_timestamp($time)::TIMESTAMP)",
        { ...above, time: ancestor.time },
      );
      await analytics.run(
        `UPDATE indexer_state SET block_number = $block, block_hash = $hash,
         block_time = to_timestamp($time)::TIMESTAMP, updated_at = now()::TIMESTAMP WHERE chain = $chain`,
        { ...above, hash: ancestor.hash, time: ancestor.time },
      );
      await bumpDataVersion(analytics, ancestor.block + 1, chain.slug);
    }),
  );
}
