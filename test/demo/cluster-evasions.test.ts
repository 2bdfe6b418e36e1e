/**
 * The cluster evasions the buyer simulator plays (src/demo/cluster-evasions.ts), and the genuine demand
 * that looks like them: who funds whom, in which shares and when, and who pays what. Whether the screens
 * flag the farms and leave the look-alikes alone is the demo test's (test/demo/demo.test.ts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  CLUSTER_EVASION_WALLET,
  CLUSTER_EVASIONS,
  clusterEvasionWallets,
  FEEDERS,
  toppedUpAgents,
} from "../../src/demo/cluster-evasions.ts";
import { EVASIONS, evasionTargets } from "../../src/demo/evasions.ts";
import { CLUSTER_EVASIONS_OFF, DEFAULT_MIX, loadMix, type Mix } from "../../src/demo/mix.ts";
import { planSlot, populationWallets } from "../../src/demo/plan.ts";
import {
  type Action,
  GENUINE,
  type PlanContext,
  SLOT_SECONDS,
  slotSecondsFor,
} from "../../src/demo/plan-types.ts";
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

const sized = (u: number) => ({ words: 20 + Math.floor(u * 381) });
const merchants = planMerchants({
  inference: [
    endpoint(0.002, "/chat"),
    { ...endpoint(0.04, "/big/upto"), scheme: "upto", sized },
    { ...endpoint(0.015, "/chat/upto"), scheme: "upto", sized, tiny },
  ],
});
/** Every move played, as the default mix does. */
const PLAYED: Mix = DEFAULT_MIX;
const context = (mix: Mix = PLAYED, slotSeconds = SLOT_SECONDS) => planContext(merchants, mix, slotSeconds);
const ctx = context();
const week = (c: PlanContext = ctx, weeks = 1): Action[] => playWeeks(c, weeks);
const actions = week();
const pays = actions.filter((a): a is Pay => a.type === "pay");
const transfers = actions.filter((a): a is Transfer => a.type === "transfer");
const slotOf = (a: Action, c: PlanContext = ctx) => Math.floor((a.at - c.epoch) / c.slotSeconds);
const into = (wallet: string) => transfers.filter((t) => t.to === wallet);
const received = (wallet: string) => into(wallet).reduce((s, t) => s + t.usd, 0);
const metered = { merchant: "inference", endpoint: 2 };
const farmPays = (b: string) => pays.filter((p) => p.behaviour === b);

describe("the cluster evasions", () => {
  it("pay the split farm's tiny charge at its metered endpoint, enough of it, none genuine", () => {
    expect(evasionTargets(ctx).metered).toEqual(metered);
    for (const b of CLUSTER_EVASIONS) {
      expect(EVASIONS.has(b)).toBe(true);
      expect(GENUINE.has(b)).toBe(false);
      const farm = farmPays(b);
      expect(farm.length, b).toBeGreaterThanOrEqual(14);
      expect(farm.every((p) => p.merchant === "inference" && p.endpoint === 2)).toBe(true);
      expect(new Set(farm.map((p) => JSON.stringify(p.input)))).toEqual(new Set([JSON.stringify(tiny(0))]));
      // No wallet is a farm alone: the farm is one only as a cluster.
      for (const from of new Set(farm.map((p) => p.from))) {
        expect(farm.filter((p) => p.from === from).length).toBeLessThan(THRESHOLDS.tinyRepeatMinPayments);
        const funded = Math.max(...into(from).map((t) => actions.indexOf(t)));
        expect(
          Math.min(...farm.filter((p) => p.from === from).map((p) => actions.indexOf(p))),
        ).toBeGreaterThan(funded);
      }
    }
  });

  it("fund the thirds farm's wallets a third from each of three feeders of one owner, on different days", () => {
    expect(
      actions.filter((a) => (a.type === "mint" || a.type === "transfer") && a.to === "thirds:owner"),
    ).toEqual([expect.objectContaining({ type: "mint" })]);
    const feeders = Array.from({ length: FEEDERS }, (_, f) => `thirds:feeder:${f}`);
    for (const f of feeders) expect(into(f).map((t) => t.from)).toEqual(["thirds:owner"]);
    const wallets = [...new Set(farmPays("thirds_farm").map((p) => p.from))].sort();
    expect(wallets).toEqual(
      Array.from({ length: DEFAULT_MIX.thirdsFarmWallets }, (_, k) => `thirds:${k}`).sort(),
    );
    const days = new Set<number>();
    for (const wallet of wallets) {
      const funding = into(wallet);
      expect(funding.map((t) => t.from).sort()).toEqual(feeders);
      // No sender gave it half of what it received, as the old funding rule asked.
      for (const t of funding) expect(t.usd / received(wallet)).toBeCloseTo(1 / 3, 6);
      expect(new Set(funding.map((t) => slotOf(t))).size).toBe(1);
      days.add(Math.floor(slotOf(funding[0] as Transfer) / 48));
      // Its money pays the endpoint's most: a metered call needs it.
      expect(received(wallet)).toBeGreaterThanOrEqual(0.015);
    }
    expect(days.size).toBe(wallets.length);
  });

  it("fund the top-up farm's wallets 40% from one owner and 60% from the exchange", () => {
    const wallets = [...new Set(farmPays("topup_farm").map((p) => p.from))];
    expect(wallets).toHaveLength(DEFAULT_MIX.topupFarmWallets);
    for (const wallet of wallets) {
      const from = (sender: string) =>
        into(wallet)
          .filter((t) => t.from === sender)
          .reduce((s, t) => s + t.usd, 0);
      expect(new Set(into(wallet).map((t) => t.from))).toEqual(new Set(["topup:owner", "exchange"]));
      expect(from("topup:owner") / received(wallet)).toBeCloseTo(0.4, 6);
      expect(from("exchange") / received(wallet)).toBeCloseTo(0.6, 6);
    }
    expect(
      actions.filter((a) => (a.type === "mint" || a.type === "transfer") && a.to === "topup:owner"),
    ).toEqual([expect.objectContaining({ type: "mint" })]);
  });

  it.each([7, 1])(
    "pay the burst farm out of the exchange alone within a minute, an hour apart from any other withdrawal (%i days)",
    (days) => {
      const c = context(PLAYED, slotSecondsFor(days));
      const all = week(c).filter((a): a is Transfer => a.type === "transfer");
      const burst = all.filter((t) => t.to.startsWith("burst:"));
      expect(burst).toHaveLength(PLAYED.burstFarmWallets);
      expect(PLAYED.burstFarmWallets).toBeGreaterThanOrEqual(THRESHOLDS.behaviourMinWallets);
      expect(new Set(burst.map((t) => t.from))).toEqual(new Set(["exchange"]));
      const times = burst.map((t) => t.at);
      expect(Math.max(...times) - Math.min(...times)).toBeLessThan(60);
      const others = all.filter((t) => t.from === "exchange" && !t.to.startsWith("burst:"));
      for (const t of others) {
        expect(Math.min(...times.map((at) => Math.abs(at - t.at))), t.to).toBeGreaterThan(3_600);
      }
    },
  );

  it("has genuine look-alikes: agents topped up by a friend each, regulars of the farms' endpoint, a company's agents", () => {
    // A friend each, minted its own money, less than a fifth of what the agent received, after the exchange.
    const topped = toppedUpAgents(DEFAULT_MIX);
    expect(topped).toHaveLength(DEFAULT_MIX.friendTopups);
    topped.forEach((agent, k) => {
      const friend = `friend:${k}`;
      expect(into(friend)).toEqual([]);
      expect(actions.filter((a) => a.type === "mint" && a.to === friend)).toHaveLength(1);
      const funding = into(agent);
      expect(funding.map((t) => t.from)).toEqual(["exchange", friend]);
      expect((funding[1] as Transfer).usd / received(agent)).toBeLessThan(0.2);
      expect(
        pays.some((p) => p.from === agent && actions.indexOf(p) < actions.indexOf(funding[1] as Transfer)),
      ).toBe(true);
    });
    // Regulars paid out with the agents, in the week's first minute, who send the farms' endpoint varied work.
    const payouts = transfers.filter(
      (t) => t.from === "exchange" && t.to.startsWith("agent:") && slotOf(t) === 0,
    );
    expect(payouts).toHaveLength(DEFAULT_MIX.agents);
    const minute = payouts.map((t) => t.at);
    const regulars = Array.from({ length: DEFAULT_MIX.meteredRegulars }, (_, k) => `regular:${k}`);
    expect(regulars.length).toBeGreaterThanOrEqual(5);
    for (const wallet of regulars) {
      const funding = into(wallet);
      expect(new Set(funding.map((t) => t.from))).toEqual(new Set(["exchange"]));
      for (const at of minute) expect(Math.abs((funding[0] as Transfer).at - at)).toBeLessThan(60);
      const own = pays.filter((p) => p.from === wallet);
      expect(own.length).toBe(DEFAULT_MIX.meteredRegularCallsPerWeek);
      for (const p of own) {
        expect(p).toMatchObject({ merchant: "inference", endpoint: 2, behaviour: "agent" });
        // Work of varying size, not the least the endpoint takes.
        expect((p.input as { words: number }).words).toBeGreaterThanOrEqual(20);
      }
    }
    // A company's agents, funded from one treasury, paying the merchant's lowest listed price.
    const company = Array.from({ length: DEFAULT_MIX.companyAgents }, (_, k) => `company:${k}`);
    for (const wallet of company) {
      expect(into(wallet).map((t) => t.from)).toEqual(["treasury"]);
      const own = pays.filter((p) => p.from === wallet);
      expect(own.length).toBe(DEFAULT_MIX.companyCallsPerWeek);
      expect(
        own.every((p) => p.merchant === "inference" && p.endpoint === 0 && p.behaviour === "agent"),
      ).toBe(true);
    }
    // Every look-alike payment is genuine demand.
    const lookAlikes = pays.filter((p) => /^(regular|company):/.test(p.from));
    expect(lookAlikes.every((p) => GENUINE.has(p.behaviour))).toBe(true);
  });

  it("add under 110 payments to a week, and keep what the screens need at any scale", () => {
    expect(pays.filter((p) => CLUSTER_EVASION_WALLET.test(p.from)).length).toBeLessThan(110);
    // A mix that plays the farms keeps their calls when scaled.
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "x402m-mix-")), "mix.json");
    fs.writeFileSync(file, JSON.stringify({ burstFarmWallets: PLAYED.burstFarmWallets }));
    for (const scale of [0.1, 0.25, 4]) {
      const c = context(loadMix(file, scale));
      const scaled = week(c).filter((a): a is Pay => a.type === "pay");
      for (const b of CLUSTER_EVASIONS) {
        expect(scaled.filter((p) => p.behaviour === b).length, `${b} at ${scale}`).toBeGreaterThanOrEqual(14);
      }
      for (const prefix of ["regular:", "company:"]) {
        expect(
          scaled.some((p) => p.from.startsWith(prefix)),
          `${prefix} at ${scale}`,
        ).toBe(true);
      }
    }
  });

  it("are not played where no merchant has tiny metered work", () => {
    const plain = merchants.map((m) => ({ ...m, endpoints: m.endpoints.map(({ tiny: _, ...e }) => e) }));
    const played = week({ ...ctx, merchants: plain });
    expect(
      played.filter(
        (a) =>
          ("from" in a && CLUSTER_EVASION_WALLET.test(a.from)) ||
          ((a.type === "mint" || a.type === "transfer") && CLUSTER_EVASION_WALLET.test(a.to)),
      ),
    ).toEqual([]);
  });

  it("leave the rest of the week as it was: a world saved before them resumes into the same actions", () => {
    const off = context({ ...PLAYED, ...CLUSTER_EVASIONS_OFF });
    const before = populationWallets(off.mix).filter((w) => !CLUSTER_EVASION_WALLET.test(w));
    const now = populationWallets(PLAYED);
    // Their wallets come last: every other wallet keeps the key it had.
    expect(now.slice(0, before.length)).toEqual(before);
    expect(now.slice(before.length)).toEqual(clusterEvasionWallets(PLAYED));
    const touches = (a: Action) =>
      ("from" in a && CLUSTER_EVASION_WALLET.test(a.from)) ||
      ((a.type === "mint" || a.type === "transfer") && CLUSTER_EVASION_WALLET.test(a.to));
    for (const slot of [0, 1, 3, 4, 6, 30, 31, 60, 200, 335, 336, 340]) {
      expect(planSlot(off, slot).filter(touches), `slot ${slot}`).toEqual([]);
      expect(
        planSlot(ctx, slot).filter((a) => !touches(a)),
        `slot ${slot}`,
      ).toEqual(planSlot(off, slot));
    }
  });
});
