/**
 * Payment channels in the demo's plan (src/demo/channels.ts): the channel agents' sessions (calls through a
 * channel of the day, a refund after them), the channel farm a merchant funds, and a world saved before
 * channels resuming into the actions it had. What the chain and the reports make of them is the demo
 * test's (test/demo/demo.test.ts).
 */
import { describe, expect, it } from "vitest";
import { CHANNEL_FARM, SESSION_SLOTS } from "../../src/demo/channels.ts";
import { CLUSTER_EVASION_WALLET } from "../../src/demo/cluster-evasions.ts";
import { CHANNELS_OFF, DEFAULT_MIX, loadMix, type Mix } from "../../src/demo/mix.ts";
import { planSlot, populationWallets } from "../../src/demo/plan.ts";
import {
  type Action,
  GENUINE,
  type PlanContext,
  type PlanMerchant,
  SLOT_SECONDS,
} from "../../src/demo/plan-types.ts";
import { endpoint, type Pay, planContext, planMerchants, playWeeks } from "./plan-world.ts";

const merchants = planMerchants({
  utility: [
    { ...endpoint(0.001), channels: true },
    { ...endpoint(0.01), channels: true },
  ],
  inference: [{ ...endpoint(0.015, "/chat/upto"), scheme: "upto", channels: true, sized: (u) => ({ u }) }],
});
const context = (mix: Mix = DEFAULT_MIX, list: PlanMerchant[] = merchants) => planContext(list, mix);
const ctx = context();
const week = (c: PlanContext = ctx, weeks = 1): Action[] => playWeeks(c, weeks);
type Refund = Extract<Action, { type: "refund" }>;
const isChannelWallet = (id: string) => /^channel(:|-)/.test(id);
const touchesChannels = (a: Action) =>
  ("session" in a && a.session !== undefined) ||
  isChannelWallet("from" in a ? a.from : "") ||
  ((a.type === "mint" || a.type === "transfer") && isChannelWallet(a.to)) ||
  // The farm's merchant is minted what it pays the farm.
  (a.type === "mint" && a.to === "merchant:utility");

describe("payment channels in the plan", () => {
  const actions = week(ctx, 2);
  const calls = actions.filter((a): a is Pay => a.type === "pay" && a.session !== undefined);
  const refunds = actions.filter((a): a is Refund => a.type === "refund");

  it("are paid by the channel agents and the farm only, on endpoints that offer channels, in the day's session", () => {
    expect(new Set(calls.map((c) => c.from))).toEqual(
      new Set(["channel:0", "channel:1", "channel:2", CHANNEL_FARM]),
    );
    for (const c of calls) {
      const m = merchants.find((x) => x.id === c.merchant) as PlanMerchant;
      expect(m.endpoints[c.endpoint]?.channels, `${c.merchant}#${c.endpoint}`).toBe(true);
      const slot = Math.floor((c.at - ctx.epoch) / SLOT_SECONDS);
      expect(c.session).toBe(Math.floor(slot / SESSION_SLOTS));
    }
    // Each agent keeps to one merchant, the agents spread over the merchants that offer channels.
    const merchantOf = (from: string) => new Set(calls.filter((c) => c.from === from).map((c) => c.merchant));
    expect([merchantOf("channel:0"), merchantOf("channel:1")]).toEqual([
      new Set(["utility"]),
      new Set(["inference"]),
    ]);
    // Metered calls send work of varying size.
    expect(calls.some((c) => c.merchant === "inference" && c.input !== undefined)).toBe(true);
    expect(calls.filter((c) => c.from.startsWith("channel:")).every((c) => GENUINE.has(c.behaviour))).toBe(
      true,
    );
    expect(calls.filter((c) => c.from === CHANNEL_FARM).every((c) => c.behaviour === "merchant_funded")).toBe(
      true,
    );
  });

  it("end every session with a refund after its last call, one a day per payer", () => {
    for (const c of calls) {
      const ending = refunds.filter(
        (r) => r.from === c.from && r.session === c.session && r.merchant === c.merchant,
      );
      expect(ending, `${c.from} session ${c.session}`).toHaveLength(1);
      const refund = ending[0] as Refund;
      expect(refund.at).toBeGreaterThanOrEqual(c.at);
      expect(actions.indexOf(refund)).toBeGreaterThan(actions.indexOf(c));
      expect(refund.behaviour).toBe(c.behaviour);
    }
    // A refund at every day's end, whether or not the day had calls (the simulator skips one with none).
    expect(refunds.filter((r) => r.from === "channel:0")).toHaveLength(14);
  });

  it("fund the agents from the exchange, and the farm from the merchant it pays, before their calls", () => {
    const funded = (to: string) =>
      actions.filter((a): a is Extract<Action, { type: "transfer" }> => a.type === "transfer" && a.to === to);
    expect(funded("channel:0").map((t) => t.from)).toEqual(["exchange", "exchange"]);
    const farm = funded(CHANNEL_FARM);
    expect(farm.map((t) => [t.from, t.behaviour])).toEqual([
      ["merchant:utility", "merchant_funded"],
      ["merchant:utility", "merchant_funded"],
    ]);
    const firstCall = calls.find((c) => c.from === CHANNEL_FARM) as Pay;
    expect(actions.indexOf(farm[0] as Action)).toBeLessThan(actions.indexOf(firstCall));
    expect(new Set(calls.filter((c) => c.from === CHANNEL_FARM).map((c) => c.merchant))).toEqual(
      new Set(["utility"]),
    );
  });

  it("leave the rest of the week as it was: a world saved before them resumes into the same actions", () => {
    const off = context({ ...DEFAULT_MIX, ...CHANNELS_OFF });
    // The cluster evasions' wallets come after the channels' (test/demo/cluster-evasions.test.ts).
    const notCluster = (w: string) => !CLUSTER_EVASION_WALLET.test(w);
    const before = populationWallets(off.mix).filter(notCluster);
    const now = populationWallets(DEFAULT_MIX).filter(notCluster);
    expect(now.slice(0, before.length)).toEqual(before);
    expect(now.slice(before.length)).toEqual(["channel:0", "channel:1", "channel:2", CHANNEL_FARM]);
    for (const slot of [0, 1, 2, 47, 48, 96, 200, 335, 336, 383]) {
      expect(planSlot(off, slot).filter(touchesChannels), `slot ${slot}`).toEqual([]);
      expect(
        planSlot(ctx, slot).filter((a) => !touchesChannels(a)),
        `slot ${slot}`,
      ).toEqual(planSlot(off, slot));
    }
  });

  it("are not played where no merchant offers channels, and the farm keeps enough calls at any scale", () => {
    const plain = merchants.map((m) => ({ ...m, endpoints: m.endpoints.map(({ channels: _, ...e }) => e) }));
    expect(week(context(DEFAULT_MIX, plain)).filter(touchesChannels)).toEqual([]);
    expect(loadMix(undefined, 0.1).channelFarmCallsPerWeek).toBeGreaterThanOrEqual(6);
    expect(loadMix(undefined, 0.1).channelCallsPerWeek).toBe(3);
  });
});
