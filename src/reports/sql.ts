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

const TEMP_TABLES = ["rw_payments", "rw_pairs", "rw_edges", "rw_returns", "rw_flagged", "rw_classified"];

/** Builds the aggregates of one window for every merchant paid in it. */
export async function aggregateWindow(store: Store, bounds: WindowBounds): Promise<WindowAggregates> {
  const p = { start: bounds.startBlock, end: bounds.endBlock };
  try {
    await store.run(
      `CREATE OR REPLACE TEMP TABLE rw_payments AS
       SELECT payer, pay_to, amount, block_number, block_time::DATE AS day FROM payments
       WHERE chain = 'base' AND asset = '${BASE_USDC}' AND block_number > $start AND block_number <= $end`,
      p,
    );
    await store.run(`CREATE OR REPLACE TEMP TABLE rw_pairs AS
      WITH pairs AS (
        SELECT payer, pay_to, count(*) AS tx, sum(amount)::BIGINT AS amount,
          count(*) FILTER (amount < ${THRESHOLDS.tinyAmount}) AS tiny_tx
        FROM rw_payments GROUP BY payer, pay_to
      ), tiny_modes AS (
        SELECT payer, pay_to, max(n) AS tiny_mode_tx FROM (
          SELECT payer, pay_to, count(*) AS n FROM rw_payments WHERE amount < ${THRESHOLDS.tinyAmount}
          GROUP BY payer, pay_to, amount
        ) GROUP BY payer, pay_to
      ), payers AS (
        SELECT payer, count(*) AS payer_merchants,
          count(*) FILTER (tx <= ${THRESHOLDS.proberMaxPaymentsPerMerchant}) AS payer_light_merchants
        FROM pairs GROUP BY payer
      )
      SELECT pairs.*, coalesce(tiny_mode_tx, 0) AS tiny_mode_tx, payer_merchants, payer_light_merchants
      FROM pairs JOIN payers USING (payer) LEFT JOIN tiny_modes USING (payer, pay_to)`);

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

    const kind = `CASE ${SCREENS.map((s) => `WHEN "s_${s.kind}" AND (${s.payment}) THEN '${s.kind}'`).join(" ")} END`;
    await store.run(`CREATE OR REPLACE TEMP TABLE rw_classified AS
      SELECT p.payer, p.pay_to, p.amount, p.day, ${kind} AS kind, coalesce(f.hub_linked, false) AS hub_linked
      FROM rw_payments p LEFT JOIN rw_flagged f USING (payer, pay_to)`);

    const flagColumns = SCREENS.map(
      (s) =>
        `count(*) FILTER (kind = '${s.kind}') AS "tx_${s.kind}", coalesce(sum(amount) FILTER (kind = '${s.kind}'), 0)::BIGINT AS "amount_${s.kind}"`,
    ).join(",\n        ");
    const rows = await store.all(`
      WITH tops AS (SELECT pay_to, max(amount) AS top_amount FROM rw_pairs GROUP BY pay_to)
      SELECT pay_to, count(*) AS tx, sum(amount)::BIGINT AS amount, count(DISTINCT payer) AS buyers,
        count(*) FILTER (kind IS NULL) AS real_tx,
        coalesce(sum(amount) FILTER (kind IS NULL), 0)::BIGINT AS real_amount,
        count(DISTINCT payer) FILTER (kind IS NULL) AS real_buyers,
        count(DISTINCT payer) FILTER (kind IS NULL AND hub_linked) AS hub_linked_buyers,
        quantile_cont(amount, [0.25, 0.5, 0.75]) AS quartiles,
        quantile_cont(amount, 0.5) FILTER (kind IS NULL) AS median_passing,
        ${flagColumns},
        any_value(top_amount) AS top_amount
      FROM rw_classified JOIN tops USING (pay_to) GROUP BY pay_to`);
    const merchants = rows.map((row) => {
      const flags: MerchantAggregate["flags"] = {};
      for (const s of SCREENS) {
        const tx = row[`tx_${s.kind}`] as bigint;
        if (tx > 0n) flags[s.kind] = { tx, amount: row[`amount_${s.kind}`] as bigint };
      }
      return { ...(row as unknown as MerchantAggregate), flags };
    });

    const daily = await store.all<DailyAggregate & Record<string, unknown>>(`
      SELECT pay_to, day, count(*) AS tx, sum(amount)::BIGINT AS amount,
        coalesce(sum(amount) FILTER (kind IS NULL), 0)::BIGINT AS real_amount
      FROM rw_classified GROUP BY pay_to, day ORDER BY pay_to, day`);
    const flaggedWallets = await store.all<FlaggedWallet & Record<string, unknown>>(`
      SELECT pay_to, kind, payer, count(*) AS tx, sum(amount)::BIGINT AS amount
      FROM rw_classified WHERE kind IS NOT NULL GROUP BY pay_to, kind, payer
      QUALIFY row_number() OVER (PARTITION BY pay_to, kind ORDER BY sum(amount) DESC, payer) <= 20`);
    return { merchants, daily, flaggedWallets };
  } finally {
    for (const t of TEMP_TABLES) await store.run(`DROP TABLE IF EXISTS temp.${t}`);
  }
}
