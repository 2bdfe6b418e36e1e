import { describe, expect, it } from "vitest";
import { THRESHOLDS } from "../../src/reports/screens/index.ts";
import { addr, balance, END, payment, repeat, reportOf, START, timeOf, transfer } from "../helpers/data.ts";
import { SideBySide, type WorldReports } from "../helpers/reports.ts";
import { listing } from "../helpers/scenarios.ts";

const m = addr("merchant");
const other = addr("other-merchant");
// Each case's world is built beside the others in one store and one build (`SideBySide`): its reports are
// what `reportOf` gives it alone (SIDE_BY_SIDE_ALONE=1 checks), at a fraction of the CPU.
const worlds = new SideBySide();

describe("tiny_repeat", () => {
  const ten = worlds.world(repeat(10, { payer: addr("farm"), payTo: m, amount: 100 }));
  it("flags ten identical payments below $0.001 from one wallet", async () => {
    const { report } = await ten(m);
    expect(report.flags).toEqual({ tiny_repeat: { tx: 10, usd: 0 } });
    expect(report.real_tx).toBe(0);
  });

  const nineWorld = worlds.world(repeat(9, { payer: addr("farm"), payTo: m, amount: 100 }));
  const twoWorld = worlds.world(repeat(2, { payer: addr("farm"), payTo: m, amount: 100 }));
  it("flags fewer than ten tiny payments in proportion to their number, the earliest first", async () => {
    // Nine payments: nine tenths of them (8.1, in whole payments 8); one payment fewer than ten hides one, not ten.
    const nine = await nineWorld(m);
    expect(nine.report.flags).toEqual({ tiny_repeat: { tx: 8, usd: 0 } });
    expect(nine.report.real_tx).toBe(1);
    // Two: a fifth of them is less than half a payment, so nothing.
    const two = await twoWorld(m);
    expect(two.report.flags).toEqual({});
  });

  const oneWallet = worlds.world(repeat(4, { payer: addr("one-wallet"), payTo: m, amount: 100 }));
  const spreadWorld = worlds.world(
    ["a", "b", "c", "d"]
      .map((x) => addr(`spread-${x}`))
      .flatMap((w, i) => [
        transfer(addr("spread-source"), w, 5_000_000, START - 100_000 + i),
        payment({ payer: w, payTo: m, amount: 100, block: START + 1_000 + i * 10_000 }),
      ]),
  );
  it("rounds the share over the cluster, so that spreading its payments over more wallets changes nothing", async () => {
    // Four payments: four tenths of them, 1.6, is 2 flagged, from one wallet or from four funded by one source
    // (per wallet, 0.4 of a payment each would round to none).
    const one = await oneWallet(m);
    expect(one.report.flags).toEqual({ tiny_repeat: { tx: 2, usd: 0 } });
    const spread = await spreadWorld(m);
    expect(spread.report.flags).toEqual({ tiny_repeat: { tx: 2, usd: 0 } });
  });

  const varying = worlds.world(
    Array.from({ length: 20 }, (_, i) => payment({ payer: addr("agent"), payTo: m, amount: 100 + i * 37 })),
  );
  it("flags tiny payments whose amounts vary, where nothing says what the merchant charges", async () => {
    // The 80% rule this replaced let a farm pass by varying its amounts.
    const { report } = await varying(m);
    expect(report.flags).toEqual({ tiny_repeat: { tx: 20, usd: 0.01 } });
  });

  const metered = worlds.world(
    Array.from({ length: 8 }, (_, b) =>
      Array.from({ length: 20 }, (_, i) =>
        payment({ payer: addr(`agent-${b}`), payTo: m, amount: 100 + ((i * 37 + b * 11) % 700) }),
      ),
    ).flat(),
  );
  it("leaves varied metered charges below $0.001 from independent buyers alone", async () => {
    const { report } = await metered(m);
    expect(report.flags).toEqual({});
  });

  // Eight independent buyers, 20 payments each below $0.001, at a merchant that lists $0.01.
  const farmOrAgents = (scheme: string) => [
    listing(m, "api/thing", 0.01),
    ...Array.from({ length: 8 }, (_, b) =>
      Array.from({ length: 20 }, (_, i) =>
        payment({ payer: addr(`agent-${b}`), payTo: m, amount: 100 + ((i * 37 + b * 11) % 700), scheme }),
      ),
    ).flat(),
  ];

  const bySchemes = Object.fromEntries(
    ["exact", "upto", "batch-settlement"].map((scheme) => [scheme, worlds.world(farmOrAgents(scheme))]),
  );
  it("flags exact payments far below every listed price, however many buyers pay them", async () => {
    // An exact amount is what the merchant's server asked for: buyers cannot make it a price.
    const { report } = await (bySchemes.exact as WorldReports)(m);
    expect(report.flags.tiny_repeat?.tx).toBe(160);
  });

  it("leaves the same amounts alone when they are metered charges (upto, batch-settlement)", async () => {
    for (const scheme of ["upto", "batch-settlement"]) {
      const { report } = await (bySchemes[scheme] as WorldReports)(m);
      expect(report.flags, scheme).toEqual({});
    }
  });

  const integration = worlds.world(repeat(500, { payer: addr("integration"), payTo: m, amount: 1_000 }));
  it("leaves a steady integration paying a listed $0.001 price alone", async () => {
    const { report } = await integration(m);
    expect(report.flags).toEqual({});
    expect(report.real_tx).toBe(500);
    expect(report.real_usd).toBe(0.5);
  });
});

describe("self_payment", () => {
  const own = worlds.world([
    payment({ payer: m, payTo: m, amount: 5_000_000 }),
    payment({ payer: addr("b"), payTo: m, amount: 1_000_000 }),
  ]);
  it("flags payments from the merchant's own wallet", async () => {
    const { report } = await own(m);
    expect(report.flags).toEqual({ self_payment: { tx: 1, usd: 5 } });
    expect(report.real_usd).toBe(1);
  });

  const ownTiny = worlds.world(repeat(12, { payer: m, payTo: m, amount: 100 }));
  it("takes precedence over tiny_repeat", async () => {
    const { report } = await ownTiny(m);
    expect(Object.keys(report.flags)).toEqual(["self_payment"]);
  });
});

describe("merchant_funded", () => {
  const funded = addr("funded");

  const refundAndMore = worlds.world([
    payment({ payer: funded, payTo: m, amount: 1_000_000, block: START + 10 }),
    // $1 gives back what the payer had paid (a refund: its own money); $3 more is the merchant's.
    transfer(m, funded, 4_000_000, START + 100),
    payment({ payer: funded, payTo: m, amount: 4_000_000, block: START + 200 }),
  ]);
  it("flags payments paid with what the merchant sent, beyond a refund of what the payer had paid", async () => {
    const { report } = await refundAndMore(m);
    expect(report.flags).toEqual({ merchant_funded: { tx: 1, usd: 4 } });
    expect(report.real_usd).toBe(1);
  });

  const oldestFirst = worlds.world([
    ...[START + 10, START + 20, START + 30].map((block) =>
      payment({ payer: funded, payTo: m, amount: 1_000_000, block }),
    ),
    transfer(m, funded, 5_000_000, START + 35),
    ...[40, 50, 60, 70, 80].map((d) =>
      payment({ payer: funded, payTo: m, amount: 1_000_000, block: START + d }),
    ),
  ]);
  it("spends the oldest money first: the refund respent goes round (ring), the merchant's money after it is its own", async () => {
    // Same payer, merchant, amount and day throughout: one group, counted payment by payment.
    const { report } = await oldestFirst(m);
    // $8 paid, $5 back: the $3 respent of the refund are counted again (ring), the $2 beyond it were the merchant's.
    expect(report.flags).toEqual({ merchant_funded: { tx: 2, usd: 2 }, ring: { tx: 3, usd: 3 } });
    expect([report.real_tx, report.real_usd]).toEqual([3, 3]);
  });

  const throughOtherMerchant = worlds.world([
    payment({ payer: addr("other-customer"), payTo: other, amount: 5_000_000, block: START - 500 }),
    transfer(m, other, 3_000_000, START - 400),
    transfer(other, funded, 5_000_000, START - 300),
    transfer(other, funded, 3_000_000, START - 200),
    payment({ payer: funded, payTo: m, amount: 5_000_000, block: START + 10 }),
    payment({ payer: funded, payTo: m, amount: 3_000_000, block: START + 20 }),
    // other is a merchant of the window too: its revenue is read because another merchant's money reached it.
    payment({ payer: addr("other-customer"), payTo: other, amount: 1_000, block: START + 30 }),
  ]);
  it("follows the merchant's money through another merchant's wallet, behind that merchant's own revenue", async () => {
    // Before the window, so that no cycle of the window's moves holds them: other's customer pays it $5, then
    // the merchant sends other $3; other sends the payer $5 (its revenue, first in) and then $3 (the merchant's).
    expect((await throughOtherMerchant(m)).report.flags).toEqual({ merchant_funded: { tx: 1, usd: 3 } });
  });

  const anyAge = worlds.world([
    transfer(m, funded, 10_000_000, START - 30 * 7 * 43_200),
    transfer(addr("someone"), addr("p2"), 10_000_000, START + 1),
    payment({ payer: funded, payTo: m, amount: 2_000_000 }),
    payment({ payer: addr("p2"), payTo: m, amount: 2_000_000 }),
  ]);
  it("counts the merchant's money at any age, and no other wallet's", async () => {
    expect((await anyAge(m)).report.flags).toEqual({ merchant_funded: { tx: 1, usd: 2 } });
  });

  const halfPayment = worlds.world([
    transfer(addr("own-savings"), funded, 1_500_000, START + 1),
    transfer(m, funded, 2_500_000, START + 2),
    // $1 own money; $0.50 own + $0.50 the merchant's (flagged: half); $1 the merchant's; $1 of $1 left.
    ...[10, 20, 30, 40].map((d) => payment({ payer: funded, payTo: m, amount: 1_000_000, block: START + d })),
  ]);
  it("flags half a payment's worth and up: the payment where the merchant's money runs out is rounded", async () => {
    const { report } = await halfPayment(m);
    expect(report.flags).toEqual({ merchant_funded: { tx: 3, usd: 3 } });
  });

  // The merchant's $5 arrived first, then $3 of the payer's own; the chain says the payer held $3 before
  // paying: the merchant's money went elsewhere (transfers the data does not hold).
  // Before the window, so that no cycle of the window's moves holds them.
  const spentOutOfSight = [
    transfer(m, funded, 5_000_000, START - 100),
    transfer(addr("own-savings"), funded, 3_000_000, START - 90),
    balance(funded, 3_000_000, START - 50),
    payment({ payer: funded, payTo: m, amount: 3_000_000, block: START + 10 }),
  ];
  const withBalance = worlds.world(spentOutOfSight);
  const withoutBalance = worlds.world(spentOutOfSight.slice(0, 2).concat(spentOutOfSight.slice(3)));
  it("trims what a stored balance says was spent out of sight, oldest first", async () => {
    expect((await withBalance(m)).report.flags).toEqual({});
    // Without the balance, the merchant's money is the oldest the wallet holds.
    expect((await withoutBalance(m)).report.flags).toEqual({
      merchant_funded: { tx: 1, usd: 3 },
    });
  });

  const arrivedOutOfSight = worlds.world([
    balance(funded, 4_000_000, START - 200),
    transfer(m, funded, 5_000_000, START - 100),
    payment({ payer: funded, payTo: m, amount: 4_000_000, block: START + 10 }),
    payment({ payer: funded, payTo: m, amount: 4_000_000, block: START + 20 }),
  ]);
  it("adds what a stored balance says arrived out of sight ahead of the merchant's money", async () => {
    expect((await arrivedOutOfSight(m)).report.flags).toEqual({ merchant_funded: { tx: 1, usd: 4 } });
  });
});

describe("ring", () => {
  const p = addr("ring-payer");

  const reciprocal = worlds.world([
    payment({ payer: p, payTo: m, amount: 10_000_000 }),
    payment({ payer: m, payTo: p, amount: 6_000_000 }),
  ]);
  it("flags reciprocal x402 payments on both sides", async () => {
    expect((await reciprocal(m)).report.flags).toEqual({ ring: { tx: 1, usd: 10 } });
    // For p, the merchant's $6 was p's own money coming back: merchant_funded comes before ring.
    expect((await reciprocal(p)).report.flags).toEqual({ merchant_funded: { tx: 1, usd: 6 } });
  });

  const x = addr("intermediary");
  const throughOne = worlds.world([
    payment({ payer: p, payTo: m, amount: 10_000_000, block: START + 10 }),
    transfer(m, x, 8_000_000, START + 20),
    transfer(x, p, 8_000_000, START + 30),
  ]);
  it("flags money returned through one intermediate wallet", async () => {
    expect((await throughOne(m)).report.flags).toEqual({ ring: { tx: 1, usd: 10 } });
  });

  const hub = addr("exchange");
  const throughHub = worlds.world([
    payment({ payer: p, payTo: m, amount: 10_000_000, block: START + 10 }),
    transfer(m, hub, 8_000_000, START + 20),
    transfer(hub, p, 8_000_000, START + 30),
    ...Array.from({ length: THRESHOLDS.hubMinCounterparties }, (_, i) =>
      transfer(hub, addr(`user${i}`), 1_000_000, START + 40),
    ),
  ]);
  it("does not follow hubs, and says so in exchange_flow_note", async () => {
    const { report } = await throughHub(m);
    expect(report.flags).toEqual({});
    expect(report.exchange_flow_note).toMatch(/^1 passing buyer wallet received USDC .* exchange/);
  });

  const early = addr("early-exchange");
  const earlyHub = worlds.world([
    // The merchant filled the hub a week before the window; the buyer was paid from it, then spent in it.
    transfer(m, early, 8_000_000, START - 300_000),
    transfer(early, p, 8_000_000, START - 200_000),
    payment({ payer: p, payTo: m, amount: 8_000_000, block: START + 10 }),
    ...Array.from({ length: THRESHOLDS.hubMinCounterparties }, (_, i) =>
      transfer(early, addr(`early-user${i}`), 1_000_000, START - 5_000),
    ),
  ]);
  it("says so too for the merchant's money that went into a hub before the window", async () => {
    const { report } = await earlyHub(m);
    expect(report.flags).toEqual({});
    expect(report.exchange_flow_note).toMatch(
      /^1 passing buyer wallet received USDC .* exchange, in this window or before it/,
    );
  });

  const [hubA, hubB] = [addr("exchange-a"), addr("exchange-b")];
  const [p2, p3, m2] = [addr("buyer-2"), addr("buyer-3"), addr("shop-2")];
  const twoHubs = worlds.world([
    payment({ payer: p, payTo: m, amount: 10_000_000, block: START + 10 }),
    payment({ payer: p2, payTo: m, amount: 10_000_000, block: START + 11 }),
    payment({ payer: p3, payTo: m2, amount: 10_000_000, block: START + 12 }),
    transfer(m, hubA, 8_000_000, START + 20),
    transfer(m2, hubB, 8_000_000, START + 20),
    transfer(hubA, p, 8_000_000, START + 30), // m -> A -> p: linked
    transfer(hubB, p2, 8_000_000, START + 30), // p2 got from m2's hub, and paid only m
    transfer(hubA, p3, 8_000_000, START + 30), // p3 got from m's hub, and paid only m2
    ...[hubA, hubB].flatMap((hub) =>
      Array.from({ length: THRESHOLDS.hubMinCounterparties }, (_, i) =>
        transfer(hub, addr(`${hub}-user${i}`), 1_000_000, START + 40),
      ),
    ),
  ]);
  it("links a buyer through one and the same hub, and only a buyer of that merchant", async () => {
    const { report } = await twoHubs(m);
    const { report: other } = await twoHubs(m2);
    expect(report.exchange_flow_note).toMatch(/^1 passing buyer wallet received USDC .* exchange/);
    expect(other.exchange_flow_note).toBeNull();
  });

  const smallRefund = worlds.world([
    payment({ payer: p, payTo: m, amount: 10_000_000, block: START + 10 }),
    transfer(m, p, 1_000_000, START + 20),
  ]);
  it("leaves a small refund alone", async () => {
    expect((await smallRefund(m)).report.flags).toEqual({});
  });
});

describe("prober", () => {
  const crawler = addr("crawler");
  const merchants = Array.from({ length: THRESHOLDS.proberMinMerchants }, (_, i) => addr(`shop${i}`));

  const crawled = worlds.world([
    ...merchants.map((shop) => payment({ payer: crawler, payTo: shop, amount: 10_000 })),
    payment({ payer: addr("customer"), payTo: merchants[0] ?? m, amount: 10_000 }),
  ]);
  it("flags a wallet paying many merchants once each with small amounts", async () => {
    const { report } = await crawled(merchants[0] ?? m);
    expect(report.flags).toEqual({ prober: { tx: 1, usd: 0.01 } });
    expect(report.real_buyers).toBe(1);
  });

  const fewerMerchants = worlds.world(
    merchants.slice(1).map((shop) => payment({ payer: crawler, payTo: shop, amount: 10_000 })),
  );
  it("leaves a wallet paying fewer merchants alone", async () => {
    expect((await fewerMerchants(merchants[1] ?? m)).report.flags).toEqual({});
  });

  const heavyAgent = worlds.world(
    merchants.flatMap((shop) => repeat(5, { payer: crawler, payTo: shop, amount: 10_000 })),
  );
  it("leaves an agent that uses many services heavily alone", async () => {
    expect((await heavyAgent(merchants[0] ?? m)).report.flags).toEqual({});
  });

  const abovePrice = worlds.world(
    merchants.map((shop) => payment({ payer: crawler, payTo: shop, amount: 60_000 })),
  );
  it("leaves payments above $0.05 alone", async () => {
    expect((await abovePrice(merchants[0] ?? m)).report.flags).toEqual({});
  });
});

describe("genuine demand", () => {
  const whale = worlds.world([
    payment({ payer: addr("whale"), payTo: m, amount: 950_000_000 }),
    ...repeat(50, { payer: addr("small"), payTo: m, amount: 1_000_000 }),
  ]);
  it("keeps a single large customer and reports its share", async () => {
    const { report } = await whale(m);
    expect(report.flags).toEqual({});
    expect(report.real_usd).toBe(1000);
    expect(report.top_buyer_share).toBe(0.95);
  });

  const unrelated = worlds.world([
    payment({ payer: addr("c"), payTo: m, amount: 3_000_000 }),
    payment({ payer: m, payTo: other, amount: 1_000_000 }),
  ]);
  it("does not flag a merchant's unrelated payments to another merchant", async () => {
    expect((await unrelated(m)).report.flags).toEqual({});
  });
});

it("keeps the window's edges: block START is outside, END inside", async () => {
  const records = [
    payment({ payer: addr("a"), payTo: m, amount: 1_000_000, block: START }),
    payment({ payer: addr("a"), payTo: m, amount: 2_000_000, block: START + 1 }),
    payment({ payer: addr("a"), payTo: m, amount: 4_000_000, block: END }),
    payment({ payer: addr("a"), payTo: m, amount: 8_000_000, block: END + 1 }),
  ];
  const { report } = await reportOf(
    [...records, { type: "checkpoint", chain: "base", block_number: END + 1, block_time: timeOf(END + 1) }],
    m,
  );
  expect(report.usd).toBe(6);
  expect(report.tx).toBe(2);
});
