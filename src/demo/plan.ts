/**
 * What the simulated population does, slot by slot: a week is 336 slots of 30 minutes (shorter when the
 * week is played in fewer days: `PlanContext.slotSeconds`), and the actions of any slot are a pure function
 * of the mix, the merchants and the slot's number (seeded), so a resumed demo recomputes where it stopped.
 * Weekly patterns repeat every 336 slots.
 */
import { depositActions, evasionWallets, planEvasions } from "./evasions.ts";
import type { Mix } from "./mix.ts";
import { random } from "./prng.ts";

/** A slot of a week played in seven days. */
export const SLOT_SECONDS = 1_800;
export const SLOTS_PER_WEEK = 336;

/** A slot's length when the week's 336 slots are played in `days` days (1 to 7). */
export function slotSecondsFor(days: number): number {
  return Math.floor((days * 86_400) / SLOTS_PER_WEEK);
}

/** Who a payment or transfer is for; the ground truth says which payments are genuine demand. */
export const BEHAVIOURS = [
  "agent",
  "large_customer",
  "integration",
  "tiny_farm",
  "self_payment",
  "merchant_funded",
  "prober",
  "ring",
  "funding",
  // Evasions of the screens by someone who has read them (evasions.ts).
  "deep_chain",
  "dormant_funded",
  "distributor",
  "split_farm",
  "varied_farm",
] as const;
export type Behaviour = (typeof BEHAVIOURS)[number];

/** Behaviours whose payments are real demand: every screen should let them pass. */
export const GENUINE: ReadonlySet<Behaviour> = new Set(["agent", "large_customer", "integration"]);

export interface PlanEndpoint {
  method: "GET" | "POST";
  path: string;
  /** Dollars: the price of an `exact` endpoint, the most an `upto` one charges a call. */
  price: number;
  /** A valid input (the catalogue's example): query for GET, JSON body for POST. */
  input: Record<string, unknown>;
  /** `upto`: metered, charging what the call used, up to `price`. Default `exact`. */
  scheme?: "exact" | "upto";
  /**
   * A metered endpoint's input of a given size, `u` in [0, 1): metered buyers send work of varying size,
   * so their charges vary as real ones do. Without it, the example input.
   */
  sized?: (u: number) => Record<string, unknown>;
  /**
   * A metered endpoint's input for the least work it takes, varied by `u` in [0, 1): a charge far below
   * any listed price, which only a farm pays over and over. Absent where the route's minimum is not small.
   */
  tiny?: (u: number) => Record<string, unknown>;
}

export interface PlanMerchant {
  id: string;
  endpoints: readonly PlanEndpoint[];
}

/** Which merchants the patterns the screens look for are played against. */
export interface Roles {
  /** Has a sub-$0.001 endpoint: the tiny-repeat farm's target. */
  farm: string;
  selfPayer: string;
  funder: string;
  ring: string;
  pair: [string, string];
  integration: string;
  /**
   * Merchants that take genuine demand only; each is a favourite of one of the first agents, who buys from
   * it daily.
   */
  genuineOnly: readonly string[];
}

/** `merchant:<id>` for a merchant's wallet; other wallets are named by role. */
export type WalletId = string;
export const merchantWallet = (id: string): WalletId => `merchant:${id}`;

export type Action =
  | { type: "mint"; at: number; to: WalletId; usd: number }
  | { type: "transfer"; at: number; from: WalletId; to: WalletId; usd: number; behaviour: Behaviour }
  | {
      type: "pay";
      at: number;
      from: WalletId;
      merchant: string;
      endpoint: number;
      behaviour: Behaviour;
      /** The request's input when it is not the endpoint's example (a metered call's work). */
      input?: Record<string, unknown>;
    };

export interface PlanContext {
  mix: Mix;
  merchants: readonly PlanMerchant[];
  roles: Roles;
  /** Chain time (unix seconds) of slot 0's start. */
  epoch: number;
  /** Chain seconds a slot lasts: `SLOT_SECONDS`, or less for a week played in fewer days. */
  slotSeconds: number;
}

/** A price paid as listed: an `upto` endpoint's price is only the most a call may cost. */
const isListed = (e: PlanEndpoint) => e.scheme !== "upto";
/** Agents buy listed prices from $0.001 to $0.05: no sub-cent farming, no premium. */
const isEveryday = (e: PlanEndpoint) => isListed(e) && e.price >= 0.001 && e.price <= 0.05;
const isPremium = (e: PlanEndpoint) => isListed(e) && e.price >= 0.1;
const isMetered = (e: PlanEndpoint) => e.scheme === "upto";

/**
 * Assigns the patterns to merchants: the farm to the one with a sub-$0.001 endpoint, the rest to
 * different shops (never the utility API, which carries the integration, nor a merchant in
 * `genuineOnly`), the pair to two merchants whose cheapest everyday prices are equal, so each pays the
 * other as much as it receives.
 */
export function chooseRoles(
  merchants: readonly PlanMerchant[],
  integration: string,
  genuineOnly: readonly string[] = [],
): Roles {
  const candidates = merchants.filter((m) => !genuineOnly.includes(m.id));
  const farm = candidates.find((m) => m.endpoints.some((e) => isListed(e) && e.price < 0.001))?.id;
  if (!farm) throw new Error("no merchant has a sub-$0.001 endpoint for the tiny-repeat farm");
  const others = candidates.filter((m) => m.id !== farm && m.id !== integration && cheapest(m) !== undefined);
  const byPrice = new Map<number, string[]>();
  for (const m of others) {
    const price = (cheapest(m) as PlanEndpoint).price;
    byPrice.set(price, [...(byPrice.get(price) ?? []), m.id]);
  }
  const pair = [...byPrice.values()].find((ids) => ids.length >= 2)?.slice(0, 2) as
    | [string, string]
    | undefined;
  if (!pair) throw new Error("no two merchants share a cheapest price for the ring pair");
  const rest = others.map((m) => m.id).filter((id) => !pair.includes(id));
  const [selfPayer, funder, ring] = rest;
  if (!selfPayer || !funder || !ring) throw new Error("too few merchants for the simulated patterns");
  return { farm, selfPayer, funder, ring, pair, integration, genuineOnly };
}

/** The cheapest endpoint an agent would buy, or undefined. */
export function cheapest(m: PlanMerchant): PlanEndpoint | undefined {
  return [...m.endpoints].filter(isEveryday).sort((a, b) => a.price - b.price)[0];
}

/** Every simulated wallet that is not a merchant's, in a fixed order (their keys are derived from it). */
export function populationWallets(mix: Mix): WalletId[] {
  return [
    "exchange",
    "large",
    "integration",
    "farm",
    "ring:relay",
    "ring:payer",
    ...range(mix.probers).map((k) => `prober:${k}`),
    ...range(mix.fundedWallets).map((k) => `funded:${k}`),
    ...range(mix.agents).map((k) => `agent:${k}`),
    ...range(mix.exchangeCustomers).map((k) => `customer:${k}`),
    // Last: the wallets before them keep the keys they had before the evasions existed.
    ...evasionWallets(mix),
  ];
}

/** The actions of one slot, by time; funding comes in the slot's first minute, payments after it. */
export function planSlot(ctx: PlanContext, slot: number): Action[] {
  const { mix, roles } = ctx;
  const week = SLOTS_PER_WEEK;
  const w = slot % week;
  const length = ctx.slotSeconds;
  const start = ctx.epoch + slot * length;
  const r = random(mix.seed, slot, 1);
  const fundAt = () => start + r.int(60);
  const payAt = () => start + 60 + r.int(length - 60);
  const actions: Action[] = [];
  const pay = (
    from: WalletId,
    merchant: string,
    endpoint: number,
    behaviour: Behaviour,
    input?: Record<string, unknown>,
  ) =>
    actions.push({
      type: "pay",
      at: payAt(),
      from,
      merchant,
      endpoint,
      behaviour,
      ...(input ? { input } : {}),
    });
  const send = (from: WalletId, to: WalletId, usd: number, behaviour: Behaviour = "funding") =>
    actions.push({ type: "transfer", at: fundAt(), from, to, usd, behaviour });
  const mint = (to: WalletId, usd: number) => actions.push({ type: "mint", at: start, to, usd });

  // Money: new USDC for the exchange, the large customer and the merchants that pay; the exchange pays
  // out to buyers and its other customers every week.
  if (slot === 0) {
    mint("exchange", 100_000);
    mint("large", 200);
    for (const id of new Set([roles.selfPayer, roles.funder, roles.ring, ...roles.pair])) {
      mint(merchantWallet(id), 100);
    }
  }
  // The exchange's depositors, before it pays anyone out (evasions.ts).
  actions.push(...depositActions(ctx, slot));
  if (w === 0) {
    const first = slot === 0;
    for (let k = 0; k < mix.agents; k++) send("exchange", `agent:${k}`, first ? 50 : 10);
    send("exchange", "integration", first ? 20 : 5);
    send("exchange", "farm", first ? 5 : 1);
    for (let k = 0; k < mix.probers; k++) send("exchange", `prober:${k}`, first ? 5 : 1);
    if (first) send("exchange", "ring:payer", 1);
    for (let k = 0; k < mix.exchangeCustomers; k++) send("exchange", `customer:${k}`, 5 + r.int(196));
    if (!first) mint("large", 20);
  }

  // Genuine demand.
  // By the hour of the slot in a seven-day week: a week played in fewer days keeps the same demand.
  const hour = ((ctx.epoch + slot * SLOT_SECONDS) / 3_600) % 24;
  const diurnal = 1 + 0.5 * Math.sin((2 * Math.PI * (hour - 9)) / 24);
  for (let k = 0; k < mix.agents; k++) {
    const agent = agentProfile(ctx, k);
    for (let n = r.poisson((agent.callsPerWeek / week) * diurnal); n > 0; n--) {
      const merchant = pickWeighted(r.next(), agent.favourites);
      const choices = indexesWhere(merchantById(ctx, merchant), isEveryday);
      pay(`agent:${k}`, merchant, r.pick(choices), "agent");
    }
  }
  const premium = ctx.merchants.flatMap((m) => indexesWhere(m, isPremium).map((i) => [m.id, i] as const));
  if (premium.length > 0) {
    for (let n = r.poisson((mix.largeCustomerCallsPerWeek / week) * diurnal); n > 0; n--) {
      const [merchant, endpoint] = r.pick(premium);
      pay("large", merchant, endpoint, "large_customer");
    }
  }
  if (mix.integrationEveryMinutes > 0) {
    // Its period is the week's, compressed with it: as many calls a slot whatever the slot's length.
    const every = Math.max(1, Math.round((mix.integrationEveryMinutes * 60 * length) / SLOT_SECONDS));
    const endpoint = cheapestIndex(merchantById(ctx, roles.integration));
    for (let t = Math.ceil((start - ctx.epoch) / every) * every + ctx.epoch; t < start + length; t += every) {
      actions.push({
        type: "pay",
        at: Math.max(t, start + 60),
        from: "integration",
        merchant: roles.integration,
        endpoint,
        behaviour: "integration",
      });
    }
  }

  // What the screens exist for, on fixed schedules so every window holds enough of each.
  const tiny = indexesWhere(
    merchantById(ctx, roles.farm),
    (e) => isListed(e) && e.price < 0.001,
  )[0] as number;
  for (let n = spread(mix.farmCallsPerWeek, w); n > 0; n--) pay("farm", roles.farm, tiny, "tiny_farm");
  for (let n = spread(mix.selfPaymentsPerWeek, w, 0.3); n > 0; n--) {
    pay(
      merchantWallet(roles.selfPayer),
      roles.selfPayer,
      cheapestIndex(merchantById(ctx, roles.selfPayer)),
      "self_payment",
    );
  }
  // The funder pays its wallets on day 2; they buy from it for the rest of the week. It tries its own
  // endpoint first, which made the indexer keep its transfers when it kept only those touching a wallet
  // already seen in an x402 payment; its funding history (docs/indexer.md) now finds them either way.
  const fundDay = 96;
  if (w === fundDay - 6) {
    pay(
      merchantWallet(roles.funder),
      roles.funder,
      cheapestIndex(merchantById(ctx, roles.funder)),
      "self_payment",
    );
  }
  if (w === fundDay) {
    for (let k = 0; k < mix.fundedWallets; k++)
      send(merchantWallet(roles.funder), `funded:${k}`, 3, "merchant_funded");
  }
  if (w > fundDay || slot >= week) {
    for (let k = 0; k < mix.fundedWallets; k++) {
      for (let n = spread(mix.fundedCallsPerWeek, w, (k + 1) / (mix.fundedWallets + 1)); n > 0; n--) {
        pay(`funded:${k}`, roles.funder, cheapestIndex(merchantById(ctx, roles.funder)), "merchant_funded");
      }
    }
  }
  // The ring: a wallet starts buying from the merchant, and the merchant's money comes back to it through
  // a relay (after its first payment, so the indexer keeps the transfers), and it buys on.
  const ringDay = 48;
  if (w === ringDay + 12) send(merchantWallet(roles.ring), "ring:relay", 8, "ring");
  if (w === ringDay + 13) send("ring:relay", "ring:payer", 8, "ring");
  if (w > ringDay || slot >= week) {
    for (let n = spread(mix.ringCallsPerWeek, w, 0.6); n > 0; n--) {
      pay("ring:payer", roles.ring, cheapestIndex(merchantById(ctx, roles.ring)), "ring");
    }
  }
  const [a, b] = roles.pair;
  for (let n = spread(mix.pairCallsPerWeek, w, 0.1); n > 0; n--) {
    pay(merchantWallet(a), b, cheapestIndex(merchantById(ctx, b)), "ring");
  }
  for (let n = spread(mix.pairCallsPerWeek, w, 0.55); n > 0; n--) {
    pay(merchantWallet(b), a, cheapestIndex(merchantById(ctx, a)), "ring");
  }
  // The prober: one payment to every merchant, once a week.
  if (w === 200) {
    for (let k = 0; k < mix.probers; k++) {
      for (const m of ctx.merchants) {
        const cheapestAny = indexesWhere(m, isListed).sort(
          (i, j) => (m.endpoints[i] as PlanEndpoint).price - (m.endpoints[j] as PlanEndpoint).price,
        )[0];
        if (cheapestAny !== undefined && (m.endpoints[cheapestAny] as PlanEndpoint).price <= 0.05) {
          pay(`prober:${k}`, m.id, cheapestAny, "prober");
        }
      }
    }
  }
  // Metered demand: agents sending work of varying size to metered (upto) endpoints, charged what it
  // used. Drawn last, so the rest of the week is what it was before metered endpoints existed.
  const metered = ctx.merchants.flatMap((m) => indexesWhere(m, isMetered).map((i) => [m.id, i] as const));
  if (metered.length > 0 && mix.agents > 0) {
    for (let n = r.poisson((mix.meteredCallsPerWeek / week) * diurnal); n > 0; n--) {
      const [merchant, endpoint] = r.pick(metered);
      const sized = (merchantById(ctx, merchant).endpoints[endpoint] as PlanEndpoint).sized;
      pay(`agent:${r.int(mix.agents)}`, merchant, endpoint, "agent", sized?.(r.next()));
    }
  }
  // A merchant that takes genuine demand only is bought from at least once a day by the agent whose
  // favourite it is: an agent that spends little still buys from it every day (the paid proxy had a single
  // call in a week at the demo's seed and scale without it). Drawn last, so the rest stays as it was.
  roles.genuineOnly.forEach((id, k) => {
    const m = ctx.merchants.find((x) => x.id === id);
    const choices = m ? indexesWhere(m, isEveryday) : [];
    if (k >= mix.agents || choices.length === 0) return;
    for (let n = spread(DAILY, w, (k + 1) / (roles.genuineOnly.length + 1)); n > 0; n--) {
      pay(`agent:${k}`, id, r.pick(choices), "agent");
    }
  });
  // The evasions, drawn last for the same reason.
  actions.push(...planEvasions(ctx, slot, { fundAt, payAt }));
  return actions.sort((x, y) => x.at - y.at || order(x) - order(y));
}

/** Calls a week at the least from the agent whose favourite a genuine-demand-only merchant is. */
const DAILY = 7;

/** Mints, then transfers, then payments at the same second. */
const order = (a: Action) => ({ mint: 0, transfer: 1, pay: 2 })[a.type];

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

function indexesWhere(m: PlanMerchant, test: (e: PlanEndpoint) => boolean): number[] {
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
