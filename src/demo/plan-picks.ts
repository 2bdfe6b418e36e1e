/**
 * How the plan's parts pick merchants, endpoints and counts: which prices agents buy, the merchants by
 * popularity, events spread over the week's slots. A file of its own for the same reason as
 * plan-types.ts: every part of the plan uses them, and plan.ts runs the parts.
 */
import { type PlanContext, type PlanEndpoint, type PlanMerchant, SLOTS_PER_WEEK } from "./plan-types.ts";
import { random } from "./prng.ts";

/** A price paid as listed: an `upto` endpoint's price is only the most a call may cost. */
export const isListed = (e: PlanEndpoint) => e.scheme !== "upto";
/** Agents buy listed prices from $0.001 to $0.05: no sub-cent farming, no premium. */
export const isEveryday = (e: PlanEndpoint) => isListed(e) && e.price >= 0.001 && e.price <= 0.05;
export const isPremium = (e: PlanEndpoint) => isListed(e) && e.price >= 0.1;
export const isMetered = (e: PlanEndpoint) => e.scheme === "upto";

/** The cheapest endpoint an agent would buy, or undefined. */
export function cheapest(m: PlanMerchant): PlanEndpoint | undefined {
  return [...m.endpoints].filter(isEveryday).sort((a, b) => a.price - b.price)[0];
}

const rankings = new WeakMap<PlanContext, PlanMerchant[]>();

/**
 * The merchants agents buy from, most popular first: popularity falls with a merchant's place in this
 * seeded order, so a few big merchants and a long tail.
 */
export function popularity(ctx: PlanContext): readonly PlanMerchant[] {
  const cached = rankings.get(ctx);
  if (cached) return cached;
  const ranked = ctx.merchants.filter((m) => m.endpoints.some(isEveryday));
  const order = random(ctx.mix.seed, 3);
  for (let i = ranked.length - 1; i > 0; i--) {
    const j = order.int(i + 1);
    [ranked[i], ranked[j]] = [ranked[j] as PlanMerchant, ranked[i] as PlanMerchant];
  }
  rankings.set(ctx, ranked);
  return ranked;
}

/** How many of `perWeek` evenly spaced events fall in weekly slot `w`; `phase` in [0, 1) shifts them. */
export function spread(perWeek: number, w: number, phase = 0): number {
  const at = (s: number) => Math.floor((s * perWeek) / SLOTS_PER_WEEK + phase);
  return at(w + 1) - at(w);
}

export function merchantById(ctx: PlanContext, id: string): PlanMerchant {
  const m = ctx.merchants.find((x) => x.id === id);
  if (!m) throw new Error(`unknown merchant ${id}`);
  return m;
}

/** The indexes of the merchant's endpoints that pass `test`. */
export function indexesWhere(m: PlanMerchant, test: (e: PlanEndpoint) => boolean): number[] {
  return [...m.endpoints.keys()].filter((i) => test(m.endpoints[i] as PlanEndpoint));
}

export function cheapestIndex(m: PlanMerchant): number {
  const best = cheapest(m);
  if (!best) throw new Error(`merchant ${m.id} has no endpoint from $0.001 to $0.05`);
  return m.endpoints.indexOf(best);
}

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
