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
import { cheapest, isListed, range } from "./plan-picks.ts";
import type { Action, PlanContext, PlanEndpoint, PlanMerchant, Roles, WalletId } from "./plan-types.ts";
import { SlotActions } from "./slot-actions.ts";

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
