/**
 * The world the demo's plan tests play (src/demo/plan.ts): a utility API, three small utilities, 17 shops
 * and, where a test needs one, an inference API whose endpoints it gives; and the week it plans there.
 */
import type { Mix } from "../../src/demo/mix.ts";
import { DEFAULT_MIX } from "../../src/demo/mix.ts";
import { chooseRoles, planSlot } from "../../src/demo/plan.ts";
import {
  type Action,
  type PlanContext,
  type PlanEndpoint,
  type PlanMerchant,
  SLOT_SECONDS,
  SLOTS_PER_WEEK,
} from "../../src/demo/plan-types.ts";

export type Pay = Extract<Action, { type: "pay" }>;
export type Transfer = Extract<Action, { type: "transfer" }>;

export const endpoint = (price: number, path = `/p${price}`): PlanEndpoint => ({
  method: "GET",
  path,
  price,
  input: {},
});

/** A metered call's work a tiny charge buys: a few words. */
export const tiny = (u: number) => ({ words: 1 + Math.floor(u * 6) });

/** The world's merchants: the utility's endpoints as given (default two), and an inference API if given. */
export function planMerchants(
  options: { utility?: PlanEndpoint[]; inference?: PlanEndpoint[] } = {},
): PlanMerchant[] {
  return [
    { id: "utility", endpoints: options.utility ?? [endpoint(0.001), endpoint(0.01)] },
    { id: "uuid", endpoints: [endpoint(0.0001)] },
    { id: "hash", endpoints: [endpoint(0.002), endpoint(0.1)] },
    { id: "stats", endpoints: [endpoint(0.005), endpoint(0.25)] },
    ...(options.inference ? [{ id: "inference", endpoints: options.inference }] : []),
    ...Array.from({ length: 17 }, (_, i) => ({
      id: `shop${i}`,
      endpoints: [endpoint(0.001 + (i % 4) * 0.001)],
    })),
  ];
}

/** The plan's context over `merchants`: the utility plays the patterns, an inference API takes genuine demand only. */
export function planContext(
  merchants: PlanMerchant[],
  mix: Mix = DEFAULT_MIX,
  slotSeconds = SLOT_SECONDS,
): PlanContext {
  const genuineOnly = merchants.some((m) => m.id === "inference") ? ["inference"] : [];
  return {
    mix,
    merchants,
    roles: chooseRoles(merchants, "utility", genuineOnly),
    epoch: 1_700_000_000,
    slotSeconds,
  };
}

/** Every action of `weeks` weeks from slot `from`. */
export const playWeeks = (c: PlanContext, weeks = 1, from = 0): Action[] =>
  Array.from({ length: SLOTS_PER_WEEK * weeks }, (_, i) => planSlot(c, from + i)).flat();
