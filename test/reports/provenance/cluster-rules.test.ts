/**
 * The cluster rules one at a time (issue 54), read from the build's tables: which links each rule makes,
 * with what strength, and which it must not make.
 */
import { describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { BASE_RECORD } from "../../../src/chain/chains.ts";
import { KNOWN_HUBS } from "../../../src/chain/hubs.ts";
import { binomialTail } from "../../../src/reports/provenance/behaviour.ts";
import { THRESHOLDS } from "../../../src/reports/screens/index.ts";
import { aggregateWindow, dropWindowTables } from "../../../src/reports/week/aggregates.ts";
import { addr, analyticsWith, END, START, transfer, WINDOW_BOUNDS } from "../../helpers/data.ts";
import { genuine, payers, rng, WEEK, wallets } from "../../helpers/scenarios.ts";

type Link = { wallet: string; linked: string; rule: string; strong: boolean };

/** The window's cluster links, clusters and hubs over `records`. */
async function clustersOf(records: readonly object[]) {
  const analytics: Analytics = await analyticsWith(records);
  try {
    await aggregateWindow(analytics, { chain: BASE_RECORD, ...WINDOW_BOUNDS });
    const links = await analytics.all<Link>("SELECT wallet, linked, rule, strong FROM rw_cluster_links");
    const cluster = new Map(
      (await analytics.all<{ wallet: string; cluster: string }>("SELECT * FROM rw_clusters")).map((r) => [
        r.wallet,
        r.cluster,
      ]),
    );
    const strong = new Map(
      (await analytics.all<{ wallet: string; cluster: string }>("SELECT * FROM rw_strong_clusters")).map(
        (r) => [r.wallet, r.cluster],
      ),
    );
    const hubs = new Map(
      (await analytics.all<{ wallet: string; rule: string }>("SELECT * FROM rw_cluster_hubs")).map((r) => [
        r.wallet,
        r.rule,
      ]),
    );
    await dropWindowTables(analytics);
    return { links, cluster, strong, hubs };
  } finally {
    analytics.close();
  }
}

const m = addr("rules-merchant");
const genuineMetered = (buyers: readonly string[], seed: number) => {
  const next = rng(seed);
  return buyers.flatMap((w) => payers(m, [w], 5 + next(20), () => 200 + next(8_000)));
};

describe("funding by cluster", () => {
  it("joins a wallet to the cluster of three wallets that each gave it a third, in a second round", async () => {
    const owner = addr("fp-owner");
    const feeders = wallets("fp-feeder", 3);
    const w = addr("fp-wallet");
    const { links, strong } = await clustersOf([
      ...feeders.map((f, i) => transfer(owner, f, 10_000_000, START - 2 * WEEK + i)),
      ...feeders.map((f, i) => transfer(f, w, 1_000_000, START - WEEK + i)),
      ...payers(m, [w], 3, () => 10_000),
    ]);
    expect(strong.get(w)).toBe(strong.get(owner));
    expect(links.find((l) => l.wallet === w)).toMatchObject({ rule: "funding", strong: true });
  });

  it("makes a friend's top-up of less than a quarter a weak link, and dust no link, beside an exchange withdrawal", async () => {
    const hub = KNOWN_HUBS[0]?.address as string;
    const [a, b] = wallets("fp-topped", 2) as [string, string];
    const friend = addr("fp-friend");
    const { links, cluster } = await clustersOf([
      transfer(hub, a, 8_000_000, START - WEEK),
      transfer(friend, a, 2_000_000, START - WEEK + 1),
      transfer(hub, b, 8_000_000, START - WEEK + 2),
      transfer(friend, b, 2_000_000, START - WEEK + 3),
      transfer(addr("fp-duster"), a, 1, START - WEEK + 4),
      ...payers(m, [a, b], 3, () => 10_000),
    ]);
    // 20% from the friend: under fundingMinShare, so a link the price test counts in proportion, not a strong one.
    expect(2 / 10).toBeLessThan(THRESHOLDS.fundingMinShare);
    expect(links.filter((l) => l.rule === "funding").sort((x, y) => (x.wallet < y.wallet ? -1 : 1))).toEqual([
      ...[a, b].sort().map((wallet) => ({ wallet, linked: friend, rule: "funding", strong: false })),
    ]);
    // The exchange paid each first: no first funder; and the duster's cent joins no one.
    expect(links.filter((l) => l.rule === "first_funder" || l.linked === addr("fp-duster"))).toEqual([]);
    expect(cluster.get(a)).toBe(cluster.get(friend));
  });

  it("does not count a merchant's refund as funding of the customer it refunds", async () => {
    const customer = addr("fp-refunded");
    const { links } = await clustersOf([
      transfer(KNOWN_HUBS[1]?.address as string, customer, 10_000_000, START - WEEK),
      ...payers(m, [customer], 10, () => 500_000),
      transfer(m, customer, 4_000_000, END - 10),
    ]);
    expect(links).toEqual([]);
  });

  it("links a wallet to its first funder, weakly, where a later sender gave more", async () => {
    const w = addr("ff-wallet");
    const first = addr("ff-first");
    const { links, strong } = await clustersOf([
      transfer(first, w, 3_000_000, START - WEEK),
      transfer(addr("ff-later"), w, 7_000_000, START - WEEK + 10),
      ...payers(m, [w], 3, () => 10_000),
    ]);
    expect(links).toContainEqual({ wallet: w, linked: first, rule: "first_funder", strong: false });
    expect(strong.get(w)).not.toBe(strong.get(first) ?? first);
  });
});

describe("hubs", () => {
  it("never takes a listed exchange, or one the operator imported, for a funder", async () => {
    const listed = KNOWN_HUBS[0]?.address as string;
    const imported = addr("operator-labelled-exchange");
    const paid = wallets("hub-paid", 4);
    const { links, hubs } = await clustersOf([
      {
        type: "hub",
        chain: "base",
        address: imported,
        label: "An exchange",
        kind: "exchange",
        source: "https://example.org/labels",
      },
      ...paid.map((w, i) => transfer(i < 2 ? listed : imported, w, 5_000_000, START - WEEK + i * 50_000)),
      ...paid.flatMap((w, i) => payers(addr(`hub-merchant-${i}`), [w], 3, () => 10_000)),
    ]);
    expect(hubs.get(listed)).toBe("listed");
    expect(hubs.get(imported)).toBe("listed");
    expect(links).toEqual([]);
  });

  it("finds an exchange seen only by its withdrawals, to buyers of many merchants, and not a distributor to one", async () => {
    const cex = addr("spread-exchange");
    const distributor = addr("spread-distributor");
    const cexPaid = wallets("spread-paid", THRESHOLDS.hubMinRecipients);
    const farm = wallets("spread-farm", THRESHOLDS.hubMinRecipients);
    const { hubs, strong } = await clustersOf([
      ...cexPaid.flatMap((w, i) => [
        transfer(cex, w, 5_000_000, START - WEEK + i * 50),
        ...payers(addr(`spread-merchant-${i % 12}`), [w], 3, () => 10_000),
      ]),
      ...farm.map((w, i) => transfer(distributor, w, 5_000_000, START - WEEK + i * 50)),
      ...payers(m, farm, 3, () => 10_000),
    ]);
    expect(hubs.get(cex)).toBe("spread");
    expect(hubs.has(distributor)).toBe(false);
    expect(strong.get(cexPaid[0] as string)).toBeUndefined();
    expect(strong.get(farm[0] as string)).toBe(strong.get(distributor));
  });
});

describe("behaviour", () => {
  const cex = KNOWN_HUBS[2]?.address as string;

  it("joins wallets withdrawn in one burst that pay one merchant in one band, strongly", async () => {
    const farm = wallets("bh-farm", 8);
    const { links, strong } = await clustersOf([
      ...farm.map((w, i) => transfer(cex, w, 5_000_000, START - WEEK + i * 3)),
      ...payers(m, farm, 30, (i) => 300 + i),
      ...genuine(m, [10_000, 20_000, 50_000], 30, 7).records,
    ]);
    expect(links.filter((l) => l.rule === "behaviour" && l.strong)).toHaveLength(7);
    expect(new Set(farm.map((w) => strong.get(w))).size).toBe(1);
  });

  it("leaves genuine metered buyers withdrawn in one hour, whose amounts spread like everyone's", async () => {
    const hour = wallets("bh-hour", 20);
    const { links } = await clustersOf([
      ...hour.map((w, i) => transfer(cex, w, 5_000_000, START - WEEK + i * 90)),
      ...genuineMetered(hour, 8),
      ...genuineMetered(wallets("bh-others", 40), 9),
    ]);
    expect(links).toEqual([]);
  });

  it("leaves genuine metered buyers withdrawn from three exchanges in one hour (groups across hubs)", async () => {
    const hour = wallets("bh-hubs-hour", 21);
    const exchanges = KNOWN_HUBS.slice(2, 5).map((h) => h.address);
    const { links } = await clustersOf([
      ...hour.map((w, i) => transfer(exchanges[i % 3] as string, w, 5_000_000, START - WEEK + i * 85)),
      ...genuineMetered(hour, 11),
      ...genuineMetered(wallets("bh-hubs-others", 40), 12),
    ]);
    expect(links).toEqual([]);
  });

  it("leaves customers withdrawn in one hour who each fund an agent of their own one buyer each (one hop)", async () => {
    const hour = wallets("bh-hop-customer", 20);
    const agents = wallets("bh-hop-agent", 20);
    const { links, strong } = await clustersOf([
      ...hour.map((w, i) => transfer(cex, w, 5_000_000, START - WEEK + i * 90)),
      ...agents.map((a, i) => transfer(hour[i] as string, a, 2_000_000, START - WEEK + 2_000 + i)),
      ...genuineMetered(agents, 13),
      ...genuineMetered(wallets("bh-hop-others", 40), 14),
    ]);
    expect(links.filter((l) => l.rule !== "funding")).toEqual([]);
    expect(new Set(agents.map((a) => strong.get(a))).size).toBe(20);
  });

  it("joins the wallets a burst's wallets fund, through two levels or a third from each of three, and a burst split over exchanges", async () => {
    const exchanges = KNOWN_HUBS.slice(2, 5).map((h) => h.address);
    // Each farm pays m in a band of its own, so that each is joined by its own rule.
    const farms = {
      fed: { ws: wallets("bh-fed", 12), from: 300 },
      deeper: { ws: wallets("bh-deeper", 12), from: 600 },
      thirds: { ws: wallets("bh-thirds", 12), from: 1_200 },
      split: { ws: wallets("bh-split", 12), from: 2_100 },
    };
    const burst = (label: string, n: number, at: number) => {
      const ws = wallets(label, n);
      return { ws, records: ws.map((f, i) => transfer(cex, f, 10_000_000, at + i * 3)) };
    };
    // Three bursts days apart: six feeders, six feeders of six middle wallets, six wallets giving thirds.
    const feeders = burst("bh-feeder", 6, START - 3 * WEEK);
    const upper = burst("bh-upper", 6, START - 2 * WEEK);
    const middle = wallets("bh-middle", 6);
    const givers = burst("bh-giver", 6, START - WEEK);
    const fund = (from: string, to: string, amount: number, i: number) =>
      transfer(from, to, amount, START - WEEK + 40_000 + i * 20_000);
    const { strong, cluster } = await clustersOf([
      ...feeders.records,
      ...upper.records,
      ...givers.records,
      ...farms.fed.ws.map((w, i) => fund(feeders.ws[i >> 1] as string, w, 5_000_000, i)),
      ...middle.map((w, i) => fund(upper.ws[i] as string, w, 9_000_000, i)),
      ...farms.deeper.ws.map((w, i) => fund(middle[i >> 1] as string, w, 4_000_000, i)),
      // Farm wallet i gets a third from each of three givers: no one gives it half.
      ...farms.thirds.ws.flatMap((w, i) =>
        [0, 1, 2].map((j) => fund(givers.ws[(i + j) % 6] as string, w, 1_000_000, i)),
      ),
      ...farms.split.ws.map((w, i) =>
        transfer(exchanges[i % 3] as string, w, 5_000_000, START - WEEK + i * 3),
      ),
      ...Object.values(farms).flatMap((f) => payers(m, f.ws, 30, (i) => f.from + i)),
      ...genuine(m, [10_000, 20_000, 50_000], 30, 15).records,
    ]);
    // Each farm one strong cluster (a wallet in no link is its own: undefined).
    const joined = Object.fromEntries(
      Object.entries(farms).map(([name, f]) => {
        const names = new Set(f.ws.map((w) => strong.get(w)));
        return [name, names.size === 1 && !names.has(undefined)];
      }),
    );
    expect(joined).toEqual({ fed: true, deeper: true, thirds: true, split: true });
    // The farms are apart: each was joined within itself.
    expect(new Set(Object.values(farms).map((f) => cluster.get(f.ws[0] as string))).size).toBe(4);
  });

  it("does not merge buyers that spend most of their money at other merchants (the diversity guard)", async () => {
    const agents = wallets("bh-agent", 8);
    const { links } = await clustersOf([
      ...agents.map((w, i) => transfer(cex, w, 5_000_000, START - WEEK + i * 3)),
      ...Array.from({ length: 5 }, (_, j) => payers(addr(`bh-service-${j}`), agents, 3, () => 300)).flat(),
      ...genuineMetered(wallets("bh-genuine-2", 30), 10),
    ]);
    // Each agent spent four fifths of its money at the other four services.
    expect(4 / 5).toBeGreaterThan(THRESHOLDS.behaviourMaxElsewhereShare);
    expect(links).toEqual([]);
  });
});

describe("the null model's binomial tail", () => {
  it("agrees with sums computed directly", () => {
    const direct = (n: number, k: number, p: number) => {
      let sum = 0;
      for (let i = k; i <= n; i++) {
        let c = 1;
        for (let j = 0; j < i; j++) c = (c * (n - j)) / (j + 1);
        sum += c * p ** i * (1 - p) ** (n - i);
      }
      return sum;
    };
    for (const [n, k, p] of [
      [12, 12, 1 / 31],
      [40, 10, 0.05],
      [200, 20, 0.02],
      [30, 9, 0.1],
    ] as const) {
      const got = binomialTail(n, k, p);
      expect(Math.abs(got - direct(n, k, p)) / direct(n, k, p)).toBeLessThan(1e-9);
    }
    expect(binomialTail(10, 11, 0.5)).toBe(0);
    expect(binomialTail(10, 3, 0.5)).toBe(1);
  });
});
