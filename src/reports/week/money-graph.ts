import type { Analytics } from "../../analytics/duckdb.ts";
import { MAX_USDC_AMOUNT } from "../../chain/base.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { sqlChain } from "../scope.ts";
import { type FlowEdge, RingGraph } from "../screens/cycles.ts";
import { THRESHOLDS } from "../screens/index.ts";

/**
 * The SQL of the screens that follow money between wallets, for `aggregateWindow`: hubs by degree,
 * rings, the tiny_repeat prices and the hub links of `exchange_flow_note` (merchant_funded's provenance
 * and the clusters are in `provenance/`). Each leaves a temp
 * table, over `rw_groups` (the window's payments in groups) and the `transfers` table:
 * - `rw_hubs` (wallet), `rw_moves` (src, dst, block, amount: the window's plain transfers, hubs left out);
 * - `rw_tiny` (pay_to, tiny_max, price, price_source): the largest amount tiny_repeat calls tiny, per merchant,
 *   and the price it comes from ('listed', 'paid', or NULL for the fallback);
 * - `rw_ring` (payer, pay_to, returned, sent): the pairs on a ring (`screens/cycles.ts`);
 * - `rw_hub_links` (payer, pay_to): the merchant sent to a hub that sent to the payer, in the window.
 */

export const MONEY_GRAPH_TABLES = [
  "rw_hubs",
  "rw_moves",
  "rw_tiny",
  "rw_cycle_edges",
  "rw_ring",
  "rw_hub_links",
];

interface Blocks {
  start: number;
  end: number;
}

/**
 * Hubs, and the window's plain transfers the ring graph may follow. A hub is a wallet that is not itself
 * paid in x402 and either is fed by many independent wallets (`rw_cluster_hubs`, `provenance/hubs.ts`: listed, fed by many clusters, or paying buyers of many merchants)
 * or exchanged transfers with many distinct wallets (exchanges, bridges, payrolls): everyone shares one,
 * so a cycle through it says nothing about who paid whom. Degree alone would let a distributor hide the
 * merchant's money; it hides nothing here, because the provenance screen, which comes first, follows any
 * wallet that is not fed by many independent ones.
 */
export async function moneyMoves(analytics: Analytics, chain: AnyChainRecord, blocks: Blocks): Promise<void> {
  const span = `${sqlChain(chain)} AND block_number <= $end`;
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_hubs AS
     SELECT wallet FROM (
       SELECT from_address AS wallet, count(DISTINCT to_address) AS n FROM transfers WHERE ${span} GROUP BY 1
       UNION ALL
       SELECT to_address, count(DISTINCT from_address) FROM transfers WHERE ${span} GROUP BY 1
     ) WHERE wallet NOT IN (SELECT wallet FROM rw_merchants)
     GROUP BY wallet HAVING max(n) >= ${THRESHOLDS.hubMinCounterparties}
     UNION SELECT wallet FROM rw_cluster_hubs`,
    { end: blocks.end },
  );
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_moves AS
     SELECT from_address AS src, to_address AS dst, block_number AS block, amount FROM transfers
     WHERE ${span} AND block_number > $start AND amount > 0 AND from_address <> to_address
       AND from_address NOT IN (SELECT wallet FROM rw_hubs) AND to_address NOT IN (SELECT wallet FROM rw_hubs)`,
    { start: blocks.start, end: blocks.end },
  );
}

/**
 * tiny_repeat's threshold per merchant (over `rw_groups`, `rw_pair_totals` and `rw_price_clusters`): its
 * price / `tinyPriceDivisor`, the price being the lowest of its listed prices that its buyers pay (as many
 * clusters as a paid price needs, or a fifth of its clusters, paying in the band below it) and of what its
 * independent buyers pay: the lowest amount of the lowest band of amounts (a power of two wide: metered charges vary)
 * that `tinyPricePayers` or more clusters paid it, and at least `tinyPricePayerShare` of its clusters;
 * without either, `tinyFallbackMax`. Clusters, not wallets: a farm that splits itself is one buyer; each link
 * counted by its weight (`ClusterLinks.priceShares`), since a wrong merge here erases a merchant's genuine
 * buyers, and a link that counted not at all below a cut would be a cut for a farm to sit just past.
 * An exact payment is a price the merchant's server asked for: where the merchant lists prices, an exact
 * payment far below every one of them is tiny whatever its buyers pay (`exact_tiny_max`); only metered
 * charges (upto, batch-settlement) vary with use, so only their buyers' amounts can make a lower price.
 * Payments of unknown scheme are measured as metered ones, as before schemes were kept.
 */
export async function tinyPrices(analytics: Analytics): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_tiny AS
     WITH merged AS (
       -- A merchant's clusters are its payers less those that share a cluster with another of them, each
       -- cluster counted as its payers' shares of a buyer (links counted in proportion to their weight):
       -- a sum over the few clustered payers, not over every pair.
       SELECT pay_to, sum(k - n) AS merged FROM (
         SELECT pay_to, c.cluster, count(*) AS k, greatest(1, sum(c.share)) AS n
         FROM rw_pair_totals JOIN rw_price_clusters c ON c.wallet = payer GROUP BY ALL
       ) GROUP BY pay_to
     ), merchants AS (
       SELECT pay_to, count(*) - coalesce(any_value(merged), 0) AS clusters
       FROM rw_pair_totals LEFT JOIN merged USING (pay_to) GROUP BY pay_to
     ), lines AS (
       -- A price above the most one payment may carry is no payment's price (and would not fit a BIGINT).
       SELECT DISTINCT pay_to, round(price_usd * 1e6)::BIGINT AS price FROM listings
       WHERE price_usd > 0 AND price_usd * 1e6 <= ${MAX_USDC_AMOUNT} AND pay_to IN (SELECT pay_to FROM merchants)
     ), listed AS (
       -- A listed price is the merchant's only where its buyers pay it: amounts in the band at or below it (half
       -- the price to the price: an exact payment of it, or metered charges near their most) from as many
       -- clusters as a paid price needs, or a fifth of its clusters. A line nobody buys (a $0.0003 ping listed
       -- beside the real catalogue) would otherwise set the price a farm's payments are measured against. Where
       -- no line is bought so (a merchant without buyers, or paid only in metered charges below their most), the
       -- lowest line, as before: nothing else says what the merchant charges.
       SELECT pay_to, coalesce(min(price) FILTER (WHERE n >= least(${THRESHOLDS.tinyPricePayers},
           ${THRESHOLDS.tinyPricePayerShare} * clusters)), min(price)) AS price
       FROM lines LEFT JOIN (
         SELECT pay_to, price, sum(n) AS n FROM (
           SELECT b.pay_to, b.price, greatest(1, sum(coalesce(c.share, 1))) AS n FROM (
             -- Each payer once a line, however many days and amounts it bought it at: one cluster buying a
             -- line on five days is one buyer, not five (1.11.0). A merchant with one line has that line for
             -- its price whoever buys it: only merchants with several are joined to their payments.
             SELECT DISTINCT l.pay_to, l.price, g.payer
             FROM lines l JOIN rw_groups g ON g.pay_to = l.pay_to AND g.amount <= l.price AND g.amount > l.price // 2
             WHERE l.pay_to IN (SELECT pay_to FROM lines GROUP BY pay_to HAVING count(*) > 1)
           ) b LEFT JOIN rw_price_clusters c ON c.wallet = b.payer
           GROUP BY b.pay_to, b.price, coalesce(c.cluster, b.payer)
         ) GROUP BY ALL
       ) USING (pay_to, price) JOIN merchants USING (pay_to)
       GROUP BY pay_to
     ), payer_bands AS (
       -- Only amounts below the lowest listed price can lower the price.
       SELECT g.pay_to, floor(log2(g.amount))::INTEGER AS band, g.payer, min(g.amount) AS lowest
       FROM rw_groups g LEFT JOIN listed l USING (pay_to)
       WHERE g.amount > 0 AND (l.price IS NULL OR g.amount < l.price)
       GROUP BY ALL
     ), bands AS (
       SELECT pay_to, band, min(lowest) AS lowest, sum(n) AS n FROM (
         SELECT b.pay_to, b.band, min(b.lowest) AS lowest, greatest(1, sum(coalesce(c.share, 1))) AS n
         FROM payer_bands b LEFT JOIN rw_price_clusters c ON c.wallet = b.payer
         GROUP BY b.pay_to, b.band, coalesce(c.cluster, b.payer)
       ) GROUP BY ALL
     ), paid AS (
       SELECT pay_to, arg_min(lowest, band) AS price FROM bands JOIN merchants USING (pay_to)
       WHERE n >= ${THRESHOLDS.tinyPricePayers} AND n >= ${THRESHOLDS.tinyPricePayerShare} * clusters
       GROUP BY pay_to
     ), prices AS (
       SELECT m.pay_to, CASE WHEN l.price IS NULL THEN p.price WHEN p.price IS NULL THEN l.price
         ELSE least(l.price, p.price) END AS price
       FROM merchants m LEFT JOIN listed l USING (pay_to) LEFT JOIN paid p USING (pay_to)
     )
     SELECT pay_to, coalesce(p.price // ${THRESHOLDS.tinyPriceDivisor}, ${THRESHOLDS.tinyFallbackMax})::BIGINT AS tiny_max,
       coalesce(l.price // ${THRESHOLDS.tinyPriceDivisor}, p.price // ${THRESHOLDS.tinyPriceDivisor},
         ${THRESHOLDS.tinyFallbackMax})::BIGINT AS exact_tiny_max,
       p.price, CASE WHEN p.price IS NULL THEN NULL WHEN p.price = l.price THEN 'listed' ELSE 'paid' END AS price_source,
       l.price AS listed_price
     FROM prices p LEFT JOIN listed l USING (pay_to)`,
  );
}

/**
 * ring: the window's money moves as a graph (x402 pairs from `rw_pair_totals` and the window's part of
 * `rw_moves`), trimmed in SQL of edges that cannot lie on a cycle (from a wallet nothing reached, or
 * to a wallet that sent nothing on), twice; what remains is small and goes to `RingGraph`, which the evidence asks for cycles.
 */
export async function rings(analytics: Analytics, blocks: { start: number }): Promise<RingGraph> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_cycle_edges AS
     WITH e0 AS (
       SELECT payer AS src, pay_to AS dst, amount::DOUBLE AS amount, first_block, last_block, true AS paid
       FROM rw_pair_totals WHERE payer <> pay_to
         AND payer NOT IN (SELECT wallet FROM rw_hubs) AND pay_to NOT IN (SELECT wallet FROM rw_hubs)
         -- A wallet on a cycle is reached, paid or sent to: this keeps the few payers that are, before
         -- the trims below compare every edge with every other (most payers are only buyers).
         AND payer IN (SELECT pay_to FROM rw_pair_totals UNION SELECT dst FROM rw_moves WHERE block > $start)
       UNION ALL
       SELECT src, dst, sum(amount)::DOUBLE, min(block), max(block), false FROM rw_moves
       WHERE block > $start GROUP BY src, dst
     ), e1 AS (
       SELECT * FROM e0 WHERE src IN (SELECT dst FROM e0) AND dst IN (SELECT src FROM e0)
     )
     SELECT * FROM e1 WHERE src IN (SELECT dst FROM e1) AND dst IN (SELECT src FROM e1)`,
    { start: blocks.start },
  );
  const rows = await analytics.all<{
    src: string;
    dst: string;
    amount: number;
    first_block: bigint | number;
    last_block: bigint | number;
    paid: boolean;
  }>("SELECT * FROM rw_cycle_edges");
  const edges: FlowEdge[] = rows.map((r) => ({
    src: r.src,
    dst: r.dst,
    amount: r.amount,
    firstBlock: Number(r.first_block),
    lastBlock: Number(r.last_block),
    paid: r.paid,
  }));
  const graph = new RingGraph(edges);
  await analytics.run(
    "CREATE OR REPLACE TEMP TABLE rw_ring (payer VARCHAR, pay_to VARCHAR, returned DOUBLE, sent DOUBLE)",
  );
  await analytics.append("rw_ring", graph.pairs, (a, pair) => {
    a.appendVarchar(pair.payer);
    a.appendVarchar(pair.payTo);
    a.appendDouble(pair.returned);
    a.appendDouble(pair.sent);
  });
  return graph;
}

/**
 * `exchange_flow_note`'s evidence: up to the window's end, in it or before it, the merchant sent to a hub that
 * sent to the payer (a distributor the merchant filled a week before the window, whose payees spend in it, is
 * a known limit of merchant_funded when the data holds no balance of it: the note marks those figures).
 *
 * Driven from the hubs' recipients and their x402 pairs, never from every merchant a hub received from
 * times every wallet it sent to: an exchange that funds many buyers and receives many merchants'
 * cash-outs makes that product grow with the square of the week's volume (25 million rows for the one
 * hub of `bench:report`'s week of 100M payments, the largest statement of its build); this grows with the pairs.
 */
export async function hubLinks(
  analytics: Analytics,
  chain: AnyChainRecord,
  blocks: { end: number },
): Promise<void> {
  const span = `${sqlChain(chain)} AND block_number <= $end`;
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_hub_links AS
     WITH out AS (
       SELECT DISTINCT from_address AS pay_to, to_address AS hub FROM transfers
       WHERE ${span} AND to_address IN (SELECT wallet FROM rw_hubs)
         AND from_address IN (SELECT DISTINCT pay_to FROM rw_pair_totals)
     ), back AS (
       SELECT DISTINCT from_address AS hub, to_address AS payer FROM transfers
       WHERE ${span} AND from_address IN (SELECT hub FROM out)
     )
     SELECT DISTINCT q.pay_to, q.payer FROM back b JOIN rw_pair_totals q USING (payer)
     SEMI JOIN out o ON o.hub = b.hub AND o.pay_to = q.pay_to`,
    { end: blocks.end },
  );
}
