import type { Analytics } from "../../analytics/duckdb.ts";
import { sqlWindowGroups, usableDays } from "../../analytics/payment-days.ts";
import { type AnyChainRecord, BASE_RECORD } from "../../chain/chains.ts";
import { CLUSTER_TABLES, clusters, PROVENANCE_TABLES, provenance } from "../provenance/index.ts";
import { sqlChain } from "../scope.ts";
import type { RingGraph } from "../screens/cycles.ts";
import { SCREENS, THRESHOLDS } from "../screens/index.ts";
import { EVIDENCE_TABLES, evidenceFacts } from "./evidence-facts.ts";
import { CENT, sqlApportionedCents, sqlCents } from "./money.ts";
import { hubLinks, MONEY_GRAPH_TABLES, moneyMoves, rings, tinyPrices } from "./money-graph.ts";
import { sqlRank } from "./rank.ts";

/**
 * The window's figures for every merchant at once, as temporary tables that report.ts turns into the
 * reports. All the SQL of the figures is here.
 *
 * The window's payments are read once, into groups the screens cannot tell apart: same payer,
 * merchant, amount and day. A week of 10 million payments makes about a seventh as many groups, and
 * everything else (pairs, screens, quartiles, daily totals, flags) comes from them. The groups of
 * whole past days are kept by the writers (analytics/payment-days.ts), so a build groups only the
 * window's edges and reads the rest: about one scan of the groups plus small tables. The one screen that
 * needs each payment (merchant_funded: was it paid with the merchant's money?) reads the payments of
 * the few wallets the merchants' money can reach (provenance/), and says how many of each group it flags.
 *
 * Money is summed in HUGEINT and stays HUGEINT up to the stored report: one payment is at most
 * `MAX_USDC_AMOUNT` (10^16), so 923 of them pass BIGINT's 2^63, and a week holds millions. Counts
 * (`tx`, `n`) stay BIGINT: they cannot pass the number of rows.
 *
 * What it leaves, for report.ts:
 * - `rw_figures`: one row per merchant of the analytics database: address, name, claimed, held, tx, amount,
 *   buyers, real_tx, real_amount, real_buyers, top_amount, p25, median, p75 (atomic units,
 *   interpolated), median_passing, hub_linked_buyers, rank;
 * - `rw_flag_kinds`: pay_to, kind, precedence, tx, amount, cents (apportioned): only kinds with flagged payments;
 * - `rw_days`: pay_to, day (0 is `firstDate`), tx, cents, real_cents: only days with payments;
 * - `rw_schemes`: pay_to, scheme (exact, upto, batch-settlement, unknown), tx, real_tx, cents, real_cents;
 * - `rw_details`: pay_to, details: the page's `{"flagged_wallets": {kind: [{wallet, tx, usd, evidence}]},
 *   "more_wallets": {kind: {wallets, tx, usd}}, "wallets": n}`, the 20 largest wallets per kind with the
 *   facts of their evidence (`evidence-facts.ts`) and the rest, and how many wallets any flag names, for
 *   merchants with flags;
 * - `rw_wallets`: pay_to, kind, payer, tx, amount, cents (the kind's cents shared among its wallets), place
 *   (1 is the largest): every flagged wallet of each kind, which the flag feed stores (flags.ts).
 */

/** How many of a flag's wallets the page lists by name; the rest are one row. */
export const SHOWN_WALLETS = 20;

export interface WindowBounds {
  /** The chain whose week it is: every statement reads its rows only (`scope.ts`). */
  chain: AnyChainRecord;
  /** Exclusive: the window holds blocks start_block + 1 .. end_block. */
  startBlock: number;
  endBlock: number;
  /** The window's first UTC date (YYYY-MM-DD): day 0. */
  firstDate: string;
  /** The window's start and end (unix ms, the times of its first block's parent and of its end block). */
  startTime: number;
  endTime: number;
}

/** SQL: the largest tiny amount for a group's scheme, over a join of `rw_tiny` (`tinyPrices`). */
const SQL_TINY_MAX = "CASE WHEN scheme = 'exact' THEN exact_tiny_max ELSE tiny_max END";

/**
 * SQL: the merchant `address` is one of `chain`'s: a wallet it paid, or on Base one no chain paid yet (listed,
 * or named by an import). A merchant paid only on Polygon has no Base report.
 */
function sqlChainMerchant(chain: AnyChainRecord, address: string): string {
  const paid = `${address} IN (SELECT address FROM merchant_chains WHERE ${sqlChain(chain)})`;
  if (chain.slug !== BASE_RECORD.slug) return paid;
  // A merchant paid on no chain yet (a `merchant` line names none) is Base's, if its address is one Base can
  // pay: a Solana owner's would be a report its seal refuses, and it waits for its first payment on Solana.
  return `(${paid} OR (${address} NOT IN (SELECT address FROM merchant_chains) AND ${address} LIKE '0x%'))`;
}

/** SQL: a payer's cluster (`provenance/clusters.ts`), over a LEFT JOIN of `rw_clusters` as c. */
const CLUSTER = "coalesce(c.cluster, payer)";

const TABLES = [
  ...MONEY_GRAPH_TABLES,
  ...PROVENANCE_TABLES,
  ...CLUSTER_TABLES,
  "rw_groups",
  "rw_merchants",
  "rw_pair_totals",
  "rw_pair_tiny",
  "rw_ring_n",
  "rw_tiny_n",
  "rw_payer_merchants",
  "rw_flagged",
  "rw_flag_groups",
  "rw_figures",
  "rw_flag_kinds",
  "rw_days",
  "rw_schemes",
  "rw_details",
  ...EVIDENCE_TABLES,
];

/**
 * Drops every table `aggregateWindow` made. One call for all of them: each `run` is a round trip to
 * DuckDB's worker (0.2-0.3 ms of CPU each, whatever the data), and 64 of them were a fixed 15-17 ms of a
 * small week's build.
 */
export async function dropWindowTables(analytics: Analytics): Promise<void> {
  await analytics.run(TABLES.map((t) => `DROP TABLE IF EXISTS temp.${t}`).join("; "));
}

/**
 * Linear interpolation between closest ranks (DuckDB's `quantile_cont`, R's type 7) over a histogram
 * `h(pay_to, amount, n)`, for quarters k/4: integer arithmetic up to the final interpolation.
 */
function quartilesOf(h: string, quarters: readonly number[]): string {
  return `WITH c AS (
      SELECT pay_to, amount, sum(n) OVER (PARTITION BY pay_to ORDER BY amount) AS upto,
        sum(n) OVER (PARTITION BY pay_to) AS total
      FROM ${h}
    ), t AS (
      SELECT DISTINCT pay_to, k, (total - 1) * k // 4 AS lo, (total - 1) * k % 4 AS rest
      FROM c, (VALUES ${quarters.map((k) => `(${k})`).join(", ")}) q(k)
    ), x AS (
      SELECT t.pay_to, t.k, t.rest, min(c.amount) FILTER (c.upto > t.lo) AS lo_x,
        min(c.amount) FILTER (c.upto > t.lo + 1) AS hi_x
      FROM t JOIN c USING (pay_to) GROUP BY t.pay_to, t.k, t.rest
    )
    SELECT pay_to, k, CASE WHEN rest = 0 THEN lo_x::DOUBLE ELSE lo_x + (rest / 4) * (hi_x - lo_x) END AS value FROM x`;
}

/**
 * SQL over the payments table (optionally by an alias, "w."): the window's payments in `chain`'s USDC, between
 * the parameters `$start` (exclusive) and `$end`.
 */
export const sqlInWindow = (chain: AnyChainRecord, t = "") =>
  `${sqlChain(chain, t)} AND ${t}asset = '${chain.usdc.address}' AND ${t}block_number > $start AND ${t}block_number <= $end`;

/** SQL: a payment's day of the window, 0 being the parameter `$first` (the window's first date). */
export const sqlDay = (t = "") => `(${t}block_time::DATE - $first::DATE)::INTEGER`;

/** Builds the window's tables (see above); the caller drops them with `dropWindowTables`. */
export async function aggregateWindow(analytics: Analytics, bounds: WindowBounds): Promise<void> {
  const p = { start: bounds.startBlock, end: bounds.endBlock };

  // The window's payments in groups: past days as the writers grouped them (analytics/payment-days.ts),
  // the rest in one pass over the payments table, which is written in block order, so zone maps skip the rest.
  const { chain } = bounds;
  const sealed = await usableDays(analytics, chain, { ...p, first: bounds.firstDate });
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_groups AS ${sqlWindowGroups(chain, sealed, sqlInWindow(chain), sqlDay())}`,
    { ...p, first: bounds.firstDate },
  );
  // Each (payer, merchant) pair's totals, and the window's merchants: what the screens start from.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_pair_totals AS
     SELECT payer, pay_to, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount,
       min(first_block) AS first_block, max(last_block) AS last_block
     FROM rw_groups GROUP BY ALL`,
  );
  await analytics.run(
    "CREATE OR REPLACE TEMP TABLE rw_merchants AS SELECT DISTINCT pay_to AS wallet FROM rw_pair_totals",
  );
  // Clusters and sender hubs first: the ring graph's hubs and the provenance screen's stops are made of them.
  await clusters(analytics, chain, p.end, bounds.endTime);
  await moneyMoves(analytics, chain, p);
  await provenance(analytics, chain, {
    ...p,
    first: bounds.firstDate,
    startTime: bounds.startTime,
    endTime: bounds.endTime,
  });
  await tinyPrices(analytics);
  // What the screens need beyond a pair's totals, for the few pairs that have it: tiny payments, and the
  // payers of enough merchants to be probers, both counted by cluster (one buyer, however many wallets).
  // Small tables, joined where the screens are decided.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_pair_tiny AS
     SELECT payer, pay_to, ${CLUSTER} AS cluster, n::BIGINT AS wallet_tiny_tx,
       (sum(n) OVER (PARTITION BY ${CLUSTER}, pay_to))::BIGINT AS tiny_tx
     FROM (
       SELECT payer, pay_to, sum(n) AS n FROM rw_groups JOIN rw_tiny USING (pay_to)
       WHERE amount <= ${SQL_TINY_MAX} GROUP BY ALL
     ) LEFT JOIN rw_clusters c ON c.wallet = payer`,
  );
  const light = THRESHOLDS.proberMaxPaymentsPerMerchant;
  // Clusters of one wallet (nearly every payer) are counted by payer; only the clustered few are grouped.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_payer_merchants AS
     WITH clustered AS (
       SELECT c.cluster, p.payer, p.pay_to, p.tx FROM rw_pair_totals p JOIN rw_clusters c ON c.wallet = p.payer
     ), lone AS (
       SELECT payer, pay_to, tx FROM rw_pair_totals WHERE payer NOT IN (SELECT wallet FROM rw_clusters)
     ), cluster_pairs AS (
       SELECT cluster, pay_to, sum(tx) AS tx FROM clustered GROUP BY ALL
     ), probers AS (
       SELECT cluster, count(*) AS payer_merchants, count(*) FILTER (tx <= ${light}) AS payer_light_merchants
       FROM cluster_pairs GROUP BY cluster HAVING count(*) >= ${THRESHOLDS.proberMinMerchants}
       UNION ALL
       -- A cluster is named by one of its wallets, so it is never a lone payer's name.
       SELECT payer, count(*), count(*) FILTER (tx <= ${light}) FROM lone
       GROUP BY payer HAVING count(*) >= ${THRESHOLDS.proberMinMerchants}
     )
     SELECT c.payer, c.pay_to, b.payer_merchants, b.payer_light_merchants, cp.tx AS cluster_tx
     FROM clustered c JOIN probers b USING (cluster) JOIN cluster_pairs cp USING (cluster, pay_to)
     UNION ALL
     SELECT l.payer, l.pay_to, b.payer_merchants, b.payer_light_merchants, l.tx
     FROM lone l JOIN probers b ON b.cluster = l.payer`,
  );
  const ringGraph = await rings(analytics, p);
  // ring, in proportion: of a ring pair's payments not paid with the merchant's money, the earliest (by
  // day, then amount) worth the share of what the payer sent into its cycle that came back to it, less
  // what merchant_funded took. Whole payments: a group gives its payments while the target is more than
  // half a payment away, so a pair's ring payments are its first ones in that order (the evidence's).
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_ring_n AS
     WITH g AS (
       SELECT g.payer, g.pay_to, g.amount, g.scheme, g.day, g.n, coalesce(a.n, 0) AS funded, g.n - coalesce(a.n, 0) AS rest,
         least(1.0, r.returned / r.sent) AS share
       FROM rw_groups g JOIN rw_ring r USING (payer, pay_to) LEFT JOIN rw_after a USING (payer, pay_to, amount, scheme, day)
     ), t AS (
       SELECT *,
         greatest(0.0, share * sum(n * amount::DOUBLE) OVER w - sum(funded * amount::DOUBLE) OVER w) AS target,
         coalesce(sum(rest * amount::DOUBLE) OVER (w ORDER BY day, amount, scheme ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
       FROM g WINDOW w AS (PARTITION BY payer, pay_to)
     )
     SELECT payer, pay_to, amount, scheme, day,
       CASE WHEN amount = 0 THEN 0 ELSE least(rest, greatest(0, round((target - before) / amount))) END::BIGINT AS n
     FROM t`,
  );
  await tinyShare(analytics);
  await hubLinks(analytics, chain, p);

  const screenColumns = SCREENS.map((s) => `coalesce(${s.pair}, false) AS "s_${s.kind}"`).join(",\n      ");
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_flagged AS
     SELECT payer, pay_to, hub_linked, ${screenColumns} FROM (
       SELECT q.*, coalesce(t.tiny_tx, 0) AS tiny_tx, coalesce(tn.n, 0) AS tiny_n,
         pm.payer_merchants, pm.payer_light_merchants, pm.cluster_tx,
         r.payer IS NOT NULL AS in_ring, h.payer IS NOT NULL AS hub_linked, f.funded_from
       FROM rw_pair_totals q LEFT JOIN rw_pair_tiny t USING (payer, pay_to) LEFT JOIN rw_payer_merchants pm USING (payer, pay_to)
       LEFT JOIN rw_ring r USING (payer, pay_to) LEFT JOIN rw_hub_links h USING (payer, pay_to)
       LEFT JOIN rw_funding f USING (payer, pay_to)
       LEFT JOIN (SELECT payer, pay_to, sum(n) AS n FROM rw_tiny_n GROUP BY ALL) tn USING (payer, pay_to)
     ) WHERE ${SCREENS.map((s) => `"s_${s.kind}"`).join(" OR ")} OR hub_linked`,
  );

  // Only the groups of suspect (or hub-linked) pairs are classified, split into the payments paid with
  // the merchant's own money (provenance/), the ring's share, tiny_repeat's share and the rest.
  const kind = `CASE ${SCREENS.map((s) => `WHEN "s_${s.kind}" AND (${s.payment}) THEN '${s.kind}'`).join(" ")} END`;
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_flag_groups AS
     SELECT payer, pay_to, amount, scheme, day, n, ${kind} AS kind, hub_linked FROM (
       SELECT payer, pay_to, amount, scheme, day, f.hub_linked, ${SCREENS.map((s) => `f."s_${s.kind}"`).join(", ")},
         s.after_funding, s.ring_part, s.tiny_part, s.n
       FROM rw_groups g JOIN rw_flagged f USING (payer, pay_to)
       LEFT JOIN rw_after a USING (payer, pay_to, amount, scheme, day)
       LEFT JOIN rw_ring_n rn USING (payer, pay_to, amount, scheme, day)
       LEFT JOIN rw_tiny_n tn USING (payer, pay_to, amount, scheme, day)
       CROSS JOIN LATERAL (VALUES (true, false, false, coalesce(a.n, 0)), (false, true, false, coalesce(rn.n, 0)),
         (false, false, true, coalesce(tn.n, 0)),
         (false, false, false, g.n - coalesce(a.n, 0) - coalesce(rn.n, 0) - coalesce(tn.n, 0)))
         s(after_funding, ring_part, tiny_part, n)
       WHERE s.n > 0
     )`,
  );

  await figures(analytics, chain, ringGraph);
}

/**
 * tiny_repeat in proportion to the count (`rw_tiny_n`: payer, pay_to, amount, scheme, day, n): a cluster with
 * k tiny payments to a merchant has k / `tinyRepeatMinPayments` of them flagged (all from that count on), of
 * those no earlier screen took, the earliest first (by day, amount, scheme, then wallet), rounded to whole
 * payments over the cluster, not per wallet, so that splitting a cluster's payments over more wallets moves
 * nothing. One payment fewer than the count hides one tenth of the cluster's tiny payments, not all of them.
 */
async function tinyShare(analytics: Analytics): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_tiny_n AS
     WITH g AS (
       SELECT g.payer, g.pay_to, g.amount, g.scheme, g.day, t.cluster, t.tiny_tx,
         g.n - coalesce(a.n, 0) - coalesce(rn.n, 0) AS rest
       FROM rw_groups g JOIN rw_pair_tiny t USING (payer, pay_to) JOIN rw_tiny USING (pay_to)
       LEFT JOIN rw_after a USING (payer, pay_to, amount, scheme, day)
       LEFT JOIN rw_ring_n rn USING (payer, pay_to, amount, scheme, day)
       WHERE g.amount <= ${SQL_TINY_MAX}
     ), c AS (
       SELECT *,
         round(least(1.0, tiny_tx / ${THRESHOLDS.tinyRepeatMinPayments}) * sum(rest) OVER w) AS target,
         coalesce(sum(rest) OVER (w ORDER BY day, amount, scheme, payer ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
       FROM g WINDOW w AS (PARTITION BY cluster, pay_to)
     )
     SELECT payer, pay_to, amount, scheme, day, least(rest, greatest(0, target - before))::BIGINT AS n
     FROM c WHERE target > before AND rest > 0`,
  );
}

/** The per-merchant tables (see the module's comment) from the classified groups. */
async function figures(analytics: Analytics, chain: AnyChainRecord, ringGraph: RingGraph): Promise<void> {
  const flagged = "(SELECT * FROM rw_flag_groups WHERE kind IS NOT NULL)";
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_figures AS
    WITH totals AS (
      SELECT pay_to, sum(tx)::BIGINT AS tx, sum(amount) AS amount, count(*) AS buyers,
        max(amount) AS top_amount
      FROM rw_pair_totals GROUP BY pay_to
    ), hist AS (
      SELECT pay_to, amount, sum(n) AS n FROM rw_groups GROUP BY pay_to, amount
    ), quartiles AS (
      SELECT pay_to, max(value) FILTER (k = 1) AS p25, max(value) FILTER (k = 2) AS median,
        max(value) FILTER (k = 3) AS p75
      FROM (${quartilesOf("hist", [1, 2, 3])}) GROUP BY pay_to
    ), flag_pairs AS (
      SELECT pay_to, payer, sum(n) FILTER (kind IS NULL) AS passing, bool_or(hub_linked) AS hub_linked
      FROM rw_flag_groups GROUP BY pay_to, payer
    ), lost_buyers AS (
      SELECT pay_to, count(*) FILTER (passing IS NULL) AS lost,
        count(*) FILTER (passing IS NOT NULL AND hub_linked) AS hub_linked_buyers
      FROM flag_pairs GROUP BY pay_to
    ), flag_totals AS (
      SELECT pay_to, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount FROM ${flagged} GROUP BY pay_to
    ), passing_hist AS (
      -- Merchants with flags only: for the rest median_passing is the median.
      SELECT h.pay_to, h.amount, h.n - coalesce(f.n, 0) AS n FROM hist h
      LEFT JOIN (SELECT pay_to, amount, sum(n) AS n FROM ${flagged} GROUP BY ALL) f USING (pay_to, amount)
      WHERE h.pay_to IN (SELECT pay_to FROM flag_totals) AND h.n > coalesce(f.n, 0)
    ), passing_medians AS (
      SELECT pay_to, value AS median_passing FROM (${quartilesOf("passing_hist", [2])})
    ), merchants AS (
      SELECT m.address, m.name, m.claimed, m.held,
        coalesce(t.tx, 0) AS tx, coalesce(t.amount, 0) AS amount, coalesce(t.buyers, 0) AS buyers,
        coalesce(t.top_amount, 0) AS top_amount,
        coalesce(t.tx, 0) - coalesce(f.tx, 0) AS real_tx,
        coalesce(t.amount, 0) - coalesce(f.amount, 0) AS real_amount,
        coalesce(t.buyers, 0) - coalesce(lb.lost, 0) AS real_buyers,
        coalesce(q.p25, 0) AS p25, coalesce(q.median, 0) AS median, coalesce(q.p75, 0) AS p75,
        CASE WHEN f.pay_to IS NULL THEN coalesce(q.median, 0) ELSE coalesce(pm.median_passing, 0) END AS median_passing,
        coalesce(lb.hub_linked_buyers, 0) AS hub_linked_buyers
      FROM merchants m
      LEFT JOIN totals t ON t.pay_to = m.address
      LEFT JOIN quartiles q ON q.pay_to = m.address
      LEFT JOIN flag_totals f ON f.pay_to = m.address
      LEFT JOIN lost_buyers lb ON lb.pay_to = m.address
      LEFT JOIN passing_medians pm ON pm.pay_to = m.address
      WHERE ${sqlChainMerchant(chain, "m.address")}
    )
    SELECT *, ${sqlRank()} AS rank FROM merchants`,
  );

  const precedence = `CASE kind ${SCREENS.map((s, i) => `WHEN '${s.kind}' THEN ${i}`).join(" ")} END`;
  // The flags' cents by largest remainder: every kind gets its cents rounded down, the cents left to reach
  // usd - real_usd go to the kinds with the largest remainders, so the flags add up exactly.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_flag_kinds AS
     WITH k AS (
       SELECT pay_to, kind, ${precedence} AS precedence, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount
       FROM ${flagged} GROUP BY pay_to, kind
     )
     SELECT k.*, ${sqlApportionedCents({
       amount: "k.amount",
       totalCents: `${sqlCents("m.amount")} - ${sqlCents("m.real_amount")}`,
       partition: "k.pay_to",
       tieBreak: "k.precedence",
     })} AS cents
     FROM k JOIN rw_figures m ON m.address = k.pay_to`,
  );
  // Daily cents by largest remainder, like the flags' (report.ts): each day gets its cents rounded down,
  // the cents left to reach the merchant's rounded total go to the days with the largest remainders, so
  // the days add up to usd and real_usd exactly. No day may show more real than reported, so the real
  // cents go first, to days whose real cents rounded up stay within the reported cents rounded down
  // where they can; the reported cents then go first to the days where real took such a cent. There are
  // never more of those days than reported cents left over: they number at most the real remainders of
  // days whose real and reported whole cents are equal, rounded, and each such day's reported remainder
  // is at least its real one.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_days AS
     WITH d AS (
       SELECT pay_to, day, d.tx, d.amount, d.amount - coalesce(f.amount, 0) AS real_amount
       FROM (SELECT pay_to, day, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount FROM rw_groups GROUP BY ALL) d
       LEFT JOIN (SELECT pay_to, day, sum(amount::HUGEINT * n) AS amount FROM ${flagged} GROUP BY ALL) f USING (pay_to, day)
     ), marked AS (
       SELECT DISTINCT pay_to FROM ${flagged}
     ), c AS (
       SELECT *, ${sqlApportionedCents({
         amount: "real_amount",
         totalCents: sqlCents("sum(real_amount) OVER (PARTITION BY pay_to)"),
         partition: "pay_to",
         prefer: `real_amount // ${CENT} < amount // ${CENT}`,
         tieBreak: "day",
       })} AS real_cents
       FROM d WHERE pay_to IN (SELECT pay_to FROM marked)
     )
     SELECT pay_to, day, tx, ${sqlApportionedCents({
       amount: "amount",
       totalCents: sqlCents("sum(amount) OVER (PARTITION BY pay_to)"),
       partition: "pay_to",
       prefer: `real_cents > amount // ${CENT}`,
       tieBreak: "day",
     })} AS cents, real_cents
     FROM c
     UNION ALL
     -- A merchant without flags: real is reported on every day, both passes above give every day the same
     -- cents (the first gives the extra cents to the days the second then prefers), so one pass does.
     SELECT pay_to, day, tx, cents, cents FROM (
       SELECT pay_to, day, tx, ${sqlApportionedCents({
         amount: "amount",
         totalCents: sqlCents("sum(amount) OVER (PARTITION BY pay_to)"),
         partition: "pay_to",
         tieBreak: "day",
       })} AS cents
       FROM d WHERE pay_to NOT IN (SELECT pay_to FROM marked)
     )`,
  );
  await schemes(analytics, flagged);
  // The page's wallet tables: each kind's cents shared among its wallets the same way, so a table's rows
  // (the largest wallets, then one row for the rest) add up to the flag's heading.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_wallets AS
     WITH w AS (
       SELECT pay_to, kind, payer, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount
       FROM ${flagged} GROUP BY pay_to, kind, payer
     )
     SELECT w.*, k.precedence,
       ${sqlApportionedCents({ amount: "w.amount", totalCents: "k.cents", partition: "w.pay_to, w.kind", tieBreak: "w.payer" })} AS cents,
       row_number() OVER (PARTITION BY w.pay_to, w.kind ORDER BY w.amount DESC, w.payer) AS place
     FROM w JOIN rw_flag_kinds k USING (pay_to, kind)`,
  );
  await evidenceFacts(analytics, ringGraph, SHOWN_WALLETS);
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_details AS
     WITH kinds AS (
       SELECT pay_to, kind, precedence,
         list({'wallet': payer, 'tx': tx, 'usd': cents / 100, 'evidence': e.facts} ORDER BY place)
           FILTER (place <= ${SHOWN_WALLETS}) AS wallets,
         {'wallets': count(*) FILTER (place > ${SHOWN_WALLETS}), 'tx': coalesce(sum(tx) FILTER (place > ${SHOWN_WALLETS}), 0),
          'usd': coalesce(sum(cents) FILTER (place > ${SHOWN_WALLETS}), 0) / 100} AS rest
       FROM rw_wallets LEFT JOIN rw_evidence e USING (pay_to, kind, payer) GROUP BY pay_to, kind, precedence
     ), payers AS (
       -- A wallet flagged under two kinds is one wallet: the feed filtered to the merchant lists it once.
       SELECT pay_to, count(DISTINCT payer) AS named FROM rw_wallets GROUP BY pay_to
     )
     SELECT pay_to,
       '{"flagged_wallets":{' || string_agg(to_json(kind) || ':' || to_json(wallets), ',' ORDER BY precedence) ||
       '},"more_wallets":{' || coalesce(string_agg(to_json(kind) || ':' || to_json(rest), ',' ORDER BY precedence)
         FILTER (rest.wallets > 0), '') || '},"wallets":' || any_value(p.named) || '}' AS details
     FROM kinds JOIN payers p USING (pay_to) GROUP BY pay_to`,
  );
}

/**
 * `rw_schemes`: the payments by scheme, their cents shared out like the days' (real first), so that the
 * schemes add up to usd and real_usd exactly and no scheme shows more real than reported.
 */
async function schemes(analytics: Analytics, flagged: string): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_schemes AS
     WITH s AS (
       SELECT pay_to, scheme, g.tx, g.amount, g.tx - coalesce(f.tx, 0) AS real_tx,
         g.amount - coalesce(f.amount, 0) AS real_amount
       FROM (SELECT pay_to, scheme, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount FROM rw_groups GROUP BY ALL) g
       LEFT JOIN (SELECT pay_to, scheme, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount FROM ${flagged} GROUP BY ALL) f
         USING (pay_to, scheme)
     ), marked AS (
       SELECT DISTINCT pay_to FROM ${flagged}
     ), c AS (
       SELECT s.*, ${sqlApportionedCents({
         amount: "s.real_amount",
         totalCents: sqlCents("m.real_amount"),
         partition: "s.pay_to",
         prefer: `s.real_amount // ${CENT} < s.amount // ${CENT}`,
         tieBreak: "s.scheme",
       })} AS real_cents
       FROM s JOIN rw_figures m ON m.address = s.pay_to WHERE s.pay_to IN (SELECT pay_to FROM marked)
     )
     SELECT c.pay_to, c.scheme, c.tx, c.real_tx, ${sqlApportionedCents({
       amount: "c.amount",
       totalCents: sqlCents("m.amount"),
       partition: "c.pay_to",
       prefer: `c.real_cents > c.amount // ${CENT}`,
       tieBreak: "c.scheme",
     })} AS cents, c.real_cents
     FROM c JOIN rw_figures m ON m.address = c.pay_to
     UNION ALL
     -- Without flags, one pass gives both (as the days' in figures()).
     SELECT pay_to, scheme, tx, real_tx, cents, cents FROM (
       SELECT s.pay_to, s.scheme, s.tx, s.real_tx, ${sqlApportionedCents({
         amount: "s.amount",
         totalCents: sqlCents("m.amount"),
         partition: "s.pay_to",
         tieBreak: "s.scheme",
       })} AS cents
       FROM s JOIN rw_figures m ON m.address = s.pay_to WHERE s.pay_to NOT IN (SELECT pay_to FROM marked)
     )`,
  );
}
