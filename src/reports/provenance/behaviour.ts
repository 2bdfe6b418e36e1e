/**
 * Links by behaviour: wallets funded from one source that then behave alike are one buyer, even where no
 * funding link joins them (a farm funded by exchange withdrawals alone, or by several wallets of its
 * owner's that each look independent).
 *
 * - **Behaviour**: what a farm needs to make its tiny amounts a merchant's price is several buyers paying that
 *   merchant in one band of amounts (a power of two wide, the price test's bands). So a window payer's
 *   signatures are the merchants it pays and the bands it pays each in, below the merchant's lowest listed
 *   price (any band where it lists none: at a listed price, merged or not, buyers change no figure); wallets
 *   that share one behave alike there. Hours and counts, which a farm varies at no cost, are left out.
 * - **Diversity guard**, by where a wallet's money goes, not how many merchants it touched: a payer that
 *   spent more than `behaviourMaxElsewhereShare` of its window's payments (by amount) at other merchants
 *   is never joined this way at this merchant (agents that sample many services are the genuine buyers most
 *   alike), and below that its link weighs in proportion to the share it spent here. A farm wallet's decoy
 *   purchases elsewhere thus cost it, at their merchants' prices, as much as what it spends at the farm's.
 *   Spend elsewhere counts only where it is gone (methodology 1.9.0): less what that merchant sent the payer
 *   back by plain transfer, and less the share of its takings it sent on to this merchant, so a shop of the
 *   gamer's own that hands its takings back is no decoy. x402 purchases between merchants are purchases.
 * - **Groups**: the strong clusters of payers a hub paid first within one hour, one day or four days, each
 *   span read twice, the second time shifted by half a span, so that any burst no wider than half a span
 *   lies wholly in one group wherever UTC midnight falls. A cluster is in the group when the hub paid any
 *   wallet of it, so a burst's wallets that fund the payers, through any number of wallets, instead of
 *   paying themselves are the same group; so is a payer whose plain money came mostly from the group's
 *   clusters (a third from each of three of the burst's wallets). Where several hubs paid out in one
 *   bucket, all of their payouts there are one group besides each hub's own: a burst split over exchanges
 *   is one burst, and the null model then counts the payers of all of them. And those any other wallet (not
 *   a merchant: its refunds go to its own customers) ever paid, by the sender's cluster: an owner's
 *   feeders, each paying a few farm wallets, are one source.
 * - **Null model**: in a group of n payers, k share a signature that a share p of the payers outside the
 *   group share (plus one, so that a signature nobody else has is not impossible); payers are counted by
 *   strong cluster, so a farm its funding already joined is one payer, not many that make its band common.
 *   The chance that k or more of n independent payers share it is the binomial tail; at most
 *   `behaviourWeakChance` the k are one buyer, strongly at most `behaviourStrongChance`, and the link's
 *   weight in the price test goes from 0 at the weak cut to 1 at the strong one in proportion to the
 *   chance's logarithm, so that a farm spread a little wider is a little less surely one buyer, not many.
 *   The model scales with the group: a busy exchange hour that paid 500 payers is expected to hold many
 *   buyers of a popular API, a burst of twelve withdrawals that all pay one merchant's tiny charges is not.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import { THRESHOLDS } from "../screens/thresholds.ts";
import type { ClusterLinks } from "./cluster-links.ts";

/** Each span twice: in buckets from the epoch, and in buckets shifted by half a span. */
const SPAN_SHIFTS = [
  { span: "hour", seconds: 3_600 },
  { span: "day", seconds: 86_400 },
  { span: "4 days", seconds: 4 * 86_400 },
]
  .flatMap((s) => [0, s.seconds / 2].map((shift) => `('${s.span}+${shift}', ${s.seconds}, ${shift})`))
  .join(", ");

/** The source of the groups that take every hub's payouts in a span together. */
export const ANY_HUB = "hubs";

/** A behaviour link's weight from its chance: 0 at the weak cut, 1 at the strong one, by the logarithm. */
export function chanceWeight(chance: number): number {
  const t = THRESHOLDS;
  if (chance <= t.behaviourStrongChance) return 1;
  if (chance >= t.behaviourWeakChance) return 0;
  return Math.log(t.behaviourWeakChance / chance) / Math.log(t.behaviourWeakChance / t.behaviourStrongChance);
}

/**
 * Adds the behaviour links; returns how many joined strong clusters. Reads `rw_clusters` (every link so
 * far), by which the 'ever' groups' senders are counted.
 */
export async function behaviourLinks(analytics: Analytics, links: ClusterLinks): Promise<number> {
  const t = THRESHOLDS;
  await behaviourGroups(analytics);
  const groups = await analytics.all<{
    source: string;
    span: string;
    k: bigint;
    n: bigint;
    sig_n: bigint;
    wallets: number[];
    elsewhere: number[];
  }>(
    `WITH spent AS (
       -- What each payer spent at each merchant, and of it what is gone: less what that merchant sent the payer
       -- back by plain transfer (a refund, a shop of the gamer's own paying its takings back).
       SELECT p.payer, p.pay_to, p.amount, greatest(p.amount - coalesce(r.amount, 0), 0) AS gone
       FROM rw_pair_totals p SEMI JOIN rw_behaviour_payers b USING (payer)
         LEFT JOIN rw_inflow r ON r.wallet = p.payer AND r.sender = p.pay_to
     ), revenue AS (
       SELECT pay_to AS shop, sum(amount) AS amount FROM rw_pair_totals
       WHERE pay_to IN (SELECT pay_to FROM spent) GROUP BY ALL
     ), back AS (
       -- The share of a merchant's takings it sent on to another merchant by plain transfer: spend there is that
       -- merchant's money coming back to it, not money spent elsewhere.
       SELECT i.sender AS shop, i.wallet AS merchant, least(i.amount / v.amount, 1)::DOUBLE AS share
       FROM rw_inflow i JOIN revenue v ON v.shop = i.sender WHERE i.wallet IN (SELECT wallet FROM rw_merchants)
     ), candidates AS (
       -- What each payer spent at other merchants and is gone, as a share of that and what it spent here.
       SELECT h.payer, h.pay_to, coalesce(o.other / (o.other + h.amount), 0)::DOUBLE AS elsewhere
       FROM spent h LEFT JOIN (
         SELECT h.payer, h.pay_to, sum(e.gone * (1 - coalesce(b.share, 0))) AS other
         FROM spent h JOIN spent e ON e.payer = h.payer AND e.pay_to <> h.pay_to
           LEFT JOIN back b ON b.shop = e.pay_to AND b.merchant = h.pay_to
         GROUP BY ALL
       ) o USING (payer, pay_to)
     ), signatures AS (
       -- Each strong cluster's signatures, each with the wallet of it that spent the most here.
       SELECT b.cluster, g.pay_to, g.band, first(i.id ORDER BY d.elsewhere, i.id) AS wallet,
         min(d.elsewhere) AS elsewhere
       FROM rw_behaviour_payers b JOIN rw_behaviour_bands g USING (payer)
         JOIN candidates d ON d.payer = b.payer AND d.pay_to = g.pay_to JOIN rw_cluster_ids i ON i.wallet = b.payer
       WHERE d.elsewhere <= ${t.behaviourMaxElsewhereShare}
       GROUP BY ALL
     ), hits AS (
       SELECT b.source, b.span, b.bucket, s.pay_to, s.band, any_value(b.n) AS n, count(*) AS k,
         list(s.wallet ORDER BY s.wallet) AS wallets, list(s.elsewhere ORDER BY s.wallet) AS elsewhere
       FROM rw_behaviour b JOIN signatures s USING (cluster)
       GROUP BY ALL HAVING count(*) >= ${t.behaviourMinWallets}
     ), background AS (
       SELECT g.pay_to, g.band, count(DISTINCT coalesce(c.cluster, g.payer)) AS n
       FROM rw_behaviour_bands g LEFT JOIN rw_strong_clusters c ON c.wallet = g.payer
       WHERE g.pay_to IN (SELECT pay_to FROM hits) GROUP BY ALL
     )
     SELECT h.source, h.span, h.k, h.n, g.n AS sig_n, h.wallets, h.elsewhere
     FROM hits h JOIN background g USING (pay_to, band)
     ORDER BY h.source, h.span, h.bucket, h.pay_to, h.band`,
  );
  if (groups.length === 0) return 0;
  const payers = Number(
    (
      await analytics.one<{ n: bigint }>(
        `SELECT count(DISTINCT coalesce(c.cluster, g.payer)) AS n
         FROM rw_behaviour_bands g LEFT JOIN rw_strong_clusters c ON c.wallet = g.payer`,
      )
    )?.n ?? 0n,
  );
  let joined = 0;
  for (const g of groups) {
    const n = Number(g.n);
    const k = Number(g.k);
    const p = (Number(g.sig_n) - k + 1) / Math.max(payers - n + 1, 1);
    const chance = binomialTail(n, k, Math.min(p, 1));
    if (chance > t.behaviourWeakChance) continue;
    const strong = chance <= t.behaviourStrongChance;
    // Joined to the wallet that spent the most here: its own decoys weigh on no one else's link.
    const order = g.wallets
      .map((_, i) => i)
      .sort((a, b) => (g.elsewhere[a] ?? 0) - (g.elsewhere[b] ?? 0) || a - b);
    const first = g.wallets[order[0] as number] as number;
    for (const i of order.slice(1)) {
      const wallet = g.wallets[i] as number;
      const weight = chanceWeight(chance) * (1 - (g.elsewhere[i] ?? 0));
      if (links.add({ wallet, to: first, rule: "behaviour", strong, measure: chance, weight })) joined++;
    }
  }
  return joined;
}

/**
 * `rw_behaviour_bands` (payer, pay_to, band): the payers' signatures; `rw_behaviour_payers` (payer,
 * cluster): each one's strong cluster (itself where it has none); `rw_behaviour` (cluster, source, span,
 * bucket, n): the groups of at least `behaviourMinWallets` strong clusters of payers each cluster is in.
 *
 * A cluster is in a hub's group when the hub paid any wallet of it in the span: a burst's wallets that fund
 * the payers (strongly, by the funding rule, through any number of wallets) instead of paying themselves
 * are the same group. So is a payer whose plain money (from senders that are not hubs) came mostly from
 * clusters in the group, as the funding rule weighs a funder: one farm wallet given a third by each of three
 * of the burst's wallets. Groups are counted by strong cluster, so a cluster is one payer in each.
 */
async function behaviourGroups(analytics: Analytics): Promise<void> {
  const t = THRESHOLDS;
  // Only amounts below the merchant's lowest listed price (any, where it lists none) can make or miss a
  // price, or be tiny: merged or not, buyers at a listed price change no figure. Most payments are at one.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_behaviour_bands AS
     WITH listed AS (SELECT pay_to, min(round(price_usd * 1e6)) AS price FROM listings WHERE price_usd > 0 GROUP BY pay_to)
     SELECT DISTINCT g.payer, g.pay_to, floor(log2(g.amount))::INTEGER AS band
     FROM rw_groups g LEFT JOIN listed l USING (pay_to)
     WHERE g.amount > 0 AND (l.price IS NULL OR g.amount < l.price)`,
  );
  // Payers are counted by strong cluster, in the groups and outside them: a farm already joined by its
  // funding is one payer, not many that make its band look common.
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_behaviour_payers AS
     SELECT p.payer, coalesce(c.cluster, p.payer) AS cluster
     FROM (SELECT DISTINCT payer FROM rw_behaviour_bands) p LEFT JOIN rw_strong_clusters c ON c.wallet = p.payer`,
  );
  const hubs = "SELECT wallet FROM rw_cluster_hubs";
  await analytics.run(
    `CREATE OR REPLACE TEMP TABLE rw_behaviour AS
     WITH fed AS (
       -- What each payer received from each sender that is not a hub, by the sender's strong cluster.
       SELECT i.wallet AS payer, coalesce(c.cluster, i.sender) AS cluster, i.funds
       FROM rw_inflow i SEMI JOIN rw_behaviour_payers p ON p.payer = i.wallet
         LEFT JOIN rw_strong_clusters c ON c.wallet = i.sender
       WHERE i.funds > 0 AND i.sender NOT IN (${hubs})
     ), reach AS (
       SELECT cluster FROM rw_behaviour_payers UNION SELECT cluster FROM fed
     ), wallets AS (
       SELECT c.wallet, c.cluster FROM rw_strong_clusters c SEMI JOIN reach r USING (cluster)
       UNION ALL
       SELECT cluster, cluster FROM reach WHERE cluster NOT IN (SELECT wallet FROM rw_strong_clusters)
     ), paid AS (
       -- The hubs' payouts to those clusters' wallets, in each span's buckets.
       SELECT DISTINCT w.cluster, i.sender AS hub, s.span,
         (epoch(i.first_time)::BIGINT + s.shift) // s.seconds AS bucket
       FROM rw_inflow i JOIN wallets w USING (wallet), (VALUES ${SPAN_SHIFTS}) s(span, seconds, shift)
       WHERE i.sender IN (${hubs})
     ), members AS (
       -- Each hub's, and where several hubs paid out in one bucket, all of theirs together: a burst is one
       -- whether one exchange paid it out or several.
       SELECT cluster, hub AS source, span, bucket FROM paid
       UNION
       SELECT cluster, '${ANY_HUB}', span, bucket FROM paid
       SEMI JOIN (SELECT span, bucket FROM paid GROUP BY ALL HAVING min(hub) <> max(hub)) USING (span, bucket)
     ), src AS (
       SELECT m.* FROM members m SEMI JOIN rw_behaviour_payers p USING (cluster)
       UNION
       SELECT p.cluster, g.source, g.span, g.bucket FROM (
         SELECT f.payer, m.source, m.span, m.bucket, sum(f.funds) AS funds
         FROM fed f JOIN members m USING (cluster) GROUP BY ALL
       ) g JOIN rw_inflow_totals t ON t.wallet = g.payer JOIN rw_behaviour_payers p ON p.payer = g.payer
       WHERE g.funds * 2 >= t.nonhub AND g.funds >= t.total * ${t.firstFunderMinShare}
       UNION
       -- The payers any other wallet ever paid, by the sender's cluster (every link).
       SELECT p.cluster, coalesce(a.cluster, i.sender), 'ever', 0
       FROM rw_inflow i JOIN rw_behaviour_payers p ON p.payer = i.wallet LEFT JOIN rw_clusters a ON a.wallet = i.sender
       WHERE i.sender NOT IN (SELECT wallet FROM rw_merchants) AND i.sender NOT IN (${hubs})
     ), sized AS (
       SELECT source, span, bucket, count(*) AS n FROM src GROUP BY ALL HAVING count(*) >= ${t.behaviourMinWallets}
     )
     SELECT s.*, z.n FROM src s JOIN sized z USING (source, span, bucket)`,
  );
}

/** P[X >= k] for X ~ Binomial(n, p), summed in logs from k up until the terms stop mattering. */
export function binomialTail(n: number, k: number, p: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p <= 0) return 0;
  // At or below the mean the tail is about a half or more: far above any threshold, no need to sum it.
  if (p >= 1 || k <= n * p) return 1;
  const lp = Math.log(p);
  const lq = Math.log1p(-p);
  let term = logChoose(n, k) + k * lp + (n - k) * lq;
  let sum = 0;
  for (let i = k; i <= n; i++) {
    const value = Math.exp(term);
    sum += value;
    if (value < sum * 1e-17) break;
    // C(n, i+1) / C(n, i) = (n - i) / (i + 1)
    term += Math.log((n - i) / (i + 1)) + lp - lq;
  }
  return Math.min(sum, 1);
}

function logChoose(n: number, k: number): number {
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

const LOG_FACTORIALS: number[] = [0];
function logFactorial(n: number): number {
  for (let i = LOG_FACTORIALS.length; i <= n; i++) {
    LOG_FACTORIALS[i] = (LOG_FACTORIALS[i - 1] as number) + Math.log(i);
  }
  return LOG_FACTORIALS[n] as number;
}
