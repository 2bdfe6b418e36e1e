/**
 * What the simulated population does, slot by slot: a week is 336 slots of 30 minutes (shorter when the
 * week is played in fewer days: `PlanContext.slotSeconds`), and the actions of any slot are a pure function
 * of the mix, the merchants and the slot's number (seeded), so a resumed demo recomputes where it stopped.
 * Weekly patterns repeat every 336 slots.
 */
import { channelWallets, planChannels } from "./channels.ts";
import { clusterEvasionWallets, planClusterEvasions } from "./cluster-evasions.ts";
import { diurnal, planDailyGenuine, planGenuineDemand, planMeteredDemand } from "./demand.ts";
import { evasionWallets, planEvasions } from "./evasions.ts";
import type { Mix } from "./mix.ts";
import { planMoney } from "./money.ts";
import { planPatterns } from "./patterns.ts";
import { random } from "./prng.ts";
import { SlotActions } from "./slot-actions.ts";

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
  // Evasions of the clusters' rules (cluster-evasions.ts).
  "thirds_farm",
  "topup_farm",
  "burst_farm",
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
  /** Offers payment channels (`batch-settlement`) beside its scheme (channels.ts). */
  channels?: true;
  /** Offers `exact` through the Permit2 proxy beside EIP-3009: the Permit2 buyers' choice (`permit2Payer`). */
  permit2?: true;
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
      /** Paid through the payer's channel of this session (channels.ts), not with a payment of its own. */
      session?: number;
    }
  | {
      /** The end of a channel session: the payer asks for what its channel holds back (a cooperative refund). */
      type: "refund";
      at: number;
      from: WalletId;
      merchant: string;
      session: number;
      behaviour: Behaviour;
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
export const isListed = (e: PlanEndpoint) => e.scheme !== "upto";
/** Agents buy listed prices from $0.001 to $0.05: no sub-cent farming, no premium. */
export const isEveryday = (e: PlanEndpoint) => isListed(e) && e.price >= 0.001 && e.price <= 0.05;
export const isPremium = (e: PlanEndpoint) => isListed(e) && e.price >= 0.1;
export const isMetered = (e: PlanEndpoint) => e.scheme === "upto";

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
    // Last: the wallets before them keep the keys they had before the evasions existed, before channels and
    // before the cluster evasions.
    ...evasionWallets(mix),
    ...channelWallets(mix),
    ...clusterEvasionWallets(mix),
  ];
}

/** The actions of one slot, by time; funding comes in the slot's first minute, payments after it. */
export function planSlot(ctx: PlanContext, slot: number): Action[] {
  const s = new SlotActions(ctx, slot);
  planMoney(ctx, slot, s);
  const busy = diurnal(ctx, slot);
  planGenuineDemand(ctx, s, busy);
  planPatterns(ctx, slot, s);
  planMeteredDemand(ctx, s, busy);
  planDailyGenuine(ctx, slot, s);
  // The evasions, drawn last, so the rest stays as it was.
  s.add(planEvasions(ctx, slot, s));
  // Payment channels after them (channels.ts).
  planChannels(ctx, slot, s, busy);
  // The cluster evasions and their look-alikes, from a generator of their own (cluster-evasions.ts).
  planClusterEvasions(ctx, slot, s);
  return s.list.sort((x, y) => x.at - y.at || order(x) - order(y));
}

/** Mints, then transfers, then payments, then a session's end at the same second. */
const order = (a: Action) => ({ mint: 0, transfer: 1, pay: 2, refund: 3 })[a.type];

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
