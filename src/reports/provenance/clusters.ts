/**
 * Wallet clusters (who is one buyer) and the hubs the provenance screen does not follow, from who feeds whom
 * and how the wallets fed behave (docs/screens.md, "Clusters and hubs").
 *
 * 1. Hubs (`hubs.ts`): listed exchanges and bridges, wallets that pay buyers of many unrelated merchants,
 *    and candidates fed by many wallets.
 * 2. Funding links (`funding-links.ts`), hubs never being funders, to their fixed point. The candidates fed
 *    by many wallets are then kept as hubs only if those wallets are many clusters, and the links are made
 *    again without the others: clusters are cut at hubs, and hubs are counted in clusters.
 * 3. First funders (weak) and behaviour (`behaviour.ts`), then the funding rule again from the clusters
 *    behaviour made (a farm's wallets, one buyer, funding a second level).
 *
 * Leaves `rw_clusters` (wallet, cluster) from every link, `rw_strong_clusters` (wallet, cluster) from the
 * strong ones, `rw_price_clusters` (wallet, cluster, share): each linked wallet's share of a buyer in the price
 * test (`ClusterLinks.priceShares`), `rw_cluster_links` (wallet, linked, rule, strong, measure), `rw_cluster_hubs`
 * (wallet, rule) and `rw_prov_opaque` (wallet): the hubs the provenance screen does not follow. A wallet in
 * no link is in neither cluster table: it is its own cluster.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { sqlChain } from "../scope.ts";
import { behaviourLinks } from "./behaviour.ts";
import { BRIDGE_TABLES, bridgeMoves, sqlTransfers } from "./bridges.ts";
import { ClusterLinks } from "./cluster-links.ts";
import { firstFunderLinks, fundingLinks, inflowTotals, writeClusters, writeStrong } from "./funding-links.ts";
import { hubsBeforeClusters, hubsFedByClusters, opaqueHubs } from "./hubs.ts";

export const CLUSTER_TABLES = [
  ...BRIDGE_TABLES,
  "rw_inflow",
  "rw_inflow_counts",
  "rw_inflow_totals",
  "rw_cluster_ids",
  "rw_cluster_pairs",
  "rw_price_ids",
  "rw_link_ids",
  "rw_repo_hubs",
  "rw_listed_hubs",
  "rw_spread_hubs",
  "rw_spread_strict",
  "rw_hub_candidates",
  "rw_fed_hubs",
  "rw_followed_hubs",
  "rw_cluster_hubs",
  "rw_unfunded",
  "rw_strong_clusters",
  "rw_behaviour_bands",
  "rw_behaviour_payers",
  "rw_behaviour",
  "rw_clusters",
  "rw_cluster_links",
  "rw_price_clusters",
  "rw_prov_opaque",
];

const ZERO = "0x0000000000000000000000000000000000000000";

/**
 * Builds the clusters of the chain's data up to block `end`, whose time is `endTime` (unix ms): what the burners of
 * bridge mints received on their own chains is read up to it (`bridges.ts`).
 */
export async function clusters(
  analytics: Analytics,
  chain: AnyChainRecord,
  end: number,
  endTime: number,
): Promise<void> {
  const through = await bridgeMoves(analytics, chain, end, endTime);
  // What each wallet received from each sender, read once. `funds` is what counts as funding: what a
  // merchant sent a wallet that paid it in the window counts only beyond what it was paid (a refund). A
  // bridge's mint is from its burner (`bridges.ts`).
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_inflow AS
     SELECT to_address AS wallet, from_address AS sender, sum(amount) AS amount, sum(amount) AS funds,
       min(block_number * 1000000 + log_index) AS first_at, min(block_time) AS first_time
     FROM ${sqlTransfers(chain, through)}
     WHERE ${sqlChain(chain)} AND block_number <= $end AND amount > 0 AND from_address <> to_address
       AND from_address <> '${ZERO}'
     GROUP BY ALL
     ${through ? "UNION ALL SELECT * FROM rw_bridge_inflow" : ""}`,
    { end },
  );
  await analytics.run(
    `UPDATE rw_inflow i SET funds = greatest(i.amount - p.amount, 0)
     FROM rw_pair_totals p WHERE p.payer = i.wallet AND p.pay_to = i.sender`,
  );
  await analytics.run(
    "CREATE OR REPLACE TEMP TABLE rw_inflow_counts AS SELECT wallet, count(*) AS senders FROM rw_inflow GROUP BY wallet",
  );
  // Every wallet a link can join (funded, funders, payers) as a number, in address order (cluster-links.ts).
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_cluster_ids AS
     SELECT wallet, (row_number() OVER (ORDER BY wallet))::INTEGER - 1 AS id FROM (
       SELECT wallet FROM rw_inflow UNION SELECT sender FROM rw_inflow UNION SELECT payer FROM rw_pair_totals
     )`,
  );
  const size = Number(
    (await analytics.one<{ n: bigint }>("SELECT count(*) AS n FROM rw_cluster_ids"))?.n ?? 0n,
  );
  await hubsBeforeClusters(analytics, chain);
  await inflowTotals(analytics);
  await fundingLinks(analytics, new ClusterLinks(size));
  await hubsFedByClusters(analytics);

  const links = new ClusterLinks(size);
  await inflowTotals(analytics);
  await fundingLinks(analytics, links);
  await firstFunderLinks(analytics, links);
  await writeAll(analytics, links);
  if ((await behaviourLinks(analytics, links)) > 0) await fundingLinks(analytics, links);
  await writeStrong(analytics, links);
  await writeAll(analytics, links);
  await analytics.run(
    "CREATE OR REPLACE TEMP TABLE rw_price_ids (wallet INTEGER, cluster INTEGER, share DOUBLE)",
  );
  await analytics.append("rw_price_ids", links.priceShares(), (a, [wallet, cluster, share]) => {
    a.appendInteger(wallet);
    a.appendInteger(cluster);
    a.appendDouble(share);
  });
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_price_clusters AS
     SELECT w.wallet, c.wallet AS cluster, p.share FROM rw_price_ids p
     JOIN rw_cluster_ids w ON w.id = p.wallet JOIN rw_cluster_ids c ON c.id = p.cluster`,
  );
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_link_ids
       (wallet INTEGER, linked INTEGER, rule VARCHAR, strong BOOLEAN, measure DOUBLE)`,
  );
  await analytics.append("rw_link_ids", links.links, (a, l) => {
    a.appendInteger(l.wallet);
    a.appendInteger(l.to);
    a.appendVarchar(l.rule);
    a.appendBoolean(l.strong);
    a.appendDouble(l.measure);
  });
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_cluster_links AS
     SELECT w.wallet, k.wallet AS linked, l.rule, l.strong, l.measure FROM rw_link_ids l
     JOIN rw_cluster_ids w ON w.id = l.wallet JOIN rw_cluster_ids k ON k.id = l.linked`,
  );
  await opaqueHubs(analytics, chain, end);
}

async function writeAll(analytics: Analytics, links: ClusterLinks): Promise<void> {
  await writeClusters(analytics, "rw_clusters", links.all.entries());
}
