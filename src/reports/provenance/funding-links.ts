/**
 * Links by funding, over `rw_inflow` (what each wallet received from each sender) and `rw_cluster_hubs`.
 *
 * **funding**: a wallet is linked to the cluster that gave it at least half of what it received from senders
 * that are not hubs, with a weight of that cluster's share of everything it received (an exchange's
 * included) over `fundingMinShare`, at most 1; strong from that share up. Below it the link still counts, in
 * proportion, where the price test counts buyers, and joins the wallets wherever buyers are counted, down to
 * `firstFunderMinShare` (no dust: a stranger's cent must not make a genuine customer anyone's): a farm whose
 * owner gives each wallet a little less than a quarter is a little less surely one buyer, not suddenly many.
 * Senders count by their (strong) cluster, so three wallets of one owner are one funder; and since a strong
 * link only ever makes a funder's cluster bigger, a link once made stays made: the rule is applied again
 * with the clusters it made until it makes no new strong link (a fixed point, reached in a few rounds: each
 * round after the first reads only the wallets that have two or more senders and no funder yet, the only
 * ones a bigger cluster can change). What a merchant sends a wallet that paid it in the window counts only
 * beyond what the wallet paid it: a refund is the customer's own money returning, not funding.
 *
 * **first_funder** (weak): the sender of a wallet's first USDC, unless it is a hub, when it gave at least
 * `firstFunderMinShare` of everything the wallet received (no dust), weighing half what a funding link of
 * its share would. A wallet first funded from an exchange has none: a friend's later top-up is not its
 * first funding.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import { THRESHOLDS } from "../screens/thresholds.ts";
import type { ClusterLinks } from "./cluster-links.ts";

/** `rw_inflow_totals` (wallet, total, nonhub, senders): what each wallet received, all and from non-hubs. */
export async function inflowTotals(analytics: Analytics): Promise<void> {
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_inflow_totals AS
     SELECT wallet, sum(funds) AS total,
       coalesce(sum(funds) FILTER (sender NOT IN (SELECT wallet FROM rw_cluster_hubs)), 0) AS nonhub,
       count(*) FILTER (sender NOT IN (SELECT wallet FROM rw_cluster_hubs) AND funds > 0) AS senders
     FROM rw_inflow GROUP BY wallet HAVING sum(funds) > 0`,
  );
}

/** A funding link's weight in the price test: the funder's share over `fundingMinShare`, at most 1. */
export const fundingWeight = (share: number) => Math.min(share / THRESHOLDS.fundingMinShare, 1);

/** Adds the funding links to `links` until they make no new strong one, keeping `rw_strong_clusters` in step. */
export async function fundingLinks(analytics: Analytics, links: ClusterLinks): Promise<void> {
  await writeStrong(analytics, links);
  for (let round = 0; ; round++) {
    const found = await analytics.all<{ wallet: number; via: number; share: number }>(
      `WITH src AS (
         SELECT i.wallet, coalesce(c.cluster, i.sender) AS funder, sum(i.funds) AS amount,
           first(i.sender ORDER BY i.funds DESC, i.sender) AS via
         FROM rw_inflow i LEFT JOIN rw_strong_clusters c ON c.wallet = i.sender
         WHERE i.funds > 0 AND i.sender NOT IN (SELECT wallet FROM rw_cluster_hubs)
           ${round === 0 ? "" : "AND i.wallet IN (SELECT wallet FROM rw_unfunded)"}
         GROUP BY ALL
       )
       SELECT w.id AS wallet, v.id AS via, (s.amount / t.total)::DOUBLE AS share
       FROM src s JOIN rw_inflow_totals t USING (wallet)
         JOIN rw_cluster_ids w ON w.wallet = s.wallet JOIN rw_cluster_ids v ON v.wallet = s.via
       WHERE s.amount * 2 >= t.nonhub AND s.amount >= t.total * ${THRESHOLDS.firstFunderMinShare}
       ORDER BY w.id, v.id`,
    );
    let joined = 0;
    for (const f of found) {
      const strong = f.share >= THRESHOLDS.fundingMinShare;
      const weight = fundingWeight(f.share);
      if (links.add({ wallet: f.wallet, to: f.via, rule: "funding", strong, measure: f.share, weight }))
        joined++;
    }
    if (joined === 0) return;
    await writeStrong(analytics, links);
    if (round === 0) {
      await analytics.run(
        `CREATE OR REPLACE TEMP TABLE rw_unfunded AS
         SELECT wallet FROM rw_inflow_totals WHERE senders >= 2 AND wallet NOT IN (SELECT wallet FROM rw_strong_clusters)`,
      );
    }
  }
}

/** Adds each wallet's first funder, unless a hub, as a weak link. */
export async function firstFunderLinks(analytics: Analytics, links: ClusterLinks): Promise<void> {
  const found = await analytics.all<{ wallet: number; funder: number; share: number }>(
    `WITH first AS (
       SELECT wallet, arg_min(sender, first_at) AS funder, arg_min(funds, first_at) AS funds FROM rw_inflow
       WHERE funds > 0 GROUP BY wallet
     )
     SELECT w.id AS wallet, u.id AS funder, (f.funds / t.total)::DOUBLE AS share
     FROM first f JOIN rw_inflow_totals t USING (wallet)
       JOIN rw_cluster_ids w ON w.wallet = f.wallet JOIN rw_cluster_ids u ON u.wallet = f.funder
     WHERE f.funds >= t.total * ${THRESHOLDS.firstFunderMinShare}
       AND f.funder NOT IN (SELECT wallet FROM rw_cluster_hubs)
     ORDER BY w.id`,
  );
  for (const f of found) {
    const weight = fundingWeight(f.share) / 2;
    links.add({
      wallet: f.wallet,
      to: f.funder,
      rule: "first_funder",
      strong: false,
      measure: f.share,
      weight,
    });
  }
}

/** `rw_strong_clusters` (wallet, cluster) from the strong links so far. */
export async function writeStrong(analytics: Analytics, links: ClusterLinks): Promise<void> {
  await writeClusters(analytics, "rw_strong_clusters", links.strong.entries());
}

/**
 * `table` (wallet, cluster) from wallets and their clusters as numbers (`rw_cluster_ids`): the numbers are
 * appended, and the addresses joined to them in SQL.
 */
export async function writeClusters(
  analytics: Analytics,
  table: string,
  entries: readonly [number, number][],
): Promise<void> {
  await analytics.run("CREATE OR REPLACE TEMP TABLE rw_cluster_pairs (wallet INTEGER, cluster INTEGER)");
  await analytics.append("rw_cluster_pairs", entries, (a, [wallet, cluster]) => {
    a.appendInteger(wallet);
    a.appendInteger(cluster);
  });
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
     SELECT w.wallet, c.wallet AS cluster FROM rw_cluster_pairs p
     JOIN rw_cluster_ids w ON w.id = p.wallet JOIN rw_cluster_ids c ON c.id = p.cluster`,
  );
}
