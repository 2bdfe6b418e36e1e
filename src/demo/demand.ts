/**
 * The plan's genuine demand: agents buying everyday prices from their favourite merchants, the large
 * customer buying premium ones, the integration calling on its period, agents sending metered work, and the
 * daily buys from merchants that take genuine demand only. More of it by day than by night.
 */
import {
  cheapestIndex,
  indexesWhere,
  isEveryday,
  isMetered,
  isPremium,
  merchantById,
  popularity,
  spread,
} from "./plan-picks.ts";
import { type PlanContext, type PlanEndpoint, SLOT_SECONDS, SLOTS_PER_WEEK } from "./plan-types.ts";
import { random } from "./prng.ts";
import type { SlotActions } from "./slot-actions.ts";

/** Calls a week at the least from the agent whose favourite a genuine-demand-only merchant is. */
const DAILY = 7;

/**
 * How busy the slot's hour is, 0.5 to 1.5. By the hour of the slot in a seven-day week: a week played in
 * fewer days keeps the same demand.
 */
export function diurnal(ctx: PlanContext, slot: number): number {
  const hour = ((ctx.epoch + slot * SLOT_SECONDS) / 3_600) % 24;
  return 1 + 0.5 * Math.sin((2 * Math.PI * (hour - 9)) / 24);
}

/** The agents', the large customer's and the integration's payments in the slot. */
export function planGenuineDemand(ctx: PlanContext, s: SlotActions, busy: number): void {
  const { mix, roles } = ctx;
  const week = SLOTS_PER_WEEK;
  const { r, start, length } = s;
  for (let k = 0; k < mix.agents; k++) {
    const agent = agentProfile(ctx, k);
    for (let n = r.poisson((agent.callsPerWeek / week) * busy); n > 0; n--) {
      const merchant = pickWeighted(r.next(), agent.favourites);
      const choices = indexesWhere(merchantById(ctx, merchant), isEveryday);
      s.pay(`agent:${k}`, merchant, r.pick(choices), "agent");
    }
  }
  const premium = ctx.merchants.flatMap((m) => indexesWhere(m, isPremium).map((i) => [m.id, i] as const));
  if (premium.length > 0) {
    for (let n = r.poisson((mix.largeCustomerCallsPerWeek / week) * busy); n > 0; n--) {
      const [merchant, endpoint] = r.pick(premium);
      s.pay("large", merchant, endpoint, "large_customer");
    }
  }
  if (mix.integrationEveryMinutes > 0) {
    // Its period is the week's, compressed with it: as many calls a slot whatever the slot's length.
    const every = Math.max(1, Math.round((mix.integrationEveryMinutes * 60 * length) / SLOT_SECONDS));
    const endpoint = cheapestIndex(merchantById(ctx, roles.integration));
    for (let t = Math.ceil((start - ctx.epoch) / every) * every + ctx.epoch; t < start + length; t += every) {
      s.add([
        {
          type: "pay",
          at: Math.max(t, start + 60),
          from: "integration",
          merchant: roles.integration,
          endpoint,
          behaviour: "integration",
        },
      ]);
    }
  }
}

/**
 * Metered demand: agents sending work of varying size to metered (upto) endpoints, charged what it
 * used. Drawn last, so the rest of the week is what it was before metered endpoints existed.
 */
export function planMeteredDemand(ctx: PlanContext, s: SlotActions, busy: number): void {
  const { mix } = ctx;
  const { r } = s;
  const metered = ctx.merchants.flatMap((m) => indexesWhere(m, isMetered).map((i) => [m.id, i] as const));
  if (metered.length > 0 && mix.agents > 0) {
    for (let n = r.poisson((mix.meteredCallsPerWeek / SLOTS_PER_WEEK) * busy); n > 0; n--) {
      const [merchant, endpoint] = r.pick(metered);
      const sized = (merchantById(ctx, merchant).endpoints[endpoint] as PlanEndpoint).sized;
      s.pay(`agent:${r.int(mix.agents)}`, merchant, endpoint, "agent", sized?.(r.next()));
    }
  }
}

/**
 * A merchant that takes genuine demand only is bought from at least once a day by the agent whose
 * favourite it is: an agent that spends little still buys from it every day (the paid proxy had a single
 * call in a week at the demo's seed and scale without it). Drawn last, so the rest stays as it was.
 */
export function planDailyGenuine(ctx: PlanContext, slot: number, s: SlotActions): void {
  const { mix, roles } = ctx;
  const w = slot % SLOTS_PER_WEEK;
  roles.genuineOnly.forEach((id, k) => {
    const m = ctx.merchants.find((x) => x.id === id);
    const choices = m ? indexesWhere(m, isEveryday) : [];
    if (k >= mix.agents || choices.length === 0) return;
    for (let n = spread(DAILY, w, (k + 1) / (roles.genuineOnly.length + 1)); n > 0; n--) {
      s.pay(`agent:${k}`, id, s.r.pick(choices), "agent");
    }
  });
}

interface AgentProfile {
  callsPerWeek: number;
  /** Merchant ids with cumulative weights. */
  favourites: { id: string; weight: number }[];
}

const profiles = new WeakMap<PlanContext, AgentProfile[]>();

/** An agent's habits, fixed for the whole simulation: how much it buys and from which 2 to 4 merchants. */
function agentProfile(ctx: PlanContext, k: number): AgentProfile {
  let cache = profiles.get(ctx);
  if (!cache) {
    cache = [];
    profiles.set(ctx, cache);
  }
  const cached = cache[k];
  if (cached) return cached;
  const r = random(ctx.mix.seed, k, 2);
  const ranked = popularity(ctx);
  const weightOf = (id: string) => 1 / (ranked.findIndex((m) => m.id === id) + 1) ** 0.9;
  const chosen = new Set<string>();
  // A merchant that takes only genuine demand (the inference and social-data APIs) is the first agents'
  // favourite, weighted as the most popular: every week has some of it, whatever the seed and the scale.
  const must = ctx.roles.genuineOnly[k];
  if (must !== undefined && ranked.some((m) => m.id === must)) chosen.add(must);
  const want = 2 + r.int(3);
  while (chosen.size < Math.min(want, ranked.length)) {
    chosen.add(pickWeighted(r.next(), cumulative(ranked.map((m) => ({ id: m.id, weight: weightOf(m.id) })))));
  }
  const profile = {
    callsPerWeek: ctx.mix.agentCallsPerWeek * (0.5 + r.next()),
    favourites: cumulative([...chosen].map((id) => ({ id, weight: id === must ? 1 : weightOf(id) }))),
  };
  cache[k] = profile;
  return profile;
}

function cumulative(items: { id: string; weight: number }[]): { id: string; weight: number }[] {
  const total = items.reduce((s, i) => s + i.weight, 0);
  let sum = 0;
  return items.map((i) => {
    sum += i.weight / total;
    return { id: i.id, weight: sum };
  });
}

function pickWeighted(u: number, items: { id: string; weight: number }[]): string {
  return (items.find((i) => u < i.weight) ?? (items[items.length - 1] as { id: string })).id;
}
