/**
 * Wallet clusters and the hubs the provenance screen does not follow, from who feeds whom.
 *
 * A wallet's **funder** is the sender that gave it at least half of every USDC it was seen to receive by
 * plain transfer, unless that sender is a hub: a farm's wallets, funded from one source, have one funder
 * whatever else they do; a customer who tops up from an exchange has none. Wallets joined by funders, up
 * and down any number of levels, are one **cluster**: one buyer wherever the screens count buyers (the
 * airdrop sybil hunts' common funder, followed to its root so that a second level of wallets does not
 * split a farm). A wallet in no funder link is its own cluster.
 *
 * A **hub** is fed by many independent wallets: at least `hubMinSenders` distinct clusters sent it USDC.
 * Fifty senders funded from one source are one cluster, so a distributor cannot make itself a hub with
 * wallets of its own; an exchange, fed by unrelated depositors, is one however few of them pay in x402.
 * Hubs are found in two rounds, because clusters are cut at hubs: wallets with 50 distinct senders are the
 * candidates, clusters are built without them as funders, and a candidate whose senders are 50 clusters
 * is a hub; the clusters are then built again without the hubs alone.
 *
 * Leaves `rw_clusters` (wallet, cluster), `rw_sender_hubs` (wallet) and `rw_prov_opaque` (wallet): the hubs
 * the provenance screen does not follow, where not following changes nothing (below).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import { THRESHOLDS } from "../screens/thresholds.ts";

export const CLUSTER_TABLES = [
  "rw_hub_candidates",
  "rw_funders",
  "rw_clusters",
  "rw_sender_hubs",
  "rw_prov_opaque",
];

const ZERO = "0x0000000000000000000000000000000000000000";
/** SQL: the transfers that feed a wallet, up to the window's end (optionally by an alias, "t."). */
const inflows = (t = "") =>
  `${t}chain = 'base' AND ${t}block_number <= $end AND ${t}amount > 0 AND ${t}from_address <> ${t}to_address AND ${t}from_address <> '${ZERO}'`;

export async function clusters(analytics: Analytics, end: number): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_hub_candidates AS
     SELECT to_address AS wallet FROM transfers WHERE ${inflows()}
       AND to_address NOT IN (SELECT wallet FROM rw_merchants)
     GROUP BY to_address HAVING count(DISTINCT from_address) >= ${THRESHOLDS.hubMinSenders}`,
    { end },
  );
  await buildClusters(analytics, end, "rw_hub_candidates");
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_sender_hubs AS
     SELECT t.to_address AS wallet FROM transfers t LEFT JOIN rw_clusters c ON c.wallet = t.from_address
     WHERE ${inflows("t.")}
       AND t.to_address IN (SELECT wallet FROM rw_hub_candidates)
     GROUP BY t.to_address HAVING count(DISTINCT coalesce(c.cluster, t.from_address)) >= ${THRESHOLDS.hubMinSenders}`,
    { end },
  );
  await buildClusters(analytics, end, "rw_sender_hubs");
  // Following a wallet is always right (its balances put money of unknown origin in front of its queue);
  // not following a hub only saves reading every buyer it ever paid. So a hub is left out only where that
  // changes nothing: the data holds its balances, and at each of them the money the data cannot explain
  // (held beyond what it was seen to receive and not send) covers everything it was seen to send after
  // it: first in first out, no merchant's money could leave it. An exchange holds far more than its
  // visible traffic; a distributor dressed as one holds the merchant's money, and is followed. A hub with
  // no balance in the data (an import) is left out: nothing says what it holds.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_prov_opaque AS
     WITH moves AS (
       SELECT to_address AS wallet, block_number AS block, amount FROM transfers
       WHERE chain = 'base' AND block_number <= $end AND to_address IN (SELECT wallet FROM rw_sender_hubs)
       UNION ALL
       SELECT from_address, block_number, -amount FROM transfers
       WHERE chain = 'base' AND block_number <= $end AND from_address IN (SELECT wallet FROM rw_sender_hubs)
     ), checked AS (
       SELECT b.wallet, bool_and(
         b.amount - coalesce((SELECT sum(m.amount) FROM moves m WHERE m.wallet = b.wallet AND m.block <= b.block_number), 0)
           >= coalesce((SELECT -sum(m.amount) FROM moves m WHERE m.wallet = b.wallet AND m.block > b.block_number AND m.amount < 0), 0)
       ) AS covered
       FROM balances b WHERE b.chain = 'base' AND b.block_number <= $end AND b.wallet IN (SELECT wallet FROM rw_sender_hubs)
       GROUP BY b.wallet
     )
     SELECT wallet FROM rw_sender_hubs WHERE wallet NOT IN (SELECT wallet FROM checked WHERE NOT covered)`,
    { end },
  );
}

/** `rw_clusters` from the funder links, no wallet of `hubs` being anyone's funder. */
async function buildClusters(analytics: Analytics, end: number, hubs: string): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_funders AS
     WITH inflow AS (
       SELECT to_address AS wallet, from_address AS sender, sum(amount) AS amount FROM transfers
       WHERE ${inflows()} GROUP BY ALL
     ), top AS (
       SELECT wallet, sum(amount) AS total,
         first(sender ORDER BY amount DESC, sender) FILTER (sender NOT IN (SELECT wallet FROM ${hubs})) AS funder,
         max(amount) FILTER (sender NOT IN (SELECT wallet FROM ${hubs})) AS given
       FROM inflow GROUP BY wallet
     )
     SELECT wallet, funder FROM top WHERE funder IS NOT NULL AND given * 2 >= total`,
    { end },
  );
  const links = await analytics.all<{ wallet: string; funder: string }>(
    "SELECT wallet, funder FROM rw_funders",
  );
  const roots = unionFind(links);
  await analytics.run("CREATE OR REPLACE TEMP TABLE rw_clusters (wallet VARCHAR, cluster VARCHAR)");
  await analytics.append("rw_clusters", [...roots], (a, [wallet, cluster]) => {
    a.appendVarchar(wallet);
    a.appendVarchar(cluster);
  });
}

/** Each wallet of the links and its cluster, named by its smallest address (the same whatever the links' order). */
export function unionFind(links: readonly { wallet: string; funder: string }[]): Map<string, string> {
  const parent = new Map<string, string>();
  const find = (w: string): string => {
    let root = w;
    for (let p = parent.get(root); p !== undefined && p !== root; p = parent.get(root)) root = p;
    for (let x = w; x !== root; ) {
      const next = parent.get(x) as string;
      parent.set(x, root);
      x = next;
    }
    return root;
  };
  for (const { wallet, funder } of links) {
    if (!parent.has(wallet)) parent.set(wallet, wallet);
    if (!parent.has(funder)) parent.set(funder, funder);
    const a = find(wallet);
    const b = find(funder);
    if (a === b) continue;
    if (a < b) parent.set(b, a);
    else parent.set(a, b);
  }
  const out = new Map<string, string>();
  for (const w of parent.keys()) out.set(w, find(w));
  return out;
}
