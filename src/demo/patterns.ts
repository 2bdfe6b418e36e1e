/**
 * What the screens exist for, on fixed schedules so every window holds enough of each: the tiny-repeat
 * farm, self-payments, a merchant funding its own buyers, a ring, a pair of merchants paying each other,
 * and the prober.
 */
import { cheapestIndex, indexesWhere, isListed, merchantById, spread } from "./plan-picks.ts";
import { merchantWallet, type PlanContext, type PlanEndpoint, SLOTS_PER_WEEK } from "./plan-types.ts";
import type { SlotActions } from "./slot-actions.ts";

/** The weekly slot on which the funder pays its wallets (day 2). */
const FUND_DAY = 96;
/** The weekly slot from which the ring buys. */
const RING_DAY = 48;
/** The weekly slot of the prober's round. */
const PROBE_SLOT = 200;

/** The patterns' actions in the slot, in the order the plan draws them. */
export function planPatterns(ctx: PlanContext, slot: number, s: SlotActions): void {
  const { mix, roles } = ctx;
  const w = slot % SLOTS_PER_WEEK;
  const cheapestOf = (id: string) => cheapestIndex(merchantById(ctx, id));
  const tiny = indexesWhere(
    merchantById(ctx, roles.farm),
    (e) => isListed(e) && e.price < 0.001,
  )[0] as number;
  for (let n = spread(mix.farmCallsPerWeek, w); n > 0; n--) s.pay("farm", roles.farm, tiny, "tiny_farm");
  for (let n = spread(mix.selfPaymentsPerWeek, w, 0.3); n > 0; n--) {
    s.pay(merchantWallet(roles.selfPayer), roles.selfPayer, cheapestOf(roles.selfPayer), "self_payment");
  }
  // The funder pays its wallets on day 2; they buy from it for the rest of the week. It tries its own
  // endpoint first, which made the indexer keep its transfers when it kept only those touching a wallet
  // already seen in an x402 payment; its funding history (docs/indexer.md) now finds them either way.
  if (w === FUND_DAY - 6) {
    s.pay(merchantWallet(roles.funder), roles.funder, cheapestOf(roles.funder), "self_payment");
  }
  if (w === FUND_DAY) {
    for (let k = 0; k < mix.fundedWallets; k++)
      s.send(merchantWallet(roles.funder), `funded:${k}`, 3, "merchant_funded");
  }
  if (w > FUND_DAY || slot >= SLOTS_PER_WEEK) {
    for (let k = 0; k < mix.fundedWallets; k++) {
      for (let n = spread(mix.fundedCallsPerWeek, w, (k + 1) / (mix.fundedWallets + 1)); n > 0; n--) {
        s.pay(`funded:${k}`, roles.funder, cheapestOf(roles.funder), "merchant_funded");
      }
    }
  }
  planRing(ctx, slot, s);
  planProbes(ctx, slot, s);
}

/**
 * The ring: a wallet starts buying from the merchant, and the merchant's money comes back to it through
 * a relay (after its first payment, so the indexer keeps the transfers), and it buys on. And the pair,
 * two merchants paying each other.
 */
function planRing(ctx: PlanContext, slot: number, s: SlotActions): void {
  const { mix, roles } = ctx;
  const w = slot % SLOTS_PER_WEEK;
  const cheapestOf = (id: string) => cheapestIndex(merchantById(ctx, id));
  if (w === RING_DAY + 12) s.send(merchantWallet(roles.ring), "ring:relay", 8, "ring");
  if (w === RING_DAY + 13) s.send("ring:relay", "ring:payer", 8, "ring");
  if (w > RING_DAY || slot >= SLOTS_PER_WEEK) {
    for (let n = spread(mix.ringCallsPerWeek, w, 0.6); n > 0; n--) {
      s.pay("ring:payer", roles.ring, cheapestOf(roles.ring), "ring");
    }
  }
  const [a, b] = roles.pair;
  for (let n = spread(mix.pairCallsPerWeek, w, 0.1); n > 0; n--) {
    s.pay(merchantWallet(a), b, cheapestOf(b), "ring");
  }
  for (let n = spread(mix.pairCallsPerWeek, w, 0.55); n > 0; n--) {
    s.pay(merchantWallet(b), a, cheapestOf(a), "ring");
  }
}

/** The prober: one payment to every merchant, once a week. */
function planProbes(ctx: PlanContext, slot: number, s: SlotActions): void {
  if (slot % SLOTS_PER_WEEK !== PROBE_SLOT) return;
  for (let k = 0; k < ctx.mix.probers; k++) {
    for (const m of ctx.merchants) {
      const cheapestAny = indexesWhere(m, isListed).sort(
        (i, j) => (m.endpoints[i] as PlanEndpoint).price - (m.endpoints[j] as PlanEndpoint).price,
      )[0];
      if (cheapestAny !== undefined && (m.endpoints[cheapestAny] as PlanEndpoint).price <= 0.05) {
        s.pay(`prober:${k}`, m.id, cheapestAny, "prober");
      }
    }
  }
}
