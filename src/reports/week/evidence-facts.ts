/**
 * What the evidence of a flagged wallet needs from a report build, kept with the report's details
 * (`rw_evidence`, for the wallets the page names): the facts the screens decided on, which only the
 * build's temporary tables hold. The rest (transaction hashes, times, the repeat pattern) is read from
 * the payments and transfers when the evidence is asked for (`evidence-document.ts`). The facts' shape is
 * `EvidenceFacts` (../model.ts).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { RingGraph } from "../screens/cycles.ts";
import { SCREENS } from "../screens/index.ts";

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
     WITH ring_n AS (
       SELECT payer, pay_to, sum(n)::BIGINT AS flagged FROM rw_ring_n GROUP BY ALL
     ), tiny_n AS (
       SELECT payer, pay_to, sum(n)::BIGINT AS flagged FROM rw_tiny_n GROUP BY ALL
     ), sizes AS (
       SELECT cluster, count(*) AS wallets FROM rw_clusters
       WHERE cluster IN (SELECT c.cluster FROM rw_shown s JOIN rw_clusters c ON c.wallet = s.payer)
       GROUP BY cluster
     ), links AS (
       SELECT c.cluster, count(*) AS total, list({'wallet': l.wallet, 'linked': l.linked, 'rule': l.rule,
         'strong': l.strong, 'measure': l.measure} ORDER BY l.wallet, l.linked, l.rule)[1:64] AS links
       FROM rw_cluster_links l JOIN rw_clusters c ON c.wallet = l.wallet
       WHERE c.cluster IN (SELECT cluster FROM sizes) GROUP BY c.cluster
     )
     SELECT s.pay_to, s.kind, s.payer, json_object(
       'screens', ${screens}, 'funded_from', f.funded_from, 'tiny_max', t.tiny_max, 'exact_tiny_max', t.exact_tiny_max,
       'tiny_n', coalesce(tn.flagged, 0),
       'funding_path', CASE s.kind WHEN 'merchant_funded' THEN f.path::JSON END,
       -- Every kind's: a wallet's payments go to merchant_funded first, the others' evidence leaves them out.
       'provenance', CASE WHEN f.payer IS NOT NULL THEN
         json_object('own', f.own::DOUBLE, 'paid', f.paid::DOUBLE, 'ranges', f.ranges::JSON, 'hops', f.hops) END,
       'cluster', CASE WHEN c.cluster IS NOT NULL THEN json_object('id', c.cluster, 'wallets', z.wallets,
         'links', coalesce(to_json(k.links), '[]'::JSON), 'links_total', coalesce(k.total, 0)) END,
       'ring', CASE WHEN r.payer IS NOT NULL THEN
         json_object('returned', r.returned, 'sent', r.sent, 'flagged', coalesce(rn.flagged, 0), 'cycle', rc.cycle::JSON) END,
       'prober', CASE s.kind WHEN 'prober' THEN
         json_object('merchants', pm.payer_merchants, 'light_merchants', pm.payer_light_merchants, 'pair_tx', pm.cluster_tx) END,
       'tiny', CASE s.kind WHEN 'tiny_repeat' THEN json_object('tiny_tx', ty.tiny_tx, 'wallet_tiny_tx', ty.wallet_tiny_tx,
         'price', t.price, 'price_source', t.price_source) END
     ) AS facts
     FROM rw_shown s
     JOIN rw_flagged fl USING (pay_to, payer)
     LEFT JOIN rw_pair_tiny ty USING (pay_to, payer)
     LEFT JOIN rw_payer_merchants pm USING (payer, pay_to)
     JOIN rw_tiny t USING (pay_to)
     LEFT JOIN rw_funding f USING (pay_to, payer)
     LEFT JOIN rw_ring r USING (pay_to, payer)
     LEFT JOIN rw_ring_cycles rc USING (pay_to, payer)
     LEFT JOIN ring_n rn USING (pay_to, payer)
     LEFT JOIN tiny_n tn USING (pay_to, payer)
     LEFT JOIN rw_clusters c ON c.wallet = s.payer
     LEFT JOIN sizes z ON z.cluster = c.cluster
     LEFT JOIN links k ON k.cluster = c.cluster`,
  );
}

export const EVIDENCE_TABLES = ["rw_wallets", "rw_shown", "rw_ring_cycles", "rw_evidence"];
