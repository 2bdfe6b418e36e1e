/**
 * Money that moves on the other side of a bridge before it comes back (docs/screens.md, "Money through a bridge";
 * methodology 1.10.0). A merchant's takings burned to a wallet on Arbitrum, passed there through wallets of the
 * gamer's and burned back to fresh wallets here, are the merchant's money as much as when the first wallet burns
 * them back itself: what `bridges.ts` reads of the other chain (the burner's own inflows) stops one wallet short.
 *
 * So where this chain's burns sent money to wallets on another chain the store holds, and this chain's mints
 * came from burners there, that chain's transfers on the ways between them are read too: the wallets reachable
 * from a burn's recipient by that chain's transfers that reach a mint's burner, never through a hub of that chain
 * (its listed and labelled hubs, `rw_bridge_hubs`, and a wallet fed there by `hubMinSenders` parties weighed by
 * money, as an exchange's depositors make one), named `address@chain` as the bridge's own moves are. One walk over that chain's
 * transfers since the first burn to it, read once, linear in them however many wallets the money passes.
 *
 * The pass (`funded-pass.ts`) reads them in this chain's order: each at the last block here whose time is at or
 * before its own among the bridge's moves (the only moves here those wallets take part in), after that block's
 * moves, in its own chain's order. A move there can only follow the burn that paid its wallet and come before the
 * mint that brings the money back (CCTP's attestation takes seconds at least), so the order is FIFO's.
 *
 * Leaves `rw_bridge_relays` (tx_hash, log_index, block_number, from_address, to_address, amount): those transfers,
 * at their place in this chain's blocks (`block_number`, `log_index`).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { sqlSlug, sqlTimestamp } from "../scope.ts";
import { THRESHOLDS } from "../screens/thresholds.ts";

export const RELAY_TABLES = ["rw_bridge_relays", "rw_relay_edges", "rw_relay_ids", "rw_relay_wallets"];

const ZERO = "0x0000000000000000000000000000000000000000";

/** A relay's place among a block's moves: after them all (their log indexes are far below), before its balances. */
const AFTER_BLOCK = 2_000_000_000;

/** Builds `rw_bridge_relays` from `rw_bridge_moves` and `rw_bridge_hubs` (`bridges.ts`), up to `endTime` (unix ms). */
export async function bridgeRelays(
  analytics: Analytics,
  chain: AnyChainRecord,
  endTime: number,
): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_bridge_relays (tx_hash VARCHAR, log_index INTEGER, block_number BIGINT,
       from_address VARCHAR, to_address VARCHAR, amount HUGEINT)`,
  );
  const here = sqlSlug(chain);
  // The other chains' wallets the burns here paid (with the first time money reached each chain), and those
  // whose burns minted here.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_relay_wallets AS
     SELECT m.to_address AS wallet, 0 AS side, min(t.block_time) AS since FROM rw_bridge_moves m
     JOIN transfers t ON t.tx_hash = m.tx_hash AND t.log_index = m.log_index AND t.chain = ${here}
     WHERE m.to_address LIKE '%@%' GROUP BY ALL
     UNION ALL
     SELECT DISTINCT from_address, 1, NULL FROM rw_bridge_moves WHERE from_address LIKE '%@%'`,
  );
  const both = await analytics.one(
    `SELECT 1 FROM rw_relay_wallets a JOIN rw_relay_wallets b ON split_part(a.wallet, '@', 2) = split_part(b.wallet, '@', 2)
     WHERE a.side = 0 AND b.side = 1 LIMIT 1`,
  );
  if (!both) return;
  // Those chains' transfers since money first reached them from here, between wallets that are no hub there.
  const n = THRESHOLDS.hubMinSenders;
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_relay_edges AS
     WITH reached AS (
       SELECT split_part(wallet, '@', 2) AS chain, min(since) AS since FROM rw_relay_wallets WHERE side = 0 GROUP BY 1
     ), t AS (
       SELECT t.tx_hash, t.log_index, t.block_number, t.block_time, t.from_address || '@' || t.chain AS src,
         t.to_address || '@' || t.chain AS dst, t.amount
       FROM transfers t JOIN reached r ON r.chain = t.chain
       WHERE t.chain <> ${here} AND t.block_time >= r.since AND t.block_time <= ${sqlTimestamp(endTime)}
         AND t.amount > 0 AND t.from_address <> t.to_address
         AND t.from_address <> '${ZERO}' AND t.to_address <> '${ZERO}'
     ), senders AS (
       SELECT to_address || '@' || chain AS wallet, from_address AS sender, sum(amount)::DOUBLE AS amount
       FROM transfers
       WHERE chain IN (SELECT chain FROM reached) AND block_time <= ${sqlTimestamp(endTime)} AND amount > 0
         AND from_address <> to_address AND from_address <> '${ZERO}'
       GROUP BY ALL
     ), many AS (
       SELECT wallet FROM senders GROUP BY wallet HAVING count(*) >= ${n}
     ), fed AS (
       -- Parties weighed by money, as the walk here weighs them (hubs.ts, rw_fed_by_money): a cent from each of
       -- fifty wallets beside the merchant's dollars makes no hub.
       SELECT wallet FROM (
         SELECT wallet, amount, max(amount) OVER (PARTITION BY wallet) AS largest FROM senders
         WHERE wallet IN (SELECT wallet FROM many)
       ) GROUP BY wallet HAVING sum(least(1, ${n} * amount / largest)) >= ${n}
     ), hubs AS (SELECT wallet FROM rw_bridge_hubs UNION SELECT wallet FROM fed)
     SELECT * FROM t WHERE src NOT IN (SELECT wallet FROM hubs) AND dst NOT IN (SELECT wallet FROM hubs)`,
  );
  // The walk runs on numbers, as reach.ts's does.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_relay_ids AS
     SELECT wallet, (row_number() OVER ())::INTEGER - 1 AS id
     FROM (SELECT src AS wallet FROM rw_relay_edges UNION SELECT dst FROM rw_relay_edges)`,
  );
  const edges = await analytics.all<{ src: number; dst: number }>(
    `SELECT DISTINCT s.id AS src, d.id AS dst FROM rw_relay_edges e
     JOIN rw_relay_ids s ON s.wallet = e.src JOIN rw_relay_ids d ON d.wallet = e.dst`,
  );
  const ends = await analytics.all<{ id: number; side: number }>(
    "SELECT i.id, w.side FROM rw_relay_wallets w JOIN rw_relay_ids i USING (wallet)",
  );
  const relays = walk(
    edges,
    ends.filter((e) => e.side === 0).map((e) => e.id),
    ends.filter((e) => e.side === 1).map((e) => e.id),
  );
  if (relays.size === 0) return;
  await analytics.run("CREATE OR REPLACE TEMP TABLE rw_relay_on (id INTEGER)");
  await analytics.append("rw_relay_on", [...relays], (a, id) => a.appendInteger(id));
  // Each at the last of the bridge's moves here at or before its time, after that block's moves.
  await analytics.run(
    `INSERT INTO rw_bridge_relays
     WITH on_way AS (SELECT wallet FROM rw_relay_ids WHERE id IN (SELECT id FROM rw_relay_on)),
     moves AS (
       SELECT * FROM rw_relay_edges
       WHERE src IN (SELECT wallet FROM on_way) AND dst IN (SELECT wallet FROM on_way)
     ), anchors AS (
       SELECT t.block_time, max(t.block_number) AS block_number FROM transfers t
       JOIN rw_bridge_moves b ON b.tx_hash = t.tx_hash AND b.log_index = t.log_index
       WHERE t.chain = ${here} GROUP BY t.block_time
     ), placed AS (
       SELECT m.*, coalesce(a.block_number, 0) AS here_block
       FROM moves m ASOF LEFT JOIN anchors a ON m.block_time >= a.block_time
     )
     SELECT tx_hash, ${AFTER_BLOCK} + row_number() OVER (PARTITION BY here_block ORDER BY block_time, block_number, log_index),
       here_block, src, dst, amount
     FROM placed`,
  );
  await analytics.run("DROP TABLE rw_relay_on");
}

/**
 * The wallets on a way from a start to an end: reachable from a start, and reaching an end by wallets reachable
 * from a start. Two breadth-first walks, each linear in the edges.
 */
export function walk(
  edges: readonly { src: number; dst: number }[],
  starts: readonly number[],
  ends: readonly number[],
): Set<number> {
  const out = new Map<number, number[]>();
  const into = new Map<number, number[]>();
  for (const { src, dst } of edges) {
    (out.get(src) ?? out.set(src, []).get(src))?.push(dst);
    (into.get(dst) ?? into.set(dst, []).get(dst))?.push(src);
  }
  const reach = (from: readonly number[], next: Map<number, number[]>, within?: Set<number>) => {
    const seen = new Set(from.filter((w) => !within || within.has(w)));
    const queue = [...seen];
    for (let i = 0; i < queue.length; i++)
      for (const w of next.get(queue[i] as number) ?? [])
        if (!seen.has(w) && (!within || within.has(w))) {
          seen.add(w);
          queue.push(w);
        }
    return seen;
  };
  return reach(ends, into, reach(starts, out));
}
