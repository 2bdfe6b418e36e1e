import type { Analytics } from "../analytics/duckdb.ts";
import { MAX_USDC_AMOUNT } from "../chain/base.ts";
import { type FlowEdge, RingGraph } from "./screens/cycles.ts";
import { THRESHOLDS } from "./screens/index.ts";

/**
 * The SQL of the screens that follow money between wallets, for `aggregateWindow`: hubs, funding
 * paths, rings, the tiny_repeat prices and the hub links of `exchange_flow_note`. Each leaves a temp
 * table, over `rw_groups` (the window's payments in groups) and the `transfers` table:
 * - `rw_hubs` (wallet), `rw_moves` (src, dst, block, amount: plain transfers from the funding lookback
 *   to the window's end, hubs left out);
 * - `rw_funding` (payer, pay_to, funded_from): where the merchant's money first reached the payer;
 * - `rw_reach` (pay_to, wallet, arrival, hops, via, amount): every wallet the merchant's money reached, and how;
 * - `rw_tiny` (pay_to, tiny_max, price, price_source): the largest amount tiny_repeat calls tiny, per merchant,
 *   and the price it comes from ('listed', 'paid', or NULL for the fallback);
 * - `rw_ring` (payer, pay_to, returned, sent): the pairs on a ring (`screens/cycles.ts`);
 * - `rw_hub_links` (payer, pay_to): the merchant sent to a hub that sent to the payer, in the window.
 */

export const MONEY_GRAPH_TABLES = [
  "rw_hubs",
  "rw_moves",
  "rw_reach",
  "rw_funding",
  "rw_tiny",
  "rw_cycle_edges",
  "rw_ring",
  "rw_hub_links",
];

interface Blocks {
  start: number;
  end: number;
  lookback: number;
}

/**
 * Hubs, and the plain transfers a path may follow. A hub is a wallet that exchanged transfers with many
 * distinct wallets (exchanges, bridges, payrolls) and is not itself paid in x402: everyone shares one,
 * so a path through it says nothing about who paid whom.
 */
export async function moneyMoves(analytics: Analytics, blocks: Blocks): Promise<void> {
  const span = "chain = 'base' AND block_number > $lookback AND block_number <= $end";
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_hubs AS
     SELECT wallet FROM (
       SELECT from_address AS wallet, count(DISTINCT to_address) AS n FROM transfers WHERE ${span} GROUP BY 1
       UNION ALL
       SELECT to_address, count(DISTINCT from_address) FROM transfers WHERE ${span} GROUP BY 1
     ) WHERE wallet NOT IN (SELECT DISTINCT pay_to FROM rw_groups)
     GROUP BY wallet HAVING max(n) >= ${THRESHOLDS.hubMinCounterparties}`,
    { end: blocks.end, lookback: blocks.lookback },
  );
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_moves AS
     SELECT from_address AS src, to_address AS dst, block_number AS block, amount FROM transfers
     WHERE ${span} AND amount > 0 AND from_address <> to_address
       AND from_address NOT IN (SELECT wallet FROM rw_hubs) AND to_address NOT IN (SELECT wallet FROM rw_hubs)`,
    { end: blocks.end, lookback: blocks.lookback },
  );
}

/**
 * merchant_funded's paths: the earliest block at which each merchant's money reached each wallet,
 * through at most `fundingMaxHops` transfers, each no earlier than the one before. The first hop must
 * give more than the recipient had paid the merchant in the window by then (else it is a refund); only
 * groups of payments wholly before the transfer count as paid by then, which errs towards funding.
 * Each hop keeps only wallets reached earlier than before, so the walk stays small. Each wallet reached
 * keeps the first transfer that reached it (`via`, `amount`; the lowest block, then sender, then amount),
 * so the evidence can walk a path back to the merchant.
 */
export async function fundingPaths(analytics: Analytics): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_reach AS
     SELECT pay_to, wallet, first.block AS arrival, 1 AS hops, pay_to AS via, first.amount AS amount FROM (
       SELECT t.src AS pay_to, t.dst AS wallet, min({'block': t.block, 'amount': t.amount}) AS first
       FROM rw_moves t
       WHERE t.src IN (SELECT DISTINCT pay_to FROM rw_groups)
         AND t.amount > coalesce((
           SELECT sum(g.amount::HUGEINT * g.n) FROM rw_groups g
           WHERE g.payer = t.dst AND g.pay_to = t.src AND g.last_block < t.block
         ), 0)
       GROUP BY ALL
     )`,
  );
  for (let hop = 2; hop <= THRESHOLDS.fundingMaxHops; hop++) {
    await analytics.run(
      `INSERT INTO rw_reach
       SELECT n.pay_to, n.wallet, n.first.block, $hop, n.first.src, n.first.amount FROM (
         SELECT r.pay_to, t.dst AS wallet, min({'block': t.block, 'src': t.src, 'amount': t.amount}) AS first
         FROM rw_reach r JOIN rw_moves t ON t.src = r.wallet AND t.block >= r.arrival
         WHERE r.hops = $hop - 1 AND t.dst <> r.pay_to
         GROUP BY ALL
       ) n
       WHERE NOT EXISTS (
         SELECT 1 FROM rw_reach e WHERE e.pay_to = n.pay_to AND e.wallet = n.wallet AND e.arrival <= n.first.block
       )`,
      { hop },
    );
  }
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_funding AS
     SELECT r.wallet AS payer, r.pay_to, min(r.arrival) AS funded_from
     FROM rw_reach r SEMI JOIN rw_groups g ON g.payer = r.wallet AND g.pay_to = r.pay_to
     GROUP BY ALL`,
  );
}

/**
 * tiny_repeat's threshold per merchant (over `rw_groups` and `rw_pair_totals`): its price / `tinyPriceDivisor`, the price being the lowest of
 * its listed prices and of the amounts that `tinyPricePayers` or more distinct wallets paid it, and at
 * least `tinyPricePayerShare` of its payers; without either, `tinyFallbackMax`.
 */
export async function tinyPrices(analytics: Analytics): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_tiny AS
     WITH merchants AS (
       SELECT pay_to, count(*) AS payers FROM rw_pair_totals GROUP BY pay_to
     ), listed AS (
       -- A price above the most one payment may carry is no payment's price (and would not fit a BIGINT).
       SELECT pay_to, min(round(price_usd * 1e6))::BIGINT AS price FROM listings
       WHERE price_usd > 0 AND price_usd * 1e6 <= ${MAX_USDC_AMOUNT} AND pay_to IN (SELECT pay_to FROM merchants)
       GROUP BY pay_to
     ), paid AS (
       -- Only amounts below the lowest listed price can lower the price.
       SELECT pay_to, min(amount) AS price FROM (
         SELECT pay_to, amount, count(*) AS n FROM (
           SELECT DISTINCT g.pay_to, g.amount, g.payer FROM rw_groups g LEFT JOIN listed l USING (pay_to)
           WHERE l.price IS NULL OR g.amount < l.price
         ) GROUP BY pay_to, amount HAVING count(*) >= ${THRESHOLDS.tinyPricePayers}
       ) JOIN merchants USING (pay_to)
       WHERE n >= ${THRESHOLDS.tinyPricePayerShare} * payers
       GROUP BY pay_to
     ), prices AS (
       SELECT m.pay_to, CASE WHEN l.price IS NULL THEN p.price WHEN p.price IS NULL THEN l.price
         ELSE least(l.price, p.price) END AS price
       FROM merchants m LEFT JOIN listed l USING (pay_to) LEFT JOIN paid p USING (pay_to)
     )
     SELECT pay_to, coalesce(p.price // ${THRESHOLDS.tinyPriceDivisor}, ${THRESHOLDS.tinyFallbackMax})::BIGINT AS tiny_max,
       p.price, CASE WHEN p.price IS NULL THEN NULL WHEN p.price = l.price THEN 'listed' ELSE 'paid' END AS price_source
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
  const graph = new RingGraph(edges, THRESHOLDS.ringMinReturnShare);
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
 * `exchange_flow_note`'s evidence: in the window, the merchant sent to a hub that sent to the payer.
 *
 * Driven from the hubs' recipients and their x402 pairs, never from every merchant a hub received from
 * times every wallet it sent to: an exchange that funds many buyers and receives many merchants'
 * cash-outs makes that product grow with the square of the week's volume (25 million rows for the one
 * hub of `bench:report`'s week of 100M payments, the largest statement of its build); this grows with the pairs.
 */
export async function hubLinks(analytics: Analytics, blocks: { start: number; end: number }): Promise<void> {
  const span = "chain = 'base' AND block_number > $start AND block_number <= $end";
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
    { start: blocks.start, end: blocks.end },
  );
}
