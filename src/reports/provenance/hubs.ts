/**
 * The hubs of the clusters: wallets whose money is many unrelated people's (exchanges, bridges), so that
 * being paid by one says nothing about who is behind a wallet. A hub is never a funder (`funding-links.ts`);
 * wallets funded from one in a burst and behaving alike still are one buyer (`behaviour.ts`).
 *
 * A wallet is a hub by one of three rules, kept in `rw_cluster_hubs` (wallet, rule):
 * - `listed`: a known exchange or bridge wallet (src/chain/base-hubs.json, and the operator's imported labels);
 * - `fed`: at least `hubMinSenders` distinct clusters sent it USDC (an exchange's depositors);
 * - `spread`: it sent USDC to at least `hubMinRecipients` wallets, whose x402 payments in the window go to at
 *   least `hubMinRecipientMerchants` merchants, none paid by more than `hubMaxRecipientShare` of them: buyers
 *   who behave independently of each other. An import that holds an exchange's withdrawals
 *   but not its deposits finds the exchange this way.
 * Merchants are never hubs by the data's rules (a merchant paying many wallets is the distributor pattern).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import { KNOWN_HUBS } from "../../chain/hubs.ts";
import { THRESHOLDS } from "../screens/thresholds.ts";

/** The listed hubs (`rw_listed_hubs`: wallet, label, source) and the spread ones, before any cluster exists. */
export async function hubsBeforeClusters(analytics: Analytics): Promise<void> {
  await analytics.run(
    "CREATE OR REPLACE TEMP TABLE rw_repo_hubs (wallet VARCHAR, label VARCHAR, source VARCHAR)",
  );
  await analytics.append("rw_repo_hubs", KNOWN_HUBS, (a, h) => {
    a.appendVarchar(h.address);
    a.appendVarchar(h.label);
    a.appendVarchar(h.source);
  });
  // The operator's labels win over the repository's for the same wallet.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_listed_hubs AS
     SELECT coalesce(o.address, r.wallet) AS wallet, coalesce(o.label, r.label) AS label, coalesce(o.source, r.source) AS source
     FROM rw_repo_hubs r FULL JOIN (SELECT address, label, source FROM hub_labels WHERE chain = 'base') o ON o.address = r.wallet`,
  );
  const t = THRESHOLDS;
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_hub_candidates AS
     SELECT wallet FROM rw_inflow_counts WHERE senders >= ${t.hubMinSenders}
       AND wallet NOT IN (SELECT wallet FROM rw_merchants)`,
  );
  // Listed wallets and those fed by many are not read again here (an exchange's recipients are most of
  // the transfers): a candidate fed by many that proves to be fed by one cluster stays no hub.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_spread_hubs AS
     WITH big AS (
       SELECT sender FROM rw_inflow
       WHERE sender NOT IN (SELECT wallet FROM rw_merchants) AND sender NOT IN (SELECT wallet FROM rw_listed_hubs)
         AND sender NOT IN (SELECT wallet FROM rw_hub_candidates)
       GROUP BY sender HAVING count(*) >= ${t.hubMinRecipients}
     ), paid AS (
       SELECT i.sender, i.wallet, p.pay_to FROM rw_inflow i JOIN rw_pair_totals p ON p.payer = i.wallet
       WHERE i.sender IN (SELECT sender FROM big)
     ), spread AS (
       SELECT sender, pay_to, count(*) AS n FROM paid GROUP BY ALL
     ), recipients AS (
       SELECT sender, count(DISTINCT wallet) AS paying FROM paid GROUP BY sender
     )
     SELECT sender AS wallet FROM spread JOIN recipients USING (sender) GROUP BY sender, paying
     HAVING count(*) >= ${t.hubMinRecipientMerchants} AND max(n) <= ${t.hubMaxRecipientShare} * paying`,
  );
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_cluster_hubs AS
     SELECT wallet, 'listed' AS rule FROM rw_listed_hubs
     UNION ALL SELECT wallet, 'spread' FROM rw_spread_hubs WHERE wallet NOT IN (SELECT wallet FROM rw_listed_hubs)
     UNION ALL SELECT wallet, 'fed' FROM rw_hub_candidates
       WHERE wallet NOT IN (SELECT wallet FROM rw_listed_hubs) AND wallet NOT IN (SELECT wallet FROM rw_spread_hubs)`,
  );
}

/**
 * Keeps, of the candidates fed by many wallets, those fed by many clusters (`rw_strong_clusters`): fifty
 * senders funded from one source are one cluster, so a distributor cannot make itself a hub with wallets
 * of its own; an exchange, fed by unrelated depositors, is one however few of them pay in x402.
 */
export async function hubsFedByClusters(analytics: Analytics): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_fed_hubs AS
     SELECT i.wallet FROM rw_inflow i LEFT JOIN rw_strong_clusters c ON c.wallet = i.sender
     WHERE i.wallet IN (SELECT wallet FROM rw_cluster_hubs WHERE rule = 'fed')
     GROUP BY i.wallet HAVING count(DISTINCT coalesce(c.cluster, i.sender)) >= ${THRESHOLDS.hubMinSenders}`,
  );
  await analytics.run(
    "DELETE FROM rw_cluster_hubs WHERE rule = 'fed' AND wallet NOT IN (SELECT wallet FROM rw_fed_hubs)",
  );
}

/**
 * `rw_prov_opaque` (wallet): the hubs the provenance screen does not follow.
 *
 * Following a wallet is always right (its balances put money of unknown origin in front of its queue);
 * not following a hub only saves reading every buyer it ever paid. So a hub is left out only where that
 * changes nothing: the data holds its balances, and at each of them the money the data cannot explain
 * (held beyond what it was seen to receive and not send) covers everything it was seen to send after
 * it: first in first out, no merchant's money could leave it. An exchange holds far more than its
 * visible traffic; a distributor dressed as one holds the merchant's money, and is followed. A hub with
 * no balance in the data (an import) is left out: nothing says what it holds.
 */
export async function opaqueHubs(analytics: Analytics, end: number): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_prov_opaque AS
     WITH moves AS (
       SELECT to_address AS wallet, block_number AS block, amount FROM transfers
       WHERE chain = 'base' AND block_number <= $end AND to_address IN (SELECT wallet FROM rw_cluster_hubs)
       UNION ALL
       SELECT from_address, block_number, -amount FROM transfers
       WHERE chain = 'base' AND block_number <= $end AND from_address IN (SELECT wallet FROM rw_cluster_hubs)
     ), checked AS (
       SELECT b.wallet, bool_and(
         b.amount - coalesce((SELECT sum(m.amount) FROM moves m WHERE m.wallet = b.wallet AND m.block <= b.block_number), 0)
           >= coalesce((SELECT -sum(m.amount) FROM moves m WHERE m.wallet = b.wallet AND m.block > b.block_number AND m.amount < 0), 0)
       ) AS covered
       FROM balances b WHERE b.chain = 'base' AND b.block_number <= $end AND b.wallet IN (SELECT wallet FROM rw_cluster_hubs)
       GROUP BY b.wallet
     )
     SELECT wallet FROM rw_cluster_hubs WHERE wallet NOT IN (SELECT wallet FROM checked WHERE NOT covered)`,
    { end },
  );
}
