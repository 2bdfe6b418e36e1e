/**
 * What the evidence of a flagged wallet needs from a report build, kept with the report's details
 * (`rw_evidence`, for the wallets the page names): the facts the screens decided on, which only the
 * build's temporary tables hold. The rest (transaction hashes, times, the repeat pattern) is read from
 * the payments and transfers when the evidence is asked for (`document.ts`).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { RingGraph } from "../screens/cycles.ts";
import { SCREENS } from "../screens/index.ts";

/** One flagged wallet's facts, as stored in the details (atomic units, block numbers); a kind's own part is null for other kinds. */
export interface EvidenceFacts {
  /** Every screen whose rule the pair meets; each payment goes to the first whose payment rule it meets. */
  screens: string[];
  /** merchant_funded: the block where the merchant's money first reached the wallet. */
  funded_from: number | null;
  /** tiny_repeat: the merchant's largest tiny amount. */
  tiny_max: number;
  /** merchant_funded: the transfers from the merchant to the wallet, first hop first. */
  funding_path: { from: string; to: string; block: number; amount: number }[] | null;
  ring: {
    /** What came back to the wallet from inside its component, and what it sent into it. */
    returned: number;
    sent: number;
    /** A cycle through the payment, or null when the search gave up (a very large component). */
    cycle: {
      steps: {
        from: string;
        to: string;
        amount: number;
        paid: boolean;
        first_block: number;
        last_block: number;
      }[];
      moves: number;
      component_size: number;
    } | null;
  } | null;
  prober: { merchants: number; light_merchants: number; pair_tx: number } | null;
  tiny: {
    tiny_tx: number;
    mode_tx: number;
    mode_amount: number;
    price: number | null;
    price_source: string | null;
  } | null;
}

/**
 * Builds `rw_evidence` (pay_to, kind, payer, facts JSON) for the flagged wallets of `rw_wallets` placed
 * at most `shown`, from the build's tables (aggregates.ts, money-graph.ts) and the ring graph.
 */
export async function evidenceFacts(
  analytics: Analytics,
  ringGraph: RingGraph,
  shown: number,
): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_shown AS
     SELECT pay_to, kind, payer FROM rw_wallets WHERE place <= $shown`,
    { shown },
  );
  const ringPairs = await analytics.all<{ payer: string; pay_to: string }>(
    "SELECT DISTINCT payer, pay_to FROM rw_shown WHERE kind = 'ring'",
  );
  await analytics.run(
    "CREATE OR REPLACE TEMP TABLE rw_ring_cycles (payer VARCHAR, pay_to VARCHAR, cycle VARCHAR)",
  );
  await analytics.append("rw_ring_cycles", ringPairs, (a, { payer, pay_to }) => {
    const cycle = ringGraph.cycle(payer, pay_to);
    a.appendVarchar(payer);
    a.appendVarchar(pay_to);
    a.appendVarchar(
      JSON.stringify(
        cycle && {
          steps: cycle.steps.map((e) => ({
            from: e.src,
            to: e.dst,
            amount: e.amount,
            paid: e.paid,
            first_block: e.firstBlock,
            last_block: e.lastBlock,
          })),
          moves: cycle.moves,
          component_size: cycle.componentSize,
        },
      ),
    );
  });
  const screens = `list_filter([${SCREENS.map((s) => `CASE WHEN fl."s_${s.kind}" THEN '${s.kind}' END`).join(", ")}], x -> x IS NOT NULL)`;
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_evidence AS
     WITH RECURSIVE pairs AS (
       SELECT DISTINCT pay_to, payer FROM rw_shown
     ), walk AS (
       SELECT p.pay_to, p.payer, r.wallet, r.via, r.arrival, r.amount, r.hops
       FROM pairs p JOIN rw_funding f USING (pay_to, payer)
       JOIN rw_reach r ON r.pay_to = p.pay_to AND r.wallet = p.payer AND r.arrival = f.funded_from
       UNION ALL
       SELECT w.pay_to, w.payer, r.wallet, r.via, r.arrival, r.amount, r.hops
       FROM walk w JOIN rw_reach r ON r.pay_to = w.pay_to AND r.wallet = w.via AND r.hops = w.hops - 1
     ), paths AS (
       SELECT pay_to, payer,
         list({'from': via, 'to': wallet, 'block': arrival, 'amount': amount} ORDER BY hops) AS path
       FROM walk GROUP BY ALL
     ), modes AS (
       SELECT pay_to, payer, first(amount ORDER BY n DESC, amount) AS amount FROM (
         SELECT g.pay_to, g.payer, g.amount, sum(g.n) AS n
         FROM rw_groups g JOIN rw_tiny t USING (pay_to) SEMI JOIN rw_shown s ON s.pay_to = g.pay_to AND s.payer = g.payer AND s.kind = 'tiny_repeat'
         WHERE g.amount <= t.tiny_max GROUP BY ALL
       ) GROUP BY ALL
     )
     SELECT s.pay_to, s.kind, s.payer, json_object(
       'screens', ${screens}, 'funded_from', f.funded_from, 'tiny_max', t.tiny_max,
       'funding_path', CASE s.kind WHEN 'merchant_funded' THEN pa.path END,
       'ring', CASE s.kind WHEN 'ring' THEN json_object('returned', r.returned, 'sent', r.sent, 'cycle', c.cycle::JSON) END,
       'prober', CASE s.kind WHEN 'prober' THEN
         json_object('merchants', pm.payer_merchants, 'light_merchants', pm.payer_light_merchants, 'pair_tx', q.tx) END,
       'tiny', CASE s.kind WHEN 'tiny_repeat' THEN json_object('tiny_tx', ty.tiny_tx, 'mode_tx', ty.tiny_mode_tx,
         'mode_amount', m.amount, 'price', t.price, 'price_source', t.price_source) END
     ) AS facts
     FROM rw_shown s
     JOIN rw_flagged fl USING (pay_to, payer)
     JOIN rw_pair_totals q USING (pay_to, payer)
     LEFT JOIN rw_pair_tiny ty USING (pay_to, payer)
     LEFT JOIN rw_payer_merchants pm USING (payer)
     JOIN rw_tiny t USING (pay_to)
     LEFT JOIN rw_funding f USING (pay_to, payer)
     LEFT JOIN paths pa USING (pay_to, payer)
     LEFT JOIN rw_ring r USING (pay_to, payer)
     LEFT JOIN rw_ring_cycles c USING (pay_to, payer)
     LEFT JOIN modes m USING (pay_to, payer)`,
  );
}

export const EVIDENCE_TABLES = ["rw_wallets", "rw_shown", "rw_ring_cycles", "rw_evidence"];
