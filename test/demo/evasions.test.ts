/**
 * The evasions the buyer simulator plays beside genuine demand (src/demo/evasions.ts), and the exchange's
 * depositors: who is funded by whom, in which order, and who pays whom. Whether the screens catch them is
 * `simulate --check`'s job (test/demo/demo.test.ts).
 */
import { describe, expect, it } from "vitest";
import { CLUSTER_EVASION_WALLET, CLUSTER_EVASIONS } from "../../src/demo/cluster-evasions.ts";
import { CHAIN_LENGTH, EVASIONS, evasionTargets } from "../../src/demo/evasions.ts";
import { CLUSTER_EVASIONS_OFF, DEFAULT_MIX, EVASIONS_OFF, loadMix, type Mix } from "../../src/demo/mix.ts";
import { planSlot, populationWallets } from "../../src/demo/plan.ts";
import { type Action, GENUINE, type PlanContext } from "../../src/demo/plan-types.ts";
import { THRESHOLDS } from "../../src/reports/index.ts";
import {
  endpoint,
  type Pay,
  planContext,
  planMerchants,
  playWeeks,
  type Transfer,
  tiny,
} from "./plan-world.ts";

const merchants = planMerchants({
  inference: [
    endpoint(0.002, "/chat"),
    // A tier whose least work is not tiny comes first: the farms take the first that has some.
    { ...endpoint(0.04, "/big/upto"), scheme: "upto", sized: (u) => ({ u }) },
    { ...endpoint(0.015, "/chat/upto"), scheme: "upto", sized: (u) => ({ u }), tiny },
  ],
});
const context = (mix: Mix = DEFAULT_MIX) => planContext(merchants, mix);
const ctx = context();
const targets = evasionTargets(ctx);
const week = (c: PlanContext = ctx): Action[] => playWeeks(c);
const actions = week();
const pays = actions.filter((a): a is Pay => a.type === "pay");
const transfers = actions.filter((a): a is Transfer => a.type === "transfer");
const slotOf = (a: Action) => Math.floor((a.at - ctx.epoch) / ctx.slotSeconds);
const wallets = (prefix: string) => [
  ...new Set(pays.filter((p) => p.from.startsWith(prefix)).map((p) => p.from)),
];

describe("the exchange's depositors", () => {
  it("are unrelated wallets, each minted its own money, that deposit before the exchange pays anyone out", () => {
    const slot0 = planSlot(ctx, 0);
    const depositors = slot0.filter((a): a is Transfer => a.type === "transfer" && a.to === "exchange");
    // Enough clusters of senders for the screens' hub rule, each a cluster of its own.
    expect(depositors.length).toBe(DEFAULT_MIX.exchangeDepositors);
    expect(depositors.length).toBeGreaterThanOrEqual(THRESHOLDS.hubMinSenders);
    expect(new Set(depositors.map((d) => d.from)).size).toBe(depositors.length);
    for (const d of depositors) {
      expect(d.from).toMatch(/^depositor:\d+$/);
      const minted = slot0.findIndex((a) => a.type === "mint" && a.to === d.from);
      expect(minted).toBeGreaterThanOrEqual(0);
      expect(minted).toBeLessThan(slot0.indexOf(d));
      expect(slot0.find((a) => a.type === "mint" && a.to === d.from)).toMatchObject({ usd: d.usd });
      // Nothing else ever reaches it: no funder links it to another depositor.
      expect(transfers.filter((t) => t.to === d.from)).toEqual([]);
    }
    const lastDeposit = Math.max(...depositors.map((d) => slot0.indexOf(d)));
    const firstPayout = slot0.findIndex((a) => a.type === "transfer" && a.from === "exchange");
    expect(firstPayout).toBeGreaterThan(lastDeposit);
    // The module's week (`actions`), planned once for every test here.
    expect(transfers.filter((t) => t.to === "exchange")).toHaveLength(depositors.length);
  });
});

describe("the evasions", () => {
  it("are played against merchants with genuine demand that play no other pattern, and none is genuine", () => {
    const { genuineOnly, ...roles } = ctx.roles;
    expect(genuineOnly).toEqual(["inference"]);
    const others = Object.values(roles).flat();
    for (const id of [targets.deep, targets.dormant, targets.distributor]) {
      expect(others).not.toContain(id);
      expect(pays.filter((p) => p.merchant === id && GENUINE.has(p.behaviour)).length, id).toBeGreaterThan(0);
    }
    expect(new Set([targets.deep, targets.dormant, targets.distributor]).size).toBe(3);
    expect(targets.metered).toEqual({ merchant: "inference", endpoint: 2 });
    expect(pays.filter((p) => p.merchant === "inference" && p.behaviour === "agent").length).toBeGreaterThan(
      0,
    );
    for (const b of EVASIONS) {
      expect(GENUINE.has(b)).toBe(false);
      // The cluster evasions' own test plays them.
      if (CLUSTER_EVASIONS.has(b)) continue;
      expect(pays.filter((p) => p.behaviour === b).length, b).toBeGreaterThan(0);
    }
  });

  it("pass a merchant's money through five private wallets, in order, to a buyer that then pays it", () => {
    const hops = transfers.filter((t) => t.behaviour === "deep_chain");
    const path = [
      `merchant:${targets.deep}`,
      ...Array.from({ length: CHAIN_LENGTH }, (_, k) => `chain:${k}`),
    ];
    expect(hops.map((t) => [t.from, t.to])).toEqual(
      [...path, "chain:payer"].slice(1).map((to, i) => [path[i], to]),
    );
    // One more than the four transfers the funding screen used to follow, and more.
    expect(hops.length).toBeGreaterThan(4);
    expect(new Set(hops.map(slotOf)).size).toBe(1);
    expect(hops.map((t) => actions.indexOf(t))).toEqual(
      [...hops.map((t) => actions.indexOf(t))].sort((a, b) => a - b),
    );
    const chainPays = pays.filter((p) => p.from === "chain:payer");
    expect(chainPays).toHaveLength(DEFAULT_MIX.deepChainCallsPerWeek);
    expect(chainPays.every((p) => p.merchant === targets.deep && p.behaviour === "deep_chain")).toBe(true);
    expect(Math.min(...chainPays.map((p) => actions.indexOf(p)))).toBeGreaterThan(
      actions.indexOf(hops.at(-1) as Transfer),
    );
    // The private wallets only pass the money on.
    expect(pays.filter((p) => p.from.startsWith("chain:") && p.from !== "chain:payer")).toEqual([]);
  });

  it("fund wallets in the chain's first slots that stay silent for days, then pay the merchant", () => {
    const funding = transfers.filter((t) => t.behaviour === "dormant_funded");
    expect(funding.map((t) => t.to).sort()).toEqual(wallets("dormant:").sort());
    expect(funding).toHaveLength(DEFAULT_MIX.dormantWallets);
    for (const t of funding) {
      expect(t.from).toBe(`merchant:${targets.dormant}`);
      expect(slotOf(t)).toBeLessThanOrEqual(2);
      const own = pays.filter((p) => p.from === t.to);
      expect(own).toHaveLength(DEFAULT_MIX.dormantCallsPerWeek);
      expect(own.every((p) => p.merchant === targets.dormant && p.behaviour === "dormant_funded")).toBe(true);
      // Four days and more of silence.
      expect(Math.min(...own.map((p) => p.at)) - t.at).toBeGreaterThan(4 * 86_400);
    }
  });

  it("feed a distributor from the merchant alone, which pays many wallets that each pay the merchant a few times", () => {
    const fed = transfers.filter((t) => t.to === "distributor");
    expect(fed.map((t) => t.from)).toEqual([`merchant:${targets.distributor}`]);
    const fanned = transfers.filter((t) => t.from === "distributor");
    expect(new Set(fanned.map((t) => t.to)).size).toBe(DEFAULT_MIX.distributorWallets);
    expect(fanned.reduce((s, t) => s + t.usd, 0)).toBeCloseTo(fed[0]?.usd ?? 0, 6);
    expect(actions.indexOf(fed[0] as Transfer)).toBeLessThan(
      Math.min(...fanned.map((t) => actions.indexOf(t))),
    );
    for (const t of fanned) {
      const own = pays.filter((p) => p.from === t.to);
      expect(own, t.to).toHaveLength(DEFAULT_MIX.distributorCallsPerWeek);
      expect(own.every((p) => p.merchant === targets.distributor && p.behaviour === "distributor")).toBe(
        true,
      );
      expect(Math.min(...own.map((p) => actions.indexOf(p)))).toBeGreaterThan(actions.indexOf(t));
    }
  });

  it("split a farm of tiny metered charges over wallets of one farmer, none of them a farm alone", () => {
    expect(actions.filter((a) => (a.type === "mint" || a.type === "transfer") && a.to === "farmer")).toEqual([
      expect.objectContaining({ type: "mint" }),
    ]);
    const funding = transfers.filter((t) => t.from === "farmer");
    expect(funding.map((t) => t.to).sort()).toEqual(wallets("split:").sort());
    expect(funding).toHaveLength(DEFAULT_MIX.splitFarmWallets);
    const farm = pays.filter((p) => p.behaviour === "split_farm");
    expect(farm.every((p) => p.merchant === "inference" && p.endpoint === 2)).toBe(true);
    expect(new Set(farm.map((p) => JSON.stringify(p.input)))).toEqual(new Set([JSON.stringify(tiny(0))]));
    expect(farm.length).toBeGreaterThanOrEqual(THRESHOLDS.tinyRepeatMinPayments);
    for (const t of funding) {
      const own = farm.filter((p) => p.from === t.to);
      expect(own.length).toBeLessThan(THRESHOLDS.tinyRepeatMinPayments);
      expect(Math.min(...own.map((p) => actions.indexOf(p)))).toBeGreaterThan(actions.indexOf(t));
    }
  });

  it("vary a farm's tiny metered charges, from a wallet the exchange funds", () => {
    expect(transfers.filter((t) => t.to === "varied").map((t) => t.from)).toEqual(["exchange"]);
    const farm = pays.filter((p) => p.behaviour === "varied_farm");
    expect(farm.every((p) => p.from === "varied" && p.merchant === "inference" && p.endpoint === 2)).toBe(
      true,
    );
    expect(farm.length).toBeGreaterThanOrEqual(THRESHOLDS.tinyRepeatMinPayments);
    expect(new Set(farm.map((p) => JSON.stringify(p.input))).size).toBeGreaterThan(3);
  });

  it("add under 120 payments to a default week, and keep what the screens need at any scale", () => {
    // The cluster evasions' are counted in test/demo/cluster-evasions.test.ts.
    const own = (b: Pay["behaviour"]) => EVASIONS.has(b) && !CLUSTER_EVASIONS.has(b);
    expect(pays.filter((p) => own(p.behaviour)).length).toBeLessThan(120);
    for (const scale of [0.1, 0.25, 4]) {
      const c = context(loadMix(undefined, scale));
      const scaled = week(c).filter((a): a is Pay => a.type === "pay");
      for (const b of ["split_farm", "varied_farm"]) {
        expect(scaled.filter((p) => p.behaviour === b).length, `${b} at ${scale}`).toBeGreaterThanOrEqual(
          THRESHOLDS.tinyRepeatMinPayments,
        );
      }
      for (const b of EVASIONS)
        if (!CLUSTER_EVASIONS.has(b))
          expect(
            scaled.some((p) => p.behaviour === b),
            `${b} at ${scale}`,
          ).toBe(true);
    }
  });

  it("are not played where no merchant has tiny metered work: the farms need a charge that can be tiny", () => {
    const plain = merchants.map((m) => ({ ...m, endpoints: m.endpoints.map(({ tiny: _, ...e }) => e) }));
    const c = { ...ctx, merchants: plain };
    const played = week(c).filter((a): a is Pay => a.type === "pay");
    expect(played.filter((p) => p.behaviour.endsWith("_farm") && p.behaviour !== "tiny_farm")).toEqual([]);
    expect(played.filter((p) => p.behaviour === "distributor").length).toBeGreaterThan(0);
  });

  it("leave the rest of the week as it was: a world saved before them resumes into the same actions", () => {
    // Saved before the evasions, it was saved before the cluster evasions too: it plays neither.
    const off = context({ ...DEFAULT_MIX, ...EVASIONS_OFF, ...CLUSTER_EVASIONS_OFF });
    const old = /^(depositor|chain|dormant|distributor|fanned|farmer|split|varied)(:|$)/;
    const evasionWallet = { test: (w: string) => old.test(w) || CLUSTER_EVASION_WALLET.test(w) };
    // Their wallets come last: every other wallet keeps the key it had.
    // The channels' wallets come after theirs (test/demo/channels.test.ts).
    const channel = /^channel(:|-)/;
    const before = populationWallets(off.mix).filter((w) => !evasionWallet.test(w) && !channel.test(w));
    const now = populationWallets(DEFAULT_MIX).filter((w) => !channel.test(w));
    expect(now.slice(0, before.length)).toEqual(before);
    expect(now.slice(before.length).every((w) => evasionWallet.test(w))).toBe(true);
    const targetWallets = [targets.deep, targets.dormant, targets.distributor].map((id) => `merchant:${id}`);
    const isEvasion = (a: Action) =>
      ("behaviour" in a && EVASIONS.has(a.behaviour)) ||
      (a.type === "pay" && evasionWallet.test(a.from)) ||
      ((a.type === "mint" || a.type === "transfer") && evasionWallet.test(a.to)) ||
      (a.type === "transfer" && evasionWallet.test(a.from)) ||
      (a.type === "mint" && targetWallets.includes(a.to));
    for (const slot of [0, 1, 2, 8, 20, 21, 96, 200, 240, 335, 336]) {
      expect(planSlot(off, slot).filter(isEvasion), `slot ${slot}`).toEqual([]);
      expect(
        planSlot(ctx, slot).filter((a) => !isEvasion(a)),
        `slot ${slot}`,
      ).toEqual(planSlot(off, slot));
    }
  });
});
