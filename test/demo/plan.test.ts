import { describe, expect, it } from "vitest";
import { EVASIONS } from "../../src/demo/evasions.ts";
import { DEFAULT_MIX, loadMix } from "../../src/demo/mix.ts";
import { chooseRoles, planSlot, populationWallets } from "../../src/demo/plan.ts";
import { spread } from "../../src/demo/plan-picks.ts";
import {
  type Action,
  GENUINE,
  type PlanContext,
  type PlanMerchant,
  SLOT_SECONDS,
  SLOTS_PER_WEEK,
  slotSecondsFor,
} from "../../src/demo/plan-types.ts";
import { endpoint, planContext, planMerchants, playWeeks } from "./plan-world.ts";

const merchants = planMerchants();
const ctx = planContext(merchants);
const week = (c: PlanContext = ctx, from = 0): Action[] => playWeeks(c, 1, from);
const payments = (actions: Action[]) =>
  actions.filter((a): a is Extract<Action, { type: "pay" }> => a.type === "pay");

describe("the simulated week", () => {
  it("played in fewer days is the same week: the same actions, at compressed times", () => {
    expect(slotSecondsFor(7)).toBe(SLOT_SECONDS);
    const oneDay = { ...ctx, slotSeconds: slotSecondsFor(1) };
    // Times that the shorter slot makes equal may swap two actions of a slot: compared as a set.
    const strip = (actions: Action[]) => actions.map(({ at: _, ...rest }) => JSON.stringify(rest)).sort();
    const compressed = week(oneDay);
    expect(strip(compressed)).toEqual(strip(week()));
    const last = Math.max(...compressed.map((a) => a.at));
    expect(last - ctx.epoch).toBeLessThan(86_400);
  });

  it("is the same for the same seed and slot, and differs for another seed", () => {
    expect(planSlot(ctx, 17)).toEqual(planSlot({ ...ctx }, 17));
    const other = { ...ctx, mix: { ...DEFAULT_MIX, seed: 7 } };
    expect(payments(week(other)).length).not.toBe(payments(week()).length);
  });

  it.each([7, 1])(
    "keeps every action inside its slot, by time, funding before payments (week in %i days)",
    (days) => {
      const c = { ...ctx, slotSeconds: slotSecondsFor(days) };
      for (const slot of [0, 1, 48, 96, 200, 335, 336]) {
        const actions = planSlot(c, slot);
        const start = c.epoch + slot * c.slotSeconds;
        for (const a of actions) {
          expect(a.at).toBeGreaterThanOrEqual(start);
          expect(a.at).toBeLessThan(start + c.slotSeconds);
        }
        expect(actions.map((a) => a.at)).toEqual([...actions.map((a) => a.at)].sort((x, y) => x - y));
        const firstPay = actions.findIndex((a) => a.type === "pay");
        const lastFunding = actions.findLastIndex((a) => a.type !== "pay");
        if (firstPay >= 0 && lastFunding >= 0) expect(lastFunding).toBeLessThan(firstPay);
      }
    },
  );

  it("plays each pattern the screens look for, with enough of it in a week", () => {
    const pays = payments(week());
    const by = (b: string) => pays.filter((p) => p.behaviour === b);
    const { roles } = ctx;
    // tiny_repeat needs 10 or more sub-$0.001 payments of one amount from one wallet.
    expect(by("tiny_farm").length).toBe(DEFAULT_MIX.farmCallsPerWeek);
    expect(new Set(by("tiny_farm").map((p) => `${p.merchant}#${p.endpoint}`))).toEqual(
      new Set([`${roles.farm}#0`]),
    );
    expect(by("self_payment").every((p) => p.from === `merchant:${p.merchant}`)).toBe(true);
    expect(by("self_payment").filter((p) => p.merchant === roles.selfPayer)).toHaveLength(
      DEFAULT_MIX.selfPaymentsPerWeek,
    );
    // The prober pays every merchant exactly once a week.
    expect(
      by("prober")
        .map((p) => p.merchant)
        .sort(),
    ).toEqual(merchants.map((m) => m.id).sort());
    // The pair pays each other equally.
    const [a, b] = roles.pair;
    expect(by("ring").filter((p) => p.from === `merchant:${a}`).length).toBe(
      by("ring").filter((p) => p.from === `merchant:${b}`).length,
    );
    // The funder's wallets are funded before they pay.
    const actions = week();
    const funded = actions.findIndex((x) => x.type === "transfer" && x.behaviour === "merchant_funded");
    const firstFundedPay = actions.findIndex((x) => x.type === "pay" && x.behaviour === "merchant_funded");
    expect(funded).toBeGreaterThanOrEqual(0);
    expect(funded).toBeLessThan(firstFundedPay);
    // The indexer keeps a plain transfer when a side was seen in an x402 payment before it: the funder is
    // paid before it funds, the ring's payer pays before the money comes back to it. The evasions and the
    // exchange's depositors rely on its funding history instead, as a gamer would make it.
    const seenBefore = (wallet: string, index: number) =>
      actions
        .slice(0, index)
        .some((x) => x.type === "pay" && (x.from === wallet || `merchant:${x.merchant}` === wallet));
    actions.forEach((x, i) => {
      if (
        x.type === "transfer" &&
        x.from !== "exchange" &&
        !EVASIONS.has(x.behaviour) &&
        x.to !== "exchange"
      ) {
        expect(seenBefore(x.from, i) || seenBefore(x.to, i), `${x.from} -> ${x.to}`).toBe(true);
      }
    });
  });

  it("has genuine agents buy only everyday prices from a few merchants, never the farm's", () => {
    const agents = payments(week()).filter((p) => p.behaviour === "agent");
    expect(agents.length).toBeGreaterThan(DEFAULT_MIX.agents * DEFAULT_MIX.agentCallsPerWeek * 0.6);
    for (const p of agents) {
      const price = merchants.find((m) => m.id === p.merchant)?.endpoints[p.endpoint]?.price ?? -1;
      expect(price).toBeGreaterThanOrEqual(0.001);
      expect(price).toBeLessThanOrEqual(0.05);
    }
    const perAgent = new Map<string, Set<string>>();
    for (const p of agents) perAgent.set(p.from, (perAgent.get(p.from) ?? new Set()).add(p.merchant));
    for (const set of perAgent.values()) expect(set.size).toBeLessThanOrEqual(4);
    expect([...GENUINE]).toEqual(["agent", "large_customer", "integration"]);
  });

  it("has agents send metered (upto) endpoints work of varying size, and keeps every pattern off them", () => {
    const sized = (u: number) => ({ words: Math.floor(u * 100) });
    const metered: PlanMerchant = {
      id: "inference",
      endpoints: [
        endpoint(0.002, "/chat"),
        { ...endpoint(0.015, "/chat/upto"), scheme: "upto", sized },
        // Listed below $0.001 as a maximum only: not a price a farm or anyone else pays as listed.
        { ...endpoint(0.0005, "/tiny/upto"), scheme: "upto", sized },
      ],
    };
    const all = [...merchants, metered];
    const c: PlanContext = { ...ctx, merchants: all, roles: chooseRoles(all, "utility", ["inference"]) };
    const { genuineOnly, ...patterns } = c.roles;
    expect(Object.values(patterns).flat()).not.toContain("inference");
    expect(genuineOnly).toEqual(["inference"]);
    const pays = payments(week(c));
    const isUpto = (p: (typeof pays)[number]) =>
      all.find((m) => m.id === p.merchant)?.endpoints[p.endpoint]?.scheme === "upto";
    const upto = pays.filter(isUpto);
    expect(upto.length).toBeGreaterThan(DEFAULT_MIX.meteredCallsPerWeek * 0.5);
    expect(upto.length).toBeLessThan(DEFAULT_MIX.meteredCallsPerWeek * 1.5);
    expect(new Set(upto.map((p) => p.behaviour))).toEqual(new Set(["agent"]));
    expect(upto.every((p) => p.from.startsWith("agent:") && p.input !== undefined)).toBe(true);
    expect(new Set(upto.map((p) => JSON.stringify(p.input))).size).toBeGreaterThan(upto.length * 0.8);
    // Everything else pays listed prices: the prober the exact chat, agents' everyday calls exact ones.
    expect(pays.filter((p) => !isUpto(p) && p.input !== undefined)).toEqual([]);
    expect(
      pays.filter((p) => p.behaviour === "prober" && p.merchant === "inference").map((p) => p.endpoint),
    ).toEqual([0]);
  });

  it("repeats weekly patterns after the first week, without the first week's mints", () => {
    const second = week(ctx, SLOTS_PER_WEEK);
    expect(payments(second).filter((p) => p.behaviour === "prober")).toHaveLength(merchants.length);
    expect(second.filter((a) => a.type === "mint" && a.to === "exchange")).toHaveLength(0);
  });

  it("spreads n events a week evenly", () => {
    for (const n of [1, 7, 24, 336, 1000]) {
      const total = Array.from({ length: SLOTS_PER_WEEK }, (_, w) => spread(n, w, 0.3)).reduce(
        (s, x) => s + x,
        0,
      );
      expect(total).toBe(n);
    }
  });

  it("names every population wallet once", () => {
    const ids = populationWallets(DEFAULT_MIX);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => id.startsWith("customer:")).length).toBeGreaterThanOrEqual(50);
  });
});

describe("loadMix", () => {
  it("scales calls but keeps the farm above the screen's minimum", () => {
    const small = loadMix(undefined, 0.1);
    expect(small.agentCallsPerWeek).toBe(Math.round(DEFAULT_MIX.agentCallsPerWeek * 0.1));
    expect(small.farmCallsPerWeek).toBeGreaterThanOrEqual(14);
    expect(() => loadMix(undefined, 0)).toThrow(/--scale/);
    expect(() => loadMix("/nonexistent/mix.json")).toThrow(/--mix/);
  });

  it("has agents buy from every merchant that takes genuine demand only, whatever the seed and scale", () => {
    const data: PlanMerchant[] = [
      { id: "social", endpoints: [endpoint(0.0025, "/tweet"), endpoint(0.01, "/page")] },
      // The paid proxy: one endpoint, its own wallet.
      { id: "social-proxy", endpoints: [endpoint(0.005, "/pay/:agent_id")] },
    ];
    const all = [...merchants, ...data];
    const genuineOnly = data.map((m) => m.id);
    for (const seed of [1, 2, 3, 402]) {
      const mix = { ...loadMix(undefined, 0.5), seed };
      const c: PlanContext = { ...ctx, mix, merchants: all, roles: chooseRoles(all, "utility", genuineOnly) };
      const pays = payments(week(c));
      for (const id of genuineOnly) {
        const bought = pays.filter((p) => p.merchant === id && p.behaviour === "agent");
        // Once a day at least, from the agent whose favourite it is.
        expect(bought.length, `${id}, seed ${seed}`).toBeGreaterThanOrEqual(7);
      }
      // Only what the screens let pass, and the prober's one call.
      const screened = pays.filter((p) => genuineOnly.includes(p.merchant) && !GENUINE.has(p.behaviour));
      expect(new Set(screened.map((p) => p.behaviour))).toEqual(new Set(["prober"]));
    }
  });
});
