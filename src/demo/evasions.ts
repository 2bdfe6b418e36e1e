/**
 * What a gamer who has read docs/screens.md plays beside genuine demand (issue 39): each evasion steps past
 * a rule the screens used to publish, against a merchant that has genuine demand of its own, so that
 * `simulate --check` measures the screens against it. And what makes the demo's exchange an exchange: its
 * depositors, unrelated wallets whose deposits make it a hub, so that the buyers it pays out to are each a
 * buyer of their own (docs/screens.md, "Clusters and hubs").
 *
 * - a deep chain: a merchant's money through five private wallets (the old hop limit was four) to a buyer;
 * - dormant funding: wallets a merchant funds in the chain's first slots, silent for days, then buying
 *   (the devnet's chain is a week old: that is as dormant as it allows);
 * - a distributor: a private wallet fed by a merchant alone pays many wallets, each buying a few times;
 * - a split farm: wallets funded from one farmer, each paying tiny metered charges, none many alone;
 * - a varied farm: one wallet paying tiny metered charges of varying amounts.
 *
 * The farms pay a merchant with genuine demand, where no exact price is below a fifth of its lowest listed
 * one (the old farm's unlisted $0.0001 endpoint is a shop's only one, which agents never buy): a metered
 * (upto) charge for tiny work is what can be tiny there (`PlanEndpoint.tiny`), and neither farm is played
 * where no merchant has one. The evasions use the slot's generator after everything else has drawn
 * from it, and none is played by a world saved before they existed (mix.ts, `EVASIONS_OFF`).
 */
import { EVASIONS_OFF, type Mix } from "./mix.ts";
import { cheapest, cheapestIndex, merchantById, popularity, range } from "./plan-picks.ts";
import {
  type Action,
  type Behaviour,
  merchantWallet,
  type PlanContext,
  type PlanEndpoint,
  SLOTS_PER_WEEK,
  type WalletId,
} from "./plan-types.ts";
import { random } from "./prng.ts";

/** The behaviours of the evasions, these and the cluster evasions' (cluster-evasions.ts): none is genuine demand. */
export const EVASIONS: ReadonlySet<Behaviour> = new Set([
  "deep_chain",
  "dormant_funded",
  "distributor",
  "split_farm",
  "varied_farm",
  "thirds_farm",
  "topup_farm",
  "burst_farm",
]);

/** Private wallets between the merchant and the deep chain's buyer: one more than the old hop limit's four. */
export const CHAIN_LENGTH = 5;

/** Weekly slots: when each evasion is funded, and from when its wallets buy (until the week's end). */
const DEEP_FUND = 8;
const DEEP_PAY = 12;
const DORMANT_FUND = 1;
/** Day 5: four days after their funding, as dormant as a week-old chain allows. */
const DORMANT_PAY = 240;
const DISTRIBUTOR_FUND = 20;
const DISTRIBUTOR_PAY = 24;
const FARM_FUND = 2;
const FARM_PAY = 4;

/** The evasions' wallets, in a fixed order (their keys follow the population's). */
export function evasionWallets(mix: Mix): WalletId[] {
  return [
    ...range(mix.exchangeDepositors).map((k) => `depositor:${k}`),
    ...range(CHAIN_LENGTH).map((k) => `chain:${k}`),
    "chain:payer",
    ...range(mix.dormantWallets).map((k) => `dormant:${k}`),
    "distributor",
    ...range(mix.distributorWallets).map((k) => `fanned:${k}`),
    "farmer",
    ...range(mix.splitFarmWallets).map((k) => `split:${k}`),
    "varied",
  ];
}

/** Whom the evasions are played against. */
export interface EvasionTargets {
  deep: string;
  dormant: string;
  distributor: string;
  /** A metered endpoint whose charge tiny work makes tiny, if any merchant has one. */
  metered?: { merchant: string; endpoint: number };
}

const targetsCache = new WeakMap<PlanContext, EvasionTargets>();

/**
 * The most popular merchants with agents that play no other pattern and take more than genuine demand
 * only: each evasion meets genuine demand that the screens must leave alone. The first metered endpoint
 * with tiny work (catalogue order: the cheapest tier's) for the farms.
 */
export function evasionTargets(ctx: PlanContext): EvasionTargets {
  const cached = targetsCache.get(ctx);
  if (cached) return cached;
  const { roles } = ctx;
  const taken = new Set([
    ...roles.genuineOnly,
    roles.integration,
    roles.farm,
    roles.selfPayer,
    roles.funder,
    roles.ring,
    ...roles.pair,
  ]);
  const free = popularity(ctx)
    .filter((m) => !taken.has(m.id) && cheapest(m) !== undefined)
    .map((m) => m.id);
  if (free.length === 0) throw new Error("no merchant left for the evasions");
  const at = (i: number) => free[i % free.length] as string;
  const metered = ctx.merchants
    .flatMap((m) => [...m.endpoints.keys()].map((endpoint) => ({ merchant: m.id, endpoint })))
    .find(({ merchant, endpoint }) => {
      const e = merchantById(ctx, merchant).endpoints[endpoint] as PlanEndpoint;
      return e.scheme === "upto" && e.tiny !== undefined;
    });
  const targets = { deep: at(0), dormant: at(1), distributor: at(2), ...(metered ? { metered } : {}) };
  targetsCache.set(ctx, targets);
  return targets;
}

/**
 * Slot 0's mints to the depositors and their deposits, before the exchange pays anyone out: at the slot's
 * first second, where the exchange's payouts come later or, at the same second, after them (the plan's
 * sort keeps the order of equal times). The simulator sends a wallet's transfer once what it was sent in
 * the slot is in a block.
 */
export function depositActions(ctx: PlanContext, slot: number): Action[] {
  if (slot !== 0) return [];
  const start = ctx.epoch;
  const amounts = random(ctx.mix.seed, 5);
  return range(ctx.mix.exchangeDepositors).flatMap((k): Action[] => {
    const usd = 50 + amounts.int(4_951);
    const from = `depositor:${k}`;
    return [
      { type: "mint", at: start, to: from, usd },
      { type: "transfer", at: start, from, to: "exchange", usd, behaviour: "funding" },
    ];
  });
}

/** The slot's times, drawn from its generator: funding in its first minute, payments after. */
export interface SlotClock {
  fundAt: () => number;
  payAt: () => number;
}

/** The evasions' actions in one slot (unsorted: the plan sorts the slot). */
export function planEvasions(ctx: PlanContext, slot: number, clock: SlotClock): Action[] {
  const { mix } = ctx;
  const w = slot % SLOTS_PER_WEEK;
  const start = ctx.epoch + slot * ctx.slotSeconds;
  const actions: Action[] = [];
  // Nothing to play (a world saved before the evasions): no merchant is chosen, none need be spare.
  if (Object.keys(EVASIONS_OFF).every((key) => mix[key as keyof typeof EVASIONS_OFF] === 0)) return actions;
  const targets = evasionTargets(ctx);
  const send = (from: WalletId, to: WalletId, usd: number, behaviour: Behaviour, at = clock.fundAt()) =>
    actions.push({ type: "transfer", at, from, to, usd, behaviour });
  const pay = (
    from: WalletId,
    merchant: string,
    behaviour: Behaviour,
    endpoint?: number,
    input?: Record<string, unknown>,
  ) =>
    actions.push({
      type: "pay",
      at: clock.payAt(),
      from,
      merchant,
      endpoint: endpoint ?? cheapestIndex(merchantById(ctx, merchant)),
      behaviour,
      ...(input ? { input } : {}),
    });
  /** Dollars that pay `calls` of the merchant's cheapest endpoint twice over, whole cents. */
  const enough = (merchant: string, calls: number) =>
    Math.max(
      0.05,
      Math.ceil((cheapest(merchantById(ctx, merchant)) as PlanEndpoint).price * calls * 200) / 100,
    );

  // The merchants' money to play with, as the other patterns' merchants get theirs.
  if (slot === 0) {
    for (const id of new Set([targets.deep, targets.dormant, targets.distributor])) {
      actions.push({ type: "mint", at: start, to: merchantWallet(id), usd: 100 });
    }
    if (mix.splitFarmWallets > 0 && targets.metered)
      actions.push({ type: "mint", at: start, to: "farmer", usd: 5 });
  }

  // The deep chain: each hop a second after the one before, so that they are in order in the slot.
  if (mix.deepChainCallsPerWeek > 0) {
    if (w === DEEP_FUND) {
      const usd = enough(targets.deep, mix.deepChainCallsPerWeek);
      const path = [
        merchantWallet(targets.deep),
        ...range(CHAIN_LENGTH).map((k) => `chain:${k}`),
        "chain:payer",
      ];
      path.slice(1).forEach((to, i) => {
        send(path[i] as WalletId, to, usd, "deep_chain", start + i);
      });
    }
    for (let n = spreadIn(mix.deepChainCallsPerWeek, w, DEEP_PAY, 0.5); n > 0; n--) {
      pay("chain:payer", targets.deep, "deep_chain");
    }
  }

  if (mix.dormantWallets > 0 && mix.dormantCallsPerWeek > 0) {
    if (w === DORMANT_FUND) {
      const usd = enough(targets.dormant, mix.dormantCallsPerWeek);
      for (let k = 0; k < mix.dormantWallets; k++) {
        send(merchantWallet(targets.dormant), `dormant:${k}`, usd, "dormant_funded");
      }
    }
    for (let k = 0; k < mix.dormantWallets; k++) {
      const phase = (k + 0.5) / mix.dormantWallets;
      for (let n = spreadIn(mix.dormantCallsPerWeek, w, DORMANT_PAY, phase); n > 0; n--) {
        pay(`dormant:${k}`, targets.dormant, "dormant_funded");
      }
    }
  }

  if (mix.distributorWallets > 0 && mix.distributorCallsPerWeek > 0) {
    const usd = enough(targets.distributor, mix.distributorCallsPerWeek);
    if (w === DISTRIBUTOR_FUND) {
      const all = Math.round(usd * mix.distributorWallets * 100) / 100;
      send(merchantWallet(targets.distributor), "distributor", all, "distributor");
    }
    if (w === DISTRIBUTOR_FUND + 1) {
      for (let k = 0; k < mix.distributorWallets; k++) send("distributor", `fanned:${k}`, usd, "distributor");
    }
    for (let k = 0; k < mix.distributorWallets; k++) {
      const phase = (k + 0.5) / mix.distributorWallets;
      for (let n = spreadIn(mix.distributorCallsPerWeek, w, DISTRIBUTOR_PAY, phase); n > 0; n--) {
        pay(`fanned:${k}`, targets.distributor, "distributor");
      }
    }
  }

  const metered = targets.metered;
  if (metered) {
    const tiny = (merchantById(ctx, metered.merchant).endpoints[metered.endpoint] as PlanEndpoint).tiny;
    const payTiny = (from: WalletId, behaviour: Behaviour, u: number) =>
      pay(from, metered.merchant, behaviour, metered.endpoint, tiny?.(u));
    if (mix.splitFarmWallets > 0 && mix.splitFarmCallsPerWeek > 0) {
      if (w === FARM_FUND) {
        for (let k = 0; k < mix.splitFarmWallets; k++) send("farmer", `split:${k}`, 0.25, "split_farm");
      }
      for (let k = 0; k < mix.splitFarmWallets; k++) {
        const phase = (k + 0.5) / mix.splitFarmWallets;
        // One amount: each wallet alone makes too few payments to be a farm.
        for (let n = spreadIn(mix.splitFarmCallsPerWeek, w, FARM_PAY, phase); n > 0; n--) {
          payTiny(`split:${k}`, "split_farm", 0);
        }
      }
    }
    if (mix.variedFarmCallsPerWeek > 0) {
      // Withdrawn from the exchange, as a farm's wallet would be: a buyer of its own, not the exchange's.
      if (w === 0) send("exchange", "varied", slot === 0 ? 1 : 0.2, "varied_farm");
      for (let n = spreadIn(mix.variedFarmCallsPerWeek, w, FARM_PAY, 0.25); n > 0; n--) {
        payTiny("varied", "varied_farm", (((slot * 0.618_034) % 1) + n * 0.381_966) % 1);
      }
    }
  }
  return actions;
}

/**
 * How many of `perWeek` events spread evenly over weekly slots `from` to the week's end fall in slot `w`
 * (none before `from`); `phase` in [0, 1) shifts them.
 */
export function spreadIn(perWeek: number, w: number, from: number, phase = 0): number {
  if (w < from) return 0;
  const length = SLOTS_PER_WEEK - from;
  const at = (s: number) => Math.floor((s * perWeek) / length + phase);
  return at(w - from + 1) - at(w - from);
}
