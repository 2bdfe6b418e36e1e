/**
 * What a gamer who has read docs/screens.md, "Clusters and hubs", plays beside the evasions (evasions.ts),
 * and the genuine demand that looks like it, which the screens must leave alone (issue 54). The farms pay
 * the split farm's tiny metered charges (its least work) at the same endpoint (`EvasionTargets.metered`);
 * each spreads them over wallets that none of the old rules would call one buyer:
 *
 * - a thirds farm: an owner funds three feeder wallets, and each farm wallet gets a third of its money from
 *   each feeder, the farm wallets on different days: no sender gave any of them half of what it received;
 * - a top-up farm: each farm wallet gets 40% of its money from an owner and 60% withdrawn from the
 *   exchange, so most of what it received came from a hub;
 * - a burst farm: wallets the exchange alone pays, all within one minute of one slot (an hour no other
 *   withdrawal shares), that then pay alike: no funder at all. Fifteen of them by default (mix.ts): the
 *   demo's week is small, and the other farms pay the same band of amounts, so that the behaviour rule's
 *   null model needs that many wallets for a strong link (six leave a chance of about 1e-4, against 1e-9),
 *   and six clusters paying one band would make it the merchant's price.
 *
 * The look-alikes are genuine demand (`agent`):
 * - agents a friend tops up beside their exchange funding, a friend each, with less than a fifth of their money;
 * - regulars of the farms' metered endpoint, sending it work of varying size, withdrawn from the exchange in
 *   the same minute as every agent (the week's first slot): the demo's agents are all paid out in one burst,
 *   but its metered calls go to any of the metered routes, a few to each;
 * - a company's agents, funded from one treasury, paying the farms' merchant its lowest listed price.
 *
 * Everything here touches a wallet of its own (`clusterEvasionWallets`; a friend's top-up goes from the
 * friend to an agent), is played only where the farms have a metered endpoint, and draws from a generator
 * of its own, so the rest of the plan is what it was and these actions do not depend on it. A world saved
 * before them plays none (mix.ts, `CLUSTER_EVASIONS_OFF`).
 */
import { evasionTargets, spreadIn } from "./evasions.ts";
import { CLUSTER_EVASIONS_OFF, type Mix } from "./mix.ts";
import { cheapest, cheapestIndex, merchantById, range } from "./plan-picks.ts";
import {
  type Action,
  type Behaviour,
  type PlanContext,
  type PlanEndpoint,
  SLOTS_PER_WEEK,
  type WalletId,
} from "./plan-types.ts";
import { random } from "./prng.ts";
import type { SlotActions } from "./slot-actions.ts";

/** The behaviours of the cluster evasions (also in `EVASIONS`): none is genuine demand. */
export const CLUSTER_EVASIONS: ReadonlySet<Behaviour> = new Set(["thirds_farm", "topup_farm", "burst_farm"]);

/** The thirds farm's feeder wallets: three, so that none gives a farm wallet half of its money. */
export const FEEDERS = 3;

/** Slots a day of the week's 336. */
const DAY = 48;
/**
 * Weekly slots. The owners' and the treasury's money is minted at each week's start. The thirds farm's owner
 * pays its feeders in slot 3; its wallet k is funded on day k (mod 7), in slot 4 of that day, the top-up
 * farm's in slot 6. The burst farm is paid out in slot 30: 15 hours into the week, more than an hour from
 * any other withdrawal however the week is compressed (a day's 48 slots are at least 3.4 hours).
 */
const THIRDS_FEED = 3;
const THIRDS_FUND = 4;
const TOPUP_FUND = 6;
const BURST_FUND = 30;
const COMPANY_FUND = 5;
/** Day 1's twelfth slot: the friends' top-ups, after the agents have been buying for a day. */
const FRIEND_SLOT = 60;

/** This module's stream of the seeded generator (the slot's own is 1). */
const STREAM = 6;

/** Their wallets, in a fixed order (their keys follow the channels'). */
export function clusterEvasionWallets(mix: Mix): WalletId[] {
  return [
    "thirds:owner",
    ...range(FEEDERS).map((k) => `thirds:feeder:${k}`),
    ...range(mix.thirdsFarmWallets).map((k) => `thirds:${k}`),
    "topup:owner",
    ...range(mix.topupFarmWallets).map((k) => `topup:${k}`),
    ...range(mix.burstFarmWallets).map((k) => `burst:${k}`),
    ...range(mix.friendTopups).map((k) => `friend:${k}`),
    ...range(mix.meteredRegulars).map((k) => `regular:${k}`),
    "treasury",
    ...range(mix.companyAgents).map((k) => `company:${k}`),
  ];
}

/** Whether a wallet is one of this module's. */
export const CLUSTER_EVASION_WALLET = /^(thirds|topup|burst|friend|regular|treasury|company)(:|$)/;

/** The agents the friends top up: friend k tops up agent k. */
export function toppedUpAgents(mix: Mix): WalletId[] {
  return range(Math.min(mix.friendTopups, mix.agents)).map((k) => `agent:${k}`);
}

/** Dollars rounded to whole cents. */
const cents = (usd: number) => Math.round(usd * 100) / 100;

/** The slot's actions of the cluster evasions and their look-alikes, added to `s`. */
export function planClusterEvasions(ctx: PlanContext, slot: number, s: SlotActions): void {
  const { mix } = ctx;
  if (Object.keys(CLUSTER_EVASIONS_OFF).every((key) => mix[key as keyof typeof CLUSTER_EVASIONS_OFF] === 0))
    return;
  const metered = evasionTargets(ctx).metered;
  if (!metered) return;
  const w = slot % SLOTS_PER_WEEK;
  const first = slot < SLOTS_PER_WEEK;
  const start = s.start;
  const r = random(mix.seed, slot, STREAM);
  const fundAt = () => start + r.int(60);
  const payAt = () => start + 60 + r.int(s.length - 60);
  const actions: Action[] = [];
  const mint = (to: WalletId, usd: number) => actions.push({ type: "mint", at: start, to, usd: cents(usd) });
  const send = (from: WalletId, to: WalletId, usd: number, behaviour: Behaviour = "funding") =>
    actions.push({ type: "transfer", at: fundAt(), from, to, usd: cents(usd), behaviour });
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
  const target = merchantById(ctx, metered.merchant).endpoints[metered.endpoint] as PlanEndpoint;
  // The farms' tiny charge: the split farm's, the least work the endpoint takes.
  const payTiny = (from: WalletId, behaviour: Behaviour) =>
    pay(from, metered.merchant, metered.endpoint, behaviour, target.tiny?.(0));
  /** A farm wallet's money a week, in units of the endpoint's most (whole cents): it needs that much to pay. */
  const unit = Math.ceil(target.price * 100) / 100;
  /** Wallet k's weekly slot of day k (mod 7) at `offset`. */
  const dayOf = (k: number, offset: number) => offset + DAY * (k % 7);

  if (mix.thirdsFarmWallets > 0 && mix.thirdsFarmCallsPerWeek > 0) {
    const n = mix.thirdsFarmWallets;
    if (w === 0) mint("thirds:owner", FEEDERS * unit * n);
    if (w === THIRDS_FEED) {
      for (let f = 0; f < FEEDERS; f++) send("thirds:owner", `thirds:feeder:${f}`, unit * n, "thirds_farm");
    }
    for (let k = 0; k < n; k++) {
      const fund = dayOf(k, THIRDS_FUND);
      if (w === fund) {
        for (let f = 0; f < FEEDERS; f++) send(`thirds:feeder:${f}`, `thirds:${k}`, unit, "thirds_farm");
      }
      for (let c = spreadIn(mix.thirdsFarmCallsPerWeek, w, fund + 1, (k + 0.5) / n); c > 0; c--) {
        payTiny(`thirds:${k}`, "thirds_farm");
      }
    }
  }

  if (mix.topupFarmWallets > 0 && mix.topupFarmCallsPerWeek > 0) {
    const n = mix.topupFarmWallets;
    if (w === 0) mint("topup:owner", 2 * unit * n);
    for (let k = 0; k < n; k++) {
      const fund = dayOf(k, TOPUP_FUND);
      if (w === fund) {
        // 40% from the owner, 60% from the exchange.
        send("topup:owner", `topup:${k}`, 2 * unit, "topup_farm");
        send("exchange", `topup:${k}`, 3 * unit, "topup_farm");
      }
      for (let c = spreadIn(mix.topupFarmCallsPerWeek, w, fund + 1, (k + 0.5) / n); c > 0; c--) {
        payTiny(`topup:${k}`, "topup_farm");
      }
    }
  }

  if (mix.burstFarmWallets > 0 && mix.burstFarmCallsPerWeek > 0) {
    const n = mix.burstFarmWallets;
    // Each withdrawal in the slot's first minute.
    if (w === BURST_FUND) for (let k = 0; k < n; k++) send("exchange", `burst:${k}`, 2 * unit, "burst_farm");
    for (let k = 0; k < n; k++) {
      for (let c = spreadIn(mix.burstFarmCallsPerWeek, w, BURST_FUND + 1, (k + 0.5) / n); c > 0; c--) {
        payTiny(`burst:${k}`, "burst_farm");
      }
    }
  }

  // Genuine: friends' top-ups, once, less than a fifth of what the exchange paid each agent that week.
  if (slot === FRIEND_SLOT) {
    toppedUpAgents(mix).forEach((agent, k) => {
      mint(`friend:${k}`, 5);
      send(`friend:${k}`, agent, 5);
    });
  }

  // Genuine: the farms' endpoint's regulars, paid out with the agents in the week's first minute.
  if (mix.meteredRegulars > 0 && mix.meteredRegularCallsPerWeek > 0) {
    const n = mix.meteredRegulars;
    const weekly = Math.max(0.05, Math.ceil(target.price * mix.meteredRegularCallsPerWeek * 200) / 100);
    for (let k = 0; k < n; k++) {
      if (w === 0) send("exchange", `regular:${k}`, first ? 2 * weekly : weekly);
      for (let c = spreadIn(mix.meteredRegularCallsPerWeek, w, 1, (k + 0.5) / n); c > 0; c--) {
        pay(`regular:${k}`, metered.merchant, metered.endpoint, "agent", target.sized?.(r.next()));
      }
    }
  }

  // Genuine: a company's agents, funded from its treasury, paying the farms' merchant its lowest listed price.
  const listed = cheapest(merchantById(ctx, metered.merchant));
  if (listed && mix.companyAgents > 0 && mix.companyCallsPerWeek > 0) {
    const n = mix.companyAgents;
    const weekly = Math.max(0.05, Math.ceil(listed.price * mix.companyCallsPerWeek * 200) / 100);
    const endpoint = cheapestIndex(merchantById(ctx, metered.merchant));
    if (w === 0) mint("treasury", weekly * n);
    for (let k = 0; k < n; k++) {
      if (w === COMPANY_FUND) send("treasury", `company:${k}`, weekly);
      for (let c = spreadIn(mix.companyCallsPerWeek, w, COMPANY_FUND + 1, (k + 0.5) / n); c > 0; c--) {
        pay(`company:${k}`, metered.merchant, endpoint, "agent");
      }
    }
  }
  s.add(actions);
}
