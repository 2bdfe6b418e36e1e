import { BASE_USDC } from "../chain/base.ts";
import type { Store } from "../store/duckdb.ts";
import { SCREENS, THRESHOLDS } from "./screens/index.ts";

/**
 * All the SQL of the report, in one place. A window is built for every merchant at once: the window's
 * payments are staged, aggregated per (payer, merchant) pair, the screens are decided per pair, each
 * payment gets at most one flag kind, and the merchants' figures come out of two GROUP BYs.
 */

export interface WindowBounds {
  /** Exclusive: the window holds blocks start_block + 1 .. end_block. */
  startBlock: number;
  endBlock: number;
}

export interface MerchantAggregate {
  pay_to: string;
  tx: bigint;
  amount: bigint;
  buyers: bigint;
  real_tx: bigint;
  real_amount: bigint;
  real_buyers: bigint;
  top_amount: bigint;
  quartiles: number[];
  median_passing: number | null;
  hub_linked_buyers: bigint;
  /** Per kind: [tx, atomic amount]. */
  flags: Record<string, { tx: bigint; amount: bigint }>;
}

export interface DailyAggregate {
  pay_to: string;
  day: Date;
  tx: bigint;
  amount: bigint;
  real_amount: bigint;
}

export interface FlaggedWallet {
  pay_to: string;
  kind: string;
  payer: string;
  tx: bigint;
  amount: bigint;
}

export interface WindowAggregates {
  merchants: MerchantAggregate[];
  daily: DailyAggregate[];
  flaggedWallets: FlaggedWallet[];
}

const TEMP_TABLES = ["rw_pairs", "rw_edges", "rw_returns", "rw_flagged", "rw_flag_payments"];

/**
 * Builds the aggregates of one window for every merchant paid in it.
 *
 * Flagged payments are a small part of any real week, so real figures are computed as all minus
 * flagged: only the payments of suspect pairs are classified one by one, and the full passes over the
 * window are the few a plain explorer needs too (pairs, daily totals, quartiles).
 */
export async function aggregateWindow(store: Store, bounds: WindowBounds): Promise<WindowAggregates> {
  const p = { start: bounds.startBlock, end: bounds.endBlock };
  // The window's payments; the store is written in block order, so zone maps skip the rest.
  const W = `(SELECT payer, pay_to, amount, block_number, block_time FROM payments
    WHERE chain = 'base' AND asset = '${BASE_USDC}' AND block_number > $start AND block_number <= $end)`;
  try {
    await store.run(
      `CREATE OR REPLACE TEMP TABLE rw_pairs AS
      WITH pairs AS (
        SELECT payer, pay_to, count(*) AS tx, sum(amount)::BIGINT AS amount,
          count(*) FILTER (amount < ${THRESHOLDS.tinyAmount}) AS tiny_tx
        FROM ${W} GROUP BY payer, pay_to
      ), tiny_modes AS (
        SELECT payer, pay_to, max(n) AS tiny_mode_tx FROM (
          SELECT payer, pay_to, count(*) AS n FROM ${W} WHERE amount < ${THRESHOLDS.tinyAmount}
          GROUP BY payer, pay_to, amount
        ) GROUP BY payer, pay_to
      ), payers AS (
        SELECT payer, count(*) AS payer_merchants,
          count(*) FILTER (tx <= ${THRESHOLDS.proberMaxPaymentsPerMerchant}) AS payer_light_merchants
        FROM pairs GROUP BY payer
      )
      SELECT pairs.*, coalesce(tiny_mode_tx, 0) AS tiny_mode_tx, payer_merchants, payer_light_merchants
      FROM pairs JOIN payers USING (payer) LEFT JOIN tiny_modes USING (payer, pay_to)`,
      p,
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
       SELECT payer, pay_to, funded_from, hub_linked, ${screenColumns} FROM (
         SELECT q.*, coalesce(r.returned, 0) AS returned, coalesce(r.hub_linked, false) AS hub_linked, f.funded_from
         FROM rw_pairs q
         LEFT JOIN rw_returns r USING (payer, pay_to)
         LEFT JOIN (
           SELECT from_address AS pay_to, to_address AS payer, min(block_number) AS funded_from FROM transfers
           WHERE chain = 'base' AND block_number > $lookback AND block_number <= $end GROUP BY ALL
         ) f USING (payer, pay_to)
       ) WHERE ${SCREENS.map((s) => `"s_${s.kind}"`).join(" OR ")} OR hub_linked`,
      { end: p.end, lookback: p.start - THRESHOLDS.fundingLookbackBlocks },
    );

    // Only the payments of suspect (or hub-linked) pairs are classified one by one.
    const kind = `CASE ${SCREENS.map((s) => `WHEN "s_${s.kind}" AND (${s.payment}) THEN '${s.kind}'`).join(" ")} END`;
    await store.run(
      `CREATE OR REPLACE TEMP TABLE rw_flag_payments AS
       SELECT w.payer, w.pay_to, w.amount, w.block_time::DATE AS day, ${kind} AS kind, f.hub_linked
       FROM ${W} w JOIN rw_flagged f USING (payer, pay_to)`,
      p,
    );

    const flagColumns = SCREENS.map(
      (s) =>
        `count(*) FILTER (kind = '${s.kind}') AS "tx_${s.kind}", coalesce(sum(amount) FILTER (kind = '${s.kind}'), 0)::BIGINT AS "amount_${s.kind}"`,
    ).join(",\n        ");
    const rows = await store.all(
      `WITH buyers AS (
        SELECT pay_to, count(*) AS buyers, max(amount) AS top_amount FROM rw_pairs GROUP BY pay_to
      ), quartiles AS (
        SELECT pay_to, count(*) AS tx, sum(amount)::BIGINT AS amount, quantile_cont(amount, [0.25, 0.5, 0.75]) AS quartiles
        FROM ${W} GROUP BY pay_to
      ), flagged_pairs AS (
        SELECT pay_to, payer, count(*) FILTER (kind IS NULL) AS passing, bool_or(hub_linked) AS hub_linked
        FROM rw_flag_payments GROUP BY pay_to, payer
      ), flagged AS (
        SELECT pay_to, count(*) FILTER (kind IS NOT NULL) AS tx, coalesce(sum(amount) FILTER (kind IS NOT NULL), 0)::BIGINT AS amount,
          ${flagColumns}
        FROM rw_flag_payments GROUP BY pay_to
      ), lost_buyers AS (
        SELECT pay_to, count(*) FILTER (passing = 0) AS lost, count(*) FILTER (passing > 0 AND hub_linked) AS hub_linked_buyers
        FROM flagged_pairs GROUP BY pay_to
      ), passing_medians AS (
        -- Merchants with flags only: the rest have median_passing = median.
        SELECT pay_to, quantile_cont(amount, 0.5) AS median_passing FROM (
          SELECT w.pay_to, w.amount FROM ${W} w
          WHERE w.pay_to IN (SELECT pay_to FROM flagged WHERE tx > 0)
            AND NOT EXISTS (SELECT 1 FROM rw_flagged f WHERE f.payer = w.payer AND f.pay_to = w.pay_to)
          UNION ALL
          SELECT pay_to, amount FROM rw_flag_payments WHERE kind IS NULL AND pay_to IN (SELECT pay_to FROM flagged WHERE tx > 0)
        ) GROUP BY pay_to
      )
      SELECT q.pay_to, q.tx, q.amount, b.buyers, b.top_amount, q.quartiles,
        q.tx - coalesce(f.tx, 0) AS real_tx,
        (q.amount - coalesce(f.amount, 0))::BIGINT AS real_amount,
        b.buyers - coalesce(l.lost, 0) AS real_buyers,
        coalesce(l.hub_linked_buyers, 0) AS hub_linked_buyers,
        CASE WHEN coalesce(f.tx, 0) = 0 THEN q.quartiles[2] ELSE pm.median_passing END AS median_passing,
        ${SCREENS.map((s) => `coalesce(f."tx_${s.kind}", 0) AS "tx_${s.kind}", coalesce(f."amount_${s.kind}", 0) AS "amount_${s.kind}"`).join(", ")}
      FROM quartiles q JOIN buyers b USING (pay_to)
      LEFT JOIN flagged f USING (pay_to) LEFT JOIN lost_buyers l USING (pay_to) LEFT JOIN passing_medians pm USING (pay_to)`,
      p,
    );
    const merchants = rows.map((row) => {
      const flags: MerchantAggregate["flags"] = {};
      for (const s of SCREENS) {
        const tx = BigInt(row[`tx_${s.kind}`] as bigint);
        if (tx > 0n) flags[s.kind] = { tx, amount: BigInt(row[`amount_${s.kind}`] as bigint) };
      }
      return { ...(row as unknown as MerchantAggregate), flags };
    });

    const daily = await store.all<DailyAggregate & Record<string, unknown>>(
      `WITH days AS (
        SELECT pay_to, block_time::DATE AS day, count(*) AS tx, sum(amount)::BIGINT AS amount FROM ${W} GROUP BY pay_to, day
      ), flagged AS (
        SELECT pay_to, day, sum(amount)::BIGINT AS amount FROM rw_flag_payments WHERE kind IS NOT NULL GROUP BY pay_to, day
      )
      SELECT d.pay_to, d.day, d.tx, d.amount, (d.amount - coalesce(f.amount, 0))::BIGINT AS real_amount
      FROM days d LEFT JOIN flagged f USING (pay_to, day)`,
      p,
    );
    const flaggedWallets = await store.all<FlaggedWallet & Record<string, unknown>>(`
      SELECT pay_to, kind, payer, count(*) AS tx, sum(amount)::BIGINT AS amount
      FROM rw_flag_payments WHERE kind IS NOT NULL GROUP BY pay_to, kind, payer
      QUALIFY row_number() OVER (PARTITION BY pay_to, kind ORDER BY sum(amount) DESC, payer) <= 20`);
    return { merchants, daily, flaggedWallets };
  } finally {
    for (const t of TEMP_TABLES) await store.run(`DROP TABLE IF EXISTS temp.${t}`);
  }
}
