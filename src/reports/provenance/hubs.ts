/**
 * The hubs of the clusters: wallets whose money is many unrelated people's (exchanges, bridges), so that
 * being paid by one says nothing about who is behind a wallet. A hub is never a funder (`funding-links.ts`);
 * wallets funded from one in a burst and behaving alike still are one buyer (`behaviour.ts`).
 *
 * A wallet is a hub by one of three rules, kept in `rw_cluster_hubs` (wallet, rule):
 * - `listed`: a known exchange or bridge wallet (src/chain/base-hubs.json, and the operator's imported labels);
 * - `fed`: its senders are at least `hubMinSenders` independent parties, counted by cluster and weighted by
 *   what each sent (`hubsFedByClusters`: an exchange's depositors);
 * - `spread`: it sent USDC to at least `hubMinRecipients` wallets, whose x402 payments in the window go to at
 *   least `hubMinRecipientMerchants` merchants, none paid by more than `hubMaxRecipientShare` of them: buyers
 *   who behave independently of each other. An import that holds an exchange's withdrawals
 *   but not its deposits finds the exchange this way.
 * Merchants are never hubs by the data's rules (a merchant paying many wallets is the distributor pattern).
 * A hub by the data's rules that one party could have made (`rw_followed_hubs`: that party's wallet, or
 * fed by few parties' money) stays nobody's funder but is followed by the provenance walk.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { hubsOf } from "../../chain/hubs.ts";
import { sqlChain } from "../scope.ts";
import { THRESHOLDS } from "../screens/thresholds.ts";

/** The listed hubs (`rw_listed_hubs`: wallet, label, source) and the spread ones, before any cluster exists. */
export async function hubsBeforeClusters(analytics: Analytics, chain: AnyChainRecord): Promise<void> {
  await analytics.run(
    "CREATE OR REPLACE TEMP TABLE rw_repo_hubs (wallet VARCHAR, label VARCHAR, source VARCHAR)",
  );
  await analytics.append("rw_repo_hubs", hubsOf(chain), (a, h) => {
    a.appendVarchar(h.address);
    a.appendVarchar(h.label);
    a.appendVarchar(h.source);
  });
  // The operator's labels win over the repository's for the same wallet.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_listed_hubs AS
     SELECT coalesce(o.address, r.wallet) AS wallet, coalesce(o.label, r.label) AS label, coalesce(o.source, r.source) AS source
     FROM rw_repo_hubs r FULL JOIN (SELECT address, label, source FROM hub_labels WHERE ${sqlChain(chain)}) o ON o.address = r.wallet
     -- Other chains' listed hubs, under their names here, where a bridge's burner was paid by them (bridges.ts).
     UNION ALL SELECT wallet, label, source FROM rw_bridge_hubs`,
  );
  const t = THRESHOLDS;
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_hub_candidates AS
     SELECT wallet FROM rw_inflow_counts WHERE senders >= ${t.hubMinSenders}
       AND wallet NOT IN (SELECT wallet FROM rw_merchants)`,
  );
  // Listed wallets and those fed by many are not read again here (an exchange's recipients are most of
  // the transfers): a candidate fed by many that proves to be fed by one cluster stays no hub. Twice: as
  // clusters count it (1.4.0's rule), and as the provenance walk does, without the recipients whose money
  // came back to the wallet (`rw_followed_hubs`).
  for (const [table, returning] of [
    ["rw_spread_hubs", ""],
    [
      "rw_spread_strict",
      "AND NOT EXISTS (SELECT 1 FROM rw_inflow o WHERE o.wallet = i.sender AND o.sender = i.wallet)",
    ],
  ])
    await analytics.run(
      `CREATE OR REPLACE TEMP TABLE ${table} AS
       WITH big AS (
         SELECT sender FROM rw_inflow
         WHERE sender NOT IN (SELECT wallet FROM rw_merchants) AND sender NOT IN (SELECT wallet FROM rw_listed_hubs)
           AND sender NOT IN (SELECT wallet FROM rw_hub_candidates)
         GROUP BY sender HAVING count(*) >= ${t.hubMinRecipients}
       ), paid AS (
         SELECT i.sender, i.wallet, p.pay_to FROM rw_inflow i JOIN rw_pair_totals p ON p.payer = i.wallet
         WHERE i.sender IN (SELECT sender FROM big) ${returning}
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
 * Keeps, of the candidates fed by many wallets, those fed by many clusters (`rw_strong_clusters`), as
 * clusters count hubs: fifty senders funded from one source are one cluster. A hub is never a funder, so
 * this set decides who is clustered with whom, and is 1.4.0's: a stricter one made an unlabelled exchange
 * refilled by one wallet that wallet's, and every customer it paid one buyer (the demo's week lost its
 * farms among them).
 *
 * The provenance walk is stricter (`rw_followed_hubs`: hubs it follows like any wallet, `opaqueHubs`).
 * Senders count by their cluster and by what they sent: a party counts whole when it sent at least a
 * `hubMinSenders`-th of what the largest party sent, and in proportion below, and the parties must come to
 * `hubMinSenders`; a sender the wallet itself paid is left out. A hundred senders of a cent beside one
 * party's $300 are a sixth of one. A wallet that paid out (by transfer and in x402) no more than one party
 * gave it is that party's wallet. A `spread` hub whose recipients' money came back to it is no spread hub.
 * So a gamer who makes a hub to order stays nobody's funder but is followed: the merchant's money through
 * it stays the merchant's.
 */
export async function hubsFedByClusters(analytics: Analytics): Promise<void> {
  const n = THRESHOLDS.hubMinSenders;
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_fed_hubs AS
     SELECT i.wallet FROM rw_inflow i LEFT JOIN rw_strong_clusters c ON c.wallet = i.sender
     WHERE i.wallet IN (SELECT wallet FROM rw_cluster_hubs WHERE rule = 'fed')
     GROUP BY i.wallet HAVING count(DISTINCT coalesce(c.cluster, i.sender)) >= ${n}`,
  );
  await analytics.run(
    "DELETE FROM rw_cluster_hubs WHERE rule = 'fed' AND wallet NOT IN (SELECT wallet FROM rw_fed_hubs)",
  );
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_hub_parties AS
     SELECT i.wallet, coalesce(c.cluster, i.sender) AS party, sum(i.amount)::DOUBLE AS amount
     FROM rw_inflow i LEFT JOIN rw_strong_clusters c ON c.wallet = i.sender
     WHERE i.wallet IN (SELECT wallet FROM rw_cluster_hubs WHERE rule <> 'listed')
       AND NOT EXISTS (SELECT 1 FROM rw_inflow o WHERE o.sender = i.wallet AND o.wallet = i.sender)
     GROUP BY ALL`,
  );
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_fed_by_money AS
     WITH p AS (
       SELECT wallet, amount, max(amount) OVER (PARTITION BY wallet) AS largest FROM rw_hub_parties
       WHERE wallet IN (SELECT wallet FROM rw_cluster_hubs WHERE rule = 'fed')
     )
     SELECT wallet FROM p GROUP BY wallet
     HAVING sum(least(1, ${n} * amount / largest)) >= ${n}`,
  );
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_followed_hubs AS
     WITH out AS (
       SELECT sender AS wallet, sum(amount)::DOUBLE AS amount FROM rw_inflow
       WHERE sender IN (SELECT wallet FROM rw_cluster_hubs WHERE rule <> 'listed') GROUP BY sender
       UNION ALL
       SELECT payer, sum(amount)::DOUBLE FROM rw_pair_totals
       WHERE payer IN (SELECT wallet FROM rw_cluster_hubs WHERE rule <> 'listed') GROUP BY payer
     ), paid AS (SELECT wallet, sum(amount) AS amount FROM out GROUP BY wallet),
     party AS (SELECT wallet, max(amount) AS amount FROM rw_hub_parties GROUP BY wallet)
     SELECT wallet FROM party LEFT JOIN paid USING (wallet) WHERE coalesce(paid.amount, 0) <= party.amount
     UNION SELECT wallet FROM rw_cluster_hubs WHERE rule = 'fed' AND wallet NOT IN (SELECT wallet FROM rw_fed_by_money)
     UNION SELECT wallet FROM rw_cluster_hubs WHERE rule = 'spread' AND wallet NOT IN (SELECT wallet FROM rw_spread_strict)`,
  );
  // Read here only (clusters.ts drops the tables it lists); rw_followed_hubs is opaqueHubs'.
  await analytics.run("DROP TABLE rw_hub_parties; DROP TABLE rw_fed_by_money; DROP TABLE rw_spread_strict");
}

/**
 * `rw_prov_opaque` (wallet): the hubs the provenance screen does not follow.
 *
 * Following a wallet is always right (its balances put money of unknown origin in front of its queue);
 * not following a hub only saves reading every buyer it ever paid. So a hub is left out only where that
 * changes nothing: the data holds its balances, and at each of them the money the data cannot explain
 * (held beyond what it was seen to receive and not send) covers everything it was seen to send after
 * it: first in first out, no merchant's money could leave it. An exchange holds far more than its
 * visible traffic; a distributor dressed as one holds the merchant's money, and is followed.
 *
 * A hub with no balance in the data is left out when it is listed (an exchange's label is a public fact),
 * fed by 50 parties weighted by money (`hubsFedByClusters`: the merchant's money is then at most a share
 * of what it holds that 50 independent parties matched), or when it paid out more than the data saw it
 * receive: its money is mostly out of the data's sight (an import holding an exchange's withdrawals). A
 * hub by the `spread` rule alone whose every payout the data saw arrive is followed: that status is bought
 * with cover wallets a few cents each, and where the data is whole FIFO follows money exactly. (Following
 * fed hubs too was tried: an exchange fed by 60 depositors and 25 merchants' cash-outs made the funded
 * 1M-payment bench's build 5 times slower, every busy buyer it paid becoming a wallet to follow.)
 */
export async function opaqueHubs(analytics: Analytics, chain: AnyChainRecord, end: number): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_prov_opaque AS
     WITH moves AS (
       SELECT to_address AS wallet, block_number AS block, amount FROM transfers
       WHERE ${sqlChain(chain)} AND block_number <= $end AND to_address IN (SELECT wallet FROM rw_cluster_hubs)
       UNION ALL
       SELECT from_address, block_number, -amount FROM transfers
       WHERE ${sqlChain(chain)} AND block_number <= $end AND from_address IN (SELECT wallet FROM rw_cluster_hubs)
     ), checked AS (
       SELECT b.wallet, bool_and(
         b.amount - coalesce((SELECT sum(m.amount) FROM moves m WHERE m.wallet = b.wallet AND m.block <= b.block_number), 0)
           >= coalesce((SELECT -sum(m.amount) FROM moves m WHERE m.wallet = b.wallet AND m.block > b.block_number AND m.amount < 0), 0)
       ) AS covered
       FROM balances b WHERE ${sqlChain(chain, "b.")} AND b.block_number <= $end AND b.wallet IN (SELECT wallet FROM rw_cluster_hubs)
       GROUP BY b.wallet
     ), unseen AS (
       SELECT wallet, sum(amount) AS net FROM (
         SELECT wallet, amount FROM moves
         UNION ALL SELECT pay_to, amount FROM rw_pair_totals WHERE pay_to IN (SELECT wallet FROM rw_cluster_hubs)
         UNION ALL SELECT payer, -amount FROM rw_pair_totals WHERE payer IN (SELECT wallet FROM rw_cluster_hubs)
       ) GROUP BY wallet
     )
     SELECT wallet FROM checked WHERE covered
     UNION
     SELECT h.wallet FROM rw_cluster_hubs h LEFT JOIN unseen u USING (wallet)
     WHERE h.wallet NOT IN (SELECT wallet FROM checked) AND (h.rule IN ('listed', 'fed') OR u.net < 0)
     EXCEPT SELECT wallet FROM rw_followed_hubs`,
    { end },
  );
}
