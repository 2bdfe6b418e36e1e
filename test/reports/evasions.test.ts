/**
 * The screens against someone who has read them (issue 39): each evasion steps just past a rule the
 * screens page used to publish, beside genuine demand, and each genuine look-alike is a merchant whose
 * honest buyers resemble one. Real revenue within 5% of the truth either way.
 */
import { describe, expect, it } from "vitest";
import { KNOWN_HUBS } from "../../src/chain/hubs.ts";
import { renderEvidencePage } from "../../src/reports/render/evidence-page.ts";
import { THRESHOLDS } from "../../src/reports/screens/index.ts";
import { EvidenceDocumentSchema } from "../../src/reports/serve/document-schemas.ts";
import { addr, balance, END, payment, START, transfer } from "../helpers/data.ts";
import { SideBySide, withService } from "../helpers/reports.ts";
import {
  DAY,
  exchangeCustomers,
  expectReportNearTruth,
  genuine,
  HOUR,
  listing,
  MINUTE,
  payers,
  rng,
  roundTrip,
  WEEK,
  wallets,
} from "../helpers/scenarios.ts";

const prices = [10_000, 20_000, 50_000];

/**
 * The worlds of the cases that read one report, side by side in one store and one build (`SideBySide`), each
 * on wallets of its own: the reports each gets alone (SIDE_BY_SIDE_ALONE=1 checks) for a fraction of the CPU.
 * The exchange's cases build alone: the exchange is one the code names, the same wallet in every copy.
 */
const worlds = new SideBySide();

describe("evasions of the money's provenance", () => {
  const m = addr("provenance-merchant");

  {
    const base = genuine(m, prices);
    const chain = wallets("pass", 5);
    const buyers = wallets("deep-sybil", 8);
    const path = [m, ...chain];
    const records = [
      ...base.records,
      ...path
        .slice(1)
        .map((w, i) => transfer(path[i] as string, w, 500_000_000 - i * 1_000_000, START - 6 * WEEK + i)),
      ...buyers.map((w, i) => transfer(chain[4] as string, w, 50_000_000, START - 5 * WEEK + i)),
      ...payers(m, buyers, 40, () => 100_000),
    ];
    const world = worlds.world(records);
    it("follows the merchant's money through five private wallets, one more than the old hop limit and more", async () => {
      const report = expectReportNearTruth((await world(m)).report, base.truthUsd);
      expect(report.flags.merchant_funded?.tx).toBe(320);
    });
  }

  it("follows a chain of 2,000 wallets, and shows its first and last transfers", async () => {
    const chain = wallets("long-chain", 2_000);
    const path = [m, ...chain];
    const buyer = chain[chain.length - 1] as string;
    const records = [
      ...path.slice(1).map((w, i) => transfer(path[i] as string, w, 10_000_000, START - 2 * WEEK + i)),
      ...payers(m, [buyer], 10, () => 100_000),
    ];
    await withService(
      records,
      async (service) => {
        const { report } = await service.report(m, END);
        expect(report.flags).toEqual({ merchant_funded: { tx: 10, usd: 1 } });
        const evidence = await service.evidence(m, END);
        const w = evidence.flags[0]?.wallets[0];
        expect(w?.provenance?.transfers).toBe(2_000);
        expect(w?.funding_path).toHaveLength(64);
        expect(w?.funding_path?.[0]?.from).toBe(m);
        expect(w?.funding_path?.at(-1)?.to).toBe(buyer);
      },
      { publicUrl: "https://reports.test" },
    );
  });

  it("follows money through another merchant's x402 revenue, and shows that payment's transaction", async () => {
    // m's money reaches a wallet that buys from merchant n in the window; n's revenue then funds the buyer who pays m.
    const n = addr("provenance-other-merchant");
    const [carrier, buyer] = wallets("through-merchant", 2) as [string, string];
    const viaN = payment({ payer: carrier, payTo: n, amount: 30_000_000, block: START + 10 });
    const records = [
      transfer(m, carrier, 30_000_000, START - 4 * DAY),
      viaN,
      transfer(n, buyer, 30_000_000, START + 20),
      ...payers(m, [buyer], 10, () => 100_000),
      // Other payments in viaN's block: the hash shown must be that payment's.
      payment({ payer: addr("bystander-1"), payTo: n, amount: 1_000, block: START + 10 }),
      payment({ payer: addr("bystander-2"), payTo: m, amount: 1_000, block: START + 10 }),
    ];
    await withService(
      records,
      async (service) => {
        expect((await service.report(m, END)).report.flags).toEqual({ merchant_funded: { tx: 10, usd: 1 } });
        const w = (await service.evidence(m, END)).flags[0]?.wallets[0];
        expect(w?.funding_path?.map((h) => [h.from, h.to, h.tx_hash])).toEqual([
          [m, carrier, records[0]?.tx_hash],
          [carrier, n, viaN.tx_hash],
          [n, buyer, records[2]?.tx_hash],
        ]);
      },
      { publicUrl: "https://reports.test" },
    );
  });

  {
    const base = genuine(m, prices, 30, 2);
    const buyers = wallets("dormant", 8);
    const records = [
      ...base.records,
      ...buyers.map((w, i) => transfer(m, w, 20_000_000, START - 20 * WEEK + i)),
      ...payers(m, buyers, 30, () => 50_000),
    ];
    const world = worlds.world(records);
    it("follows money the merchant sent 20 weeks before the window, dormant since", async () => {
      const report = expectReportNearTruth((await world(m)).report, base.truthUsd);
      expect(report.flags.merchant_funded?.tx).toBe(240);
    });
  }

  {
    const base = genuine(m, prices, 30, 3);
    const distributor = addr("distributor");
    const buyers = wallets("fanned", 60);
    const records = [
      ...base.records,
      transfer(m, distributor, 1_000_000_000, START - 2 * WEEK),
      ...buyers.map((w, i) => transfer(distributor, w, 10_000_000, START - WEEK + i)),
      ...payers(m, buyers, 12, () => 50_000),
    ];
    expect(buyers.length).toBeGreaterThan(THRESHOLDS.hubMinCounterparties);
    const world = worlds.world(records);
    it("follows a distributor fed by the merchant alone, however many wallets it pays", async () => {
      const report = expectReportNearTruth((await world(m)).report, base.truthUsd);
      expect(report.flags.merchant_funded?.tx).toBe(720);
    });
  }

  {
    const base = genuine(m, prices, 30, 4);
    const distributor = addr("dressed-distributor");
    const feeder = addr("feeder");
    const fakeDepositors = wallets("fake-depositor", THRESHOLDS.hubMinSenders);
    const buyers = wallets("dressed-fanned", 20);
    const records = [
      ...base.records,
      ...fakeDepositors.map((w, i) => transfer(feeder, w, 1_000, START - 3 * WEEK + i)),
      ...fakeDepositors.map((w, i) => transfer(w, distributor, 1_000, START - 3 * WEEK + 100 + i)),
      transfer(m, distributor, 1_000_000_000, START - 2 * WEEK),
      ...buyers.map((w, i) => transfer(distributor, w, 10_000_000, START - WEEK + i)),
      ...payers(m, buyers, 12, () => 50_000),
    ];
    const world = worlds.world(records);
    it("follows a distributor dressed as an exchange by 50 depositors of its own, funded from one wallet", async () => {
      const report = expectReportNearTruth((await world(m)).report, base.truthUsd);
      // 239: the 50 dust deposits ($0.05) are the first buyer's first payment, paid first in first out.
      expect(report.flags.merchant_funded?.tx).toBe(239);
    });
  }

  {
    const base = genuine(m, prices, 30, 10);
    const distributor = addr("bought-hub");
    const buyers = wallets("bought-hub-fanned", 20);
    const records = [
      ...base.records,
      // Each depositor withdrawn from a source of its own: 50 clusters, so a hub by its senders.
      ...wallets("independent-depositor", THRESHOLDS.hubMinSenders).flatMap((w, i) => [
        transfer(addr(`own-source-${i}`), w, 2_000, START - 3 * WEEK + i),
        transfer(w, distributor, 1_000, START - 3 * WEEK + 100 + i),
      ]),
      transfer(m, distributor, 1_000_000_000, START - 2 * WEEK),
      // What the indexer reads of a wallet whose money reaches a payer: its balance, $1 more than the data
      // saw arrive (money parked out of sight, to look like an exchange's).
      balance(distributor, 1_001_050_000, START - WEEK - 1),
      ...buyers.map((w, i) => transfer(distributor, w, 10_000_000, START - WEEK + i)),
      ...payers(m, buyers, 12, () => 50_000),
    ];
    // The $1 out of sight comes first, then the depositors' $0.05: the first buyer's 12 payments ($0.60)
    // are paid with them, real by the rules (the gamer's own money, dollar for dollar); the rest is flagged.
    const world = worlds.world(records);
    it("follows a distributor made a hub by 50 independent depositors, where its balance is in the data", async () => {
      const report = expectReportNearTruth((await world(m)).report, base.truthUsd + 0.6);
      expect(report.flags.merchant_funded?.tx).toBe(228);
    });
  }

  {
    const base = genuine(m, prices, 30, 5);
    const mixer = addr("mixer");
    const records = [
      ...base.records,
      transfer(addr("mixer-savings"), mixer, 10_000_000, START - WEEK),
      transfer(m, mixer, 10_000_000, START - WEEK + 10),
      // $20 in, paid in 40 payments of $0.50: the first 20 with its own money, the last 20 with the merchant's.
      ...payers(m, [mixer], 40, () => 500_000),
    ];
    const world = worlds.world(records);
    it("flags in proportion a wallet that mixes the merchant's money with its own", async () => {
      const report = expectReportNearTruth((await world(m)).report, base.truthUsd + 10);
      expect(report.flags.merchant_funded).toEqual({ tx: 20, usd: 10 });
    });
  }
});

describe("money round an exchange (issue 84)", () => {
  const hub = KNOWN_HUBS[0]?.address as string;

  /**
   * m's report and evidence over `records`, what merchant_funded flagged, and what it flagged of wallets
   * other than `farm`'s (USD).
   */
  function read(records: readonly object[], m: string, farm: readonly string[] = []) {
    return withService(
      records,
      async (service) => {
        const { report } = await service.report(m, END);
        const evidence = await service.evidence(m, END);
        const flag = evidence.flags.find((f) => f.kind === "merchant_funded");
        // Every wallet is named (at most 20 here): a look-alike's loss is read wallet by wallet.
        expect(flag?.more_wallets ?? null).toBeNull();
        const others = (flag?.wallets ?? []).filter((w) => !farm.includes(w.wallet));
        const lost = others.reduce((sum, w) => sum + w.usd, 0);
        return { report, evidence, funded: report.flags.merchant_funded?.usd ?? 0, lost };
      },
      { publicUrl: "https://reports.test" },
    );
  }

  /** A merchant's 30 buyers of its own and `customers` of the exchange who spend their withdrawals there. */
  function buyers(m: string, customers: number, times: number, seed: number) {
    const own = genuine(m, prices, 30, seed);
    const cex = exchangeCustomers(m, hub, { label: `${m}-customer`, buyers: customers, times, seed });
    return { records: [...own.records, ...cex.records], truthUsd: own.truthUsd + cex.truthUsd };
  }

  it("flags fresh wallets that withdraw the merchant's daily deposit within minutes and spend it at its prices", async () => {
    const m = addr("round-trip-merchant");
    const base = buyers(m, 15, 3, 84);
    const trip = roundTrip(m, hub, { label: "round-trip", delay: (d, k) => 3 * MINUTE + 40 * k + 7 * d });
    const { evidence, funded, lost } = await read([...base.records, ...trip.records], m, trip.farm);
    // $139.30 of fresh wallets' payments, for $0.70 of fees: flagged but for what the exchange's customers
    // would have put in the spans after the deposits (the base rate), the customers kept but for the
    // spans' noise (what the read exceeds the farm by is carried by the payouts after the farm's).
    expect(trip.paid / 1e6).toBeGreaterThan(130);
    expect(funded - lost).toBeGreaterThanOrEqual((0.95 * trip.paid) / 1e6);
    expect(lost / base.truthUsd).toBeLessThan(0.02);
    // The way: the merchant's deposit, then the exchange's payout read as it coming back.
    const w = evidence.flags
      .find((f) => f.kind === "merchant_funded")
      ?.wallets.find((x) => trip.farm.includes(x.wallet));
    expect(w?.funding_path?.map((h) => [h.from, h.to])).toEqual([
      [m, hub],
      [hub, w?.wallet],
    ]);
    expect(w?.funding_path?.[0]?.hub_return).toBeUndefined();
    expect(w?.funding_path?.[1]?.hub_return?.span_seconds).toBeGreaterThanOrEqual(600);
    expect(w?.funding_path?.[1]?.hub_return?.chance).toBeLessThan(THRESHOLDS.returnStrongChance);
    // As served and as the page says it.
    expect(EvidenceDocumentSchema.safeParse(evidence).error).toBeUndefined();
    expect(renderEvidencePage(evidence, {})).toContain(
      "a hub the screens do not follow, read as the merchant's deposit coming back",
    );
  });

  it("flags the wallets when each was sent a cent a week before (not fresh), through the merchant's second wallet", async () => {
    const m = addr("round-trip-aged-merchant");
    const base = buyers(m, 15, 3, 85);
    // The merchant funds a wallet of its own that does the depositing: one cluster with it.
    const own = addr("round-trip-own-wallet");
    const trip = roundTrip(own, hub, { label: "round-trip-aged", delay: (_, k) => 4 * MINUTE + 40 * k });
    const spent = trip.records.map((r) =>
      (r as { pay_to?: string }).pay_to === own ? { ...r, pay_to: m } : r,
    );
    const records = [
      ...base.records,
      transfer(m, own, 200_000_000, START - WEEK),
      ...trip.farm.map((w, i) => transfer(addr(`round-trip-duster-${i}`), w, 10_000, START - WEEK + i)),
      ...spent,
    ];
    const { funded, lost } = await read(records, m, trip.farm);
    expect(funded - lost).toBeGreaterThanOrEqual((0.9 * trip.paid) / 1e6);
    expect(lost / base.truthUsd).toBeLessThan(0.02);
  });

  it("flags the wallets when the money comes back through another bridge than the one it went into", async () => {
    // Across's SpokePool takes the deposit; Relay's solver fills the way back from its own wallet: no message
    // names both, and the bridges' wallets are one pool (1.10.0).
    const bridge = (label: string) => KNOWN_HUBS.find((h) => h.label === label)?.address as string;
    const [into, outOf] = [bridge("Across SpokePool"), bridge("Relay Solver")];
    expect(into).toBe(hub);
    const m = addr("round-trip-bridges-merchant");
    const base = buyers(m, 15, 3, 89);
    const trip = roundTrip(m, into, {
      label: "round-trip-bridges",
      delay: (d, k) => 3 * MINUTE + 40 * k + 7 * d,
    });
    const back = trip.records.map((r) =>
      (r as { from?: string }).from === into ? { ...r, from: outOf } : r,
    );
    const { evidence, funded, lost } = await read([...base.records, ...back], m, trip.farm);
    expect(funded - lost).toBeGreaterThanOrEqual((0.95 * trip.paid) / 1e6);
    expect(lost / base.truthUsd).toBeLessThan(0.02);
    const w = evidence.flags
      .find((f) => f.kind === "merchant_funded")
      ?.wallets.find((x) => trip.farm.includes(x.wallet));
    expect(w?.funding_path?.map((h) => [h.from, h.to])).toEqual([
      [m, into],
      [outOf, w?.wallet],
    ]);
  });

  it("leaves the exchange's customers among its buyers, three of them withdrawing right after its deposits", async () => {
    const m = addr("round-trip-lookalike");
    const base = buyers(m, 30, 3, 86);
    const days = [1, 3, 4];
    const lucky = exchangeCustomers(m, hub, {
      label: "round-trip-lucky",
      buyers: 3,
      times: 1,
      seed: 86,
      when: () => START + (days.shift() as number) * DAY + 5_000 + 3 * MINUTE,
    });
    const records = [
      ...base.records,
      ...lucky.records,
      // The merchant deposits its takings every day, as its customers spend them.
      ...Array.from({ length: 7 }, (_, d) => transfer(m, hub, 20_000_000, START + d * DAY + 5_000)),
    ];
    const { funded } = await read(records, m);
    expect(funded / (base.truthUsd + lucky.truthUsd)).toBeLessThan(0.02);
  });

  it("leaves a merchant that sweeps its takings hourly in business hours, when its customers withdraw", async () => {
    // The customers' withdrawals and the merchant's deposits share the day's hours, not a cause: the rest of
    // the day says nothing of those hours, the hour before each deposit does.
    const m = addr("round-trip-office-hours");
    const own = genuine(m, prices, 30, 88);
    const cex = exchangeCustomers(m, hub, {
      label: "round-trip-office-customer",
      buyers: 60,
      times: 4,
      seed: 88,
      when: (next) => START + next(7) * DAY + 8 * HOUR + next(10 * HOUR),
    });
    const records = [
      ...own.records,
      ...cex.records,
      ...Array.from({ length: 7 }, (_, d) =>
        Array.from({ length: 10 }, (_, h) => transfer(m, hub, 20_000_000, START + d * DAY + (8 + h) * HOUR)),
      ).flat(),
    ];
    const { funded } = await read(records, m);
    expect(funded / (own.truthUsd + cex.truthUsd)).toBeLessThan(0.02);
  });

  it("leaves a popular merchant that deposits daily where 100 of its 130 buyers withdraw all week", async () => {
    const m = addr("round-trip-popular");
    const base = buyers(m, 100, 4, 87);
    const records = [
      ...base.records,
      ...Array.from({ length: 8 }, (_, d) => transfer(m, hub, 200_000_000, START - DAY + d * DAY + 20_000)),
    ];
    const { funded } = await read(records, m);
    expect(funded / base.truthUsd).toBeLessThan(0.02);
  });
});

describe("evasions of tiny_repeat", () => {
  const m = addr("tiny-evasion-merchant");
  const listings = prices.map((p, i) => listing(m, `e${i}`, p / 1e6));

  {
    const base = genuine(m, prices, 30, 6);
    const farm = wallets("varied-farm", 3);
    const next = rng(99);
    const records = [...base.records, ...listings, ...payers(m, farm, 300, () => 100 + next(1_900))];
    const world = worlds.world(records);
    it("flags tiny payments whose amounts vary, so that no amount is most of them", async () => {
      const report = expectReportNearTruth((await world(m)).report, base.truthUsd);
      expect(report.flags.tiny_repeat?.tx).toBe(900);
    });
  }

  for (const size of [8, 12]) {
    const base = genuine(m, prices, 30, 7);
    const farm = wallets(`split-farm-${size}`, size);
    const source = addr(`farm-source-${size}`);
    const records = [
      ...base.records,
      ...farm.map((w, i) => transfer(source, w, 5_000_000, START - WEEK + i)),
      ...payers(m, farm, 150, () => 1_000),
    ];
    const both = [listings, []].map((extra) => worlds.world([...records, ...extra]));
    it(`is not fooled by a farm of ${size} wallets funded from one source, with or without listings`, async () => {
      for (const world of both) {
        const report = expectReportNearTruth((await world(m)).report, base.truthUsd);
        expect(report.flags.tiny_repeat?.tx).toBe(size * 150);
      }
    });
  }

  {
    const base = genuine(m, prices, 30, 8);
    const farm = wallets("tree-farm", 10);
    const [left, right] = [addr("tree-left"), addr("tree-right")];
    const records = [
      ...base.records,
      transfer(addr("tree-root"), left, 50_000_000, START - 2 * WEEK),
      transfer(addr("tree-root"), right, 50_000_000, START - 2 * WEEK + 1),
      ...farm.map((w, i) => transfer(i < 5 ? left : right, w, 5_000_000, START - WEEK + i)),
      ...payers(m, farm, 100, () => 1_000),
    ];
    const world = worlds.world(records);
    it("is not fooled by a farm funded through a second level of wallets", async () => {
      const report = expectReportNearTruth((await world(m)).report, base.truthUsd);
      expect(report.flags.tiny_repeat?.tx).toBe(1_000);
    });
  }
});

describe("genuine look-alikes", () => {
  {
    const m = addr("metered-merchant");
    const next = rng(5);
    const buyers = wallets("metered-buyer", 30);
    // Chat completions paid with upto: listed at their most ($0.05), charged what each call used.
    const records = [
      listing(m, "chat", 0.05),
      listing(m, "embed", 0.01),
      ...payers(m, buyers, 20, () => 200 + next(8_000)),
    ];
    const truth = records.reduce((sum, r) => sum + Number((r as { amount?: string }).amount ?? 0), 0) / 1e6;
    const world = worlds.world(records);
    it("leaves metered charges that vary, from independent buyers, below every listed price", async () => {
      const report = (await world(m)).report;
      expect(report.flags).toEqual({});
      expect(report.real_usd).toBeCloseTo(truth, 2);
    });
  }

  {
    const m = addr("agents-merchant");
    const base = genuine(m, prices, 20, 9);
    const agents = wallets("company-agent", 15);
    const records = [
      ...base.records,
      ...agents.map((w, i) => transfer(addr("company-treasury"), w, 20_000_000, START - WEEK + i)),
      ...payers(m, agents, 25, (i) => prices[i % 3] as number),
    ];
    const world = worlds.world(records);
    it("leaves a company's agents, funded from one treasury, paying listed prices", async () => {
      const report = (await world(m)).report;
      expect(report.flags).toEqual({});
    });
  }

  {
    const m = addr("cheap-merchant");
    const exchange = addr("shared-exchange");
    const buyers = wallets("cheap-buyer", 30);
    const records = [
      listing(m, "ping", 0.001),
      ...wallets("cex-depositor", THRESHOLDS.hubMinSenders).map((w, i) =>
        transfer(w, exchange, 1_000_000, START - 2 * WEEK + i),
      ),
      ...buyers.map((w, i) => transfer(exchange, w, 1_000_000, START - WEEK + i)),
      ...payers(m, buyers, 40, () => 1_000),
    ];
    const world = worlds.world(records);
    it("leaves buyers funded by one exchange, paying a cheap listed price all week", async () => {
      const report = (await world(m)).report;
      expect(report.flags).toEqual({});
      expect(report.real_tx).toBe(1_200);
    });
  }
});
