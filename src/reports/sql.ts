import { BASE_USDC } from "../chain/base.ts";
import type { Store } from "../store/duckdb.ts";
import type { Listing } from "./listings.ts";
import { sqlCents } from "./money.ts";
import { SCREENS, THRESHOLDS } from "./screens/index.ts";

/**
 * All the SQL of the report, in one place. A window is built for every merchant at once.
 *
 * The window's payments are read once, into groups the screens cannot tell apart: same payer, merchant,
 * amount, day and side of the first funding transfer. A week of 10 million payments makes about a
 * seventh as many groups, and everything else (pairs, screens, quartiles, daily totals, flags) is
 * computed from them, so the build costs about one GROUP BY over the window plus small tables.
 */

export interface WindowBounds {
  /** Exclusive: the window holds blocks start_block + 1 .. end_block. */
  startBlock: number;
  endBlock: number;
  /** The window's first UTC date (YYYY-MM-DD): day 0 of `MerchantAggregate.daily`. */
  firstDate: string;
}

/** One day of a merchant's window: [day index from the first date, tx, usd cents, real usd cents]. */
export type DailyAggregate = [day: number, tx: number, cents: number, realCents: number];

/** Everything one merchant's report is made of; merchants without payments have zero figures. */
export interface MerchantAggregate {
  address: string;
  name: string | null;
  claimed: boolean;
  frozen: boolean;
  listings: Listing[];
  tx: bigint;
  amount: bigint;
  buyers: bigint;
  real_tx: bigint;
  real_amount: bigint;
  real_buyers: bigint;
  top_amount: bigint;
  /** p25, median, p75 of the window's payments, atomic units (interpolated). */
  quartiles: [number, number, number];
  median_passing: number | null;
  hub_linked_buyers: bigint;
  /** Per kind: [tx, atomic amount]; only kinds with flagged payments. */
  flags: Record<string, { tx: bigint; amount: bigint }>;
  /** Only days with payments, in order. */
  daily: DailyAggregate[];
  /** The page's details as JSON: `{"flagged_wallets": {kind: [{wallet, tx, usd}]}}`, the 20 largest per kind. */
  details: string;
}

const TEMP_TABLES = [
  "rw_funding",
  "rw_groups",
  "rw_pairs",
  "rw_edges",
  "rw_returns",
  "rw_flagged",
  "rw_flag_groups",
];

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

/** Builds the aggregates of one window for every merchant in the store, by address. */
export async function aggregateWindow(store: Store, bounds: WindowBounds): Promise<MerchantAggregate[]> {
  const p = { start: bounds.startBlock, end: bounds.endBlock };
  try {
    // Who received USDC from whom: the merchant_funded screen's evidence, looking back before the window.
    await store.run(
      `CREATE OR REPLACE TEMP TABLE rw_funding AS
       SELECT from_address AS pay_to, to_address AS payer, min(block_number) AS funded_from FROM transfers
       WHERE chain = 'base' AND block_number > $lookback AND block_number <= $end GROUP BY ALL`,
      { end: p.end, lookback: p.start - THRESHOLDS.fundingLookbackBlocks },
    );
    // The one pass over the window's payments; the store is written in block order, so zone maps skip the rest.
    await store.run(
      `CREATE OR REPLACE TEMP TABLE rw_groups AS
       SELECT w.payer, w.pay_to, w.amount, (w.block_time::DATE - $first::DATE)::INTEGER AS day,
         coalesce(w.block_number >= f.funded_from, false) AS after_funding, count(*) AS n
       FROM payments w LEFT JOIN rw_funding f USING (payer, pay_to)
       WHERE w.chain = 'base' AND w.asset = '${BASE_USDC}' AND w.block_number > $start AND w.block_number <= $end
       GROUP BY ALL`,
      { ...p, first: bounds.firstDate },
    );
    await store.run(
      `CREATE OR REPLACE TEMP TABLE rw_pairs AS
      WITH amounts AS (
        SELECT payer, pay_to, amount, sum(n)::BIGINT AS n FROM rw_groups GROUP BY ALL
      ), pairs AS (
        SELECT payer, pay_to, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n)::BIGINT AS amount,
          coalesce(sum(n) FILTER (amount < ${THRESHOLDS.tinyAmount}), 0)::BIGINT AS tiny_tx,
          coalesce(max(n) FILTER (amount < ${THRESHOLDS.tinyAmount}), 0)::BIGINT AS tiny_mode_tx
        FROM amounts GROUP BY payer, pay_to
      ), payers AS (
        SELECT payer, count(*) AS payer_merchants,
          count(*) FILTER (tx <= ${THRESHOLDS.proberMaxPaymentsPerMerchant}) AS payer_light_merchants
        FROM pairs GROUP BY payer
      )
      SELECT pairs.*, payer_merchants, payer_light_merchants FROM pairs JOIN payers USING (payer)`,
    );

    // The window's money graph: its x402 payments and its plain USDC transfers.
    await store.run(
      `CREATE OR REPLACE TEMP TABLE rw_edges AS
       SELECT src, dst, sum(amount)::BIGINT AS amount FROM (
         SELECT payer AS src, pay_to AS dst, amount FROM rw_pairs
         UNION ALL
         SELECT from_address, to_address, amount FROM transfers
         WHERE chain = 'base' AND block_number > $start AND block_number <= $end
       ) GROUP BY src, dst`,
      p,
    );
    // Value that came back from each merchant to each of its payers, directly or through one wallet.
    await store.run(`CREATE OR REPLACE TEMP TABLE rw_returns AS
      WITH hubs AS (
        SELECT src AS wallet FROM rw_edges GROUP BY src HAVING count(*) >= ${THRESHOLDS.hubMinRecipients}
      ), merchant_out AS (
        SELECT src AS m, dst AS x, amount FROM rw_edges WHERE src IN (SELECT DISTINCT pay_to FROM rw_pairs)
      ), payer_in AS (
        SELECT src AS x, dst AS p, amount FROM rw_edges
        WHERE dst IN (SELECT DISTINCT payer FROM rw_pairs) AND src IN (SELECT x FROM merchant_out)
      ), paths AS (
        SELECT o.m, i.p, least(o.amount, i.amount) AS amount, o.x IN (SELECT wallet FROM hubs) AS via_hub
        FROM merchant_out o JOIN payer_in i ON o.x = i.x
        WHERE o.x <> i.p AND o.x <> o.m AND i.p <> o.m
      ), returns AS (
        SELECT src AS m, dst AS p, amount, false AS via_hub FROM rw_edges
        UNION ALL SELECT m, p, amount, via_hub FROM paths
      )
      SELECT r.m AS pay_to, r.p AS payer,
        coalesce(sum(r.amount) FILTER (NOT r.via_hub), 0)::BIGINT AS returned,
        bool_or(r.via_hub) AS hub_linked
      FROM returns r SEMI JOIN rw_pairs q ON q.pay_to = r.m AND q.payer = r.p
      GROUP BY r.m, r.p`);

    const screenColumns = SCREENS.map((s) => `coalesce(${s.pair}, false) AS "s_${s.kind}"`).join(
      ",\n        ",
    );
    await store.run(
      `CREATE OR REPLACE TEMP TABLE rw_flagged AS
       SELECT payer, pay_to, hub_linked, ${screenColumns} FROM (
         SELECT q.*, coalesce(r.returned, 0) AS returned, coalesce(r.hub_linked, false) AS hub_linked, f.funded_from
         FROM rw_pairs q LEFT JOIN rw_returns r USING (payer, pay_to) LEFT JOIN rw_funding f USING (payer, pay_to)
       ) WHERE ${SCREENS.map((s) => `"s_${s.kind}"`).join(" OR ")} OR hub_linked`,
    );

    // Only the groups of suspect (or hub-linked) pairs are classified.
    const kind = `CASE ${SCREENS.map((s) => `WHEN "s_${s.kind}" AND (${s.payment}) THEN '${s.kind}'`).join(" ")} END`;
    await store.run(
      `CREATE OR REPLACE TEMP TABLE rw_flag_groups AS
       SELECT g.payer, g.pay_to, g.amount, g.day, g.n, ${kind} AS kind, f.hub_linked
       FROM rw_groups g JOIN rw_flagged f USING (payer, pay_to)`,
    );

    return await readMerchants(store);
  } finally {
    for (const t of TEMP_TABLES) await store.run(`DROP TABLE IF EXISTS temp.${t}`);
  }
}

/** Every merchant's figures, listings, daily totals and flagged wallets: one row each, by address. */
async function readMerchants(store: Store): Promise<MerchantAggregate[]> {
  const flagColumns = SCREENS.map(
    (s) =>
      `coalesce(sum(n) FILTER (kind = '${s.kind}'), 0)::BIGINT AS "tx_${s.kind}",
        coalesce(sum(amount::HUGEINT * n) FILTER (kind = '${s.kind}'), 0)::BIGINT AS "amount_${s.kind}"`,
  ).join(",\n        ");
  const precedence = `CASE kind ${SCREENS.map((s, i) => `WHEN '${s.kind}' THEN ${i}`).join(" ")} END`;
  const flagged = "(SELECT * FROM rw_flag_groups WHERE kind IS NOT NULL)";
  const rows = await store.all(
    `WITH totals AS (
        SELECT pay_to, sum(tx)::BIGINT AS tx, sum(amount)::BIGINT AS amount, count(*) AS buyers,
          max(amount) AS top_amount
        FROM rw_pairs GROUP BY pay_to
      ), hist AS (
        SELECT pay_to, amount, sum(n) AS n FROM rw_groups GROUP BY pay_to, amount
      ), quartiles AS (
        SELECT pay_to, list(value ORDER BY k) AS quartiles FROM (${quartilesOf("hist", [1, 2, 3])}) GROUP BY pay_to
      ), flag_pairs AS (
        SELECT pay_to, payer, sum(n) FILTER (kind IS NULL) AS passing, bool_or(hub_linked) AS hub_linked
        FROM rw_flag_groups GROUP BY pay_to, payer
      ), lost_buyers AS (
        SELECT pay_to, count(*) FILTER (passing IS NULL) AS lost,
          count(*) FILTER (passing IS NOT NULL AND hub_linked) AS hub_linked_buyers
        FROM flag_pairs GROUP BY pay_to
      ), flag_totals AS (
        SELECT pay_to, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n)::BIGINT AS amount, ${flagColumns}
        FROM ${flagged} GROUP BY pay_to
      ), passing_hist AS (
        -- Merchants with flags only: for the rest median_passing is the median.
        SELECT h.pay_to, h.amount, h.n - coalesce(f.n, 0) AS n FROM hist h
        LEFT JOIN (SELECT pay_to, amount, sum(n) AS n FROM ${flagged} GROUP BY ALL) f USING (pay_to, amount)
        WHERE h.pay_to IN (SELECT pay_to FROM flag_totals) AND h.n > coalesce(f.n, 0)
      ), passing_medians AS (
        SELECT pay_to, value AS median_passing FROM (${quartilesOf("passing_hist", [2])})
      ), days AS (
        SELECT g.pay_to, g.day, sum(g.n)::BIGINT AS tx, sum(g.amount::HUGEINT * g.n) AS amount,
          coalesce(f.amount, 0) AS flagged
        FROM rw_groups g LEFT JOIN (
          SELECT pay_to, day, sum(amount::HUGEINT * n) AS amount FROM ${flagged} GROUP BY ALL
        ) f USING (pay_to, day)
        GROUP BY g.pay_to, g.day, f.amount
      ), daily AS (
        SELECT pay_to, to_json(list([day, tx, ${sqlCents("amount")}, ${sqlCents("amount - flagged")}] ORDER BY day)) AS daily
        FROM days GROUP BY pay_to
      ), wallets AS (
        SELECT pay_to, kind, payer, sum(n)::BIGINT AS tx, sum(amount::HUGEINT * n) AS amount
        FROM ${flagged} GROUP BY pay_to, kind, payer
        QUALIFY row_number() OVER (PARTITION BY pay_to, kind ORDER BY sum(amount::HUGEINT * n) DESC, payer) <= 20
      ), details AS (
        SELECT pay_to, '{' || string_agg(to_json(kind) || ':' || to_json(wallets), ',' ORDER BY precedence) || '}' AS flagged_wallets FROM (
          SELECT pay_to, kind, ${precedence} AS precedence, list({'wallet': payer, 'tx': tx, 'usd': ${sqlCents("amount")} / 100} ORDER BY amount DESC, payer) AS wallets
          FROM wallets GROUP BY pay_to, kind
        ) GROUP BY pay_to
      ), listings AS (
        SELECT pay_to, to_json(list({'resource': resource, 'price_usd': price_usd, 'description': description})) AS listings
        FROM listings GROUP BY pay_to
      )
      SELECT m.address, m.name, m.claimed, m.frozen, l.listings,
        coalesce(t.tx, 0) AS tx, coalesce(t.amount, 0) AS amount, coalesce(t.buyers, 0) AS buyers,
        coalesce(t.top_amount, 0) AS top_amount, q.quartiles,
        coalesce(t.tx, 0) - coalesce(f.tx, 0) AS real_tx,
        (coalesce(t.amount, 0) - coalesce(f.amount, 0))::BIGINT AS real_amount,
        coalesce(t.buyers, 0) - coalesce(lb.lost, 0) AS real_buyers,
        coalesce(lb.hub_linked_buyers, 0) AS hub_linked_buyers,
        CASE WHEN f.pay_to IS NULL THEN q.quartiles[2] ELSE pm.median_passing END AS median_passing,
        ${SCREENS.map((s) => `coalesce(f."tx_${s.kind}", 0) AS "tx_${s.kind}", coalesce(f."amount_${s.kind}", 0) AS "amount_${s.kind}"`).join(", ")},
        d.daily, concat('{"flagged_wallets":', coalesce(w.flagged_wallets, '{}'), '}') AS details
      FROM merchants m
      LEFT JOIN totals t ON t.pay_to = m.address
      LEFT JOIN quartiles q ON q.pay_to = m.address
      LEFT JOIN flag_totals f ON f.pay_to = m.address
      LEFT JOIN lost_buyers lb ON lb.pay_to = m.address
      LEFT JOIN passing_medians pm ON pm.pay_to = m.address
      LEFT JOIN daily d ON d.pay_to = m.address
      LEFT JOIN details w ON w.pay_to = m.address
      LEFT JOIN listings l ON l.pay_to = m.address
      ORDER BY m.address`,
  );
  return rows.map((row) => {
    const flags: MerchantAggregate["flags"] = {};
    for (const s of SCREENS) {
      const tx = BigInt(row[`tx_${s.kind}`] as bigint);
      if (tx > 0n) flags[s.kind] = { tx, amount: BigInt(row[`amount_${s.kind}`] as bigint) };
    }
    const quartiles = (row.quartiles as number[] | null) ?? [0, 0, 0];
    return {
      address: row.address as string,
      name: row.name as string | null,
      claimed: row.claimed as boolean,
      frozen: row.frozen as boolean,
      listings: row.listings ? (JSON.parse(row.listings as string) as Listing[]) : [],
      tx: row.tx as bigint,
      amount: row.amount as bigint,
      buyers: row.buyers as bigint,
      real_tx: row.real_tx as bigint,
      real_amount: row.real_amount as bigint,
      real_buyers: row.real_buyers as bigint,
      top_amount: row.top_amount as bigint,
      quartiles: [quartiles[0] ?? 0, quartiles[1] ?? 0, quartiles[2] ?? 0],
      median_passing: row.median_passing as number | null,
      hub_linked_buyers: row.hub_linked_buyers as bigint,
      flags,
      daily: row.daily ? (JSON.parse(row.daily as string) as DailyAggregate[]) : [],
      details: row.details as string,
    };
  });
}
