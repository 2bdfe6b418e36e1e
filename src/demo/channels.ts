/**
 * Payment channels in the plan (x402 batch-settlement, issue 53): agents that pay a merchant through a
 * channel, and a gamer that plays the one pattern channels add.
 *
 * - A channel agent keeps a session a day with one merchant that offers channels: its first call of the day
 *   deposits (the SDK client's deposit, the server's suggested ten calls), every call is a voucher and no
 *   transaction, and at the day's end it asks for the rest back (a cooperative refund, in which the merchant
 *   claims what the vouchers charged). Each day's session is a channel of its own (its salt is the day), so
 *   a session never depends on a client's memory of an earlier one.
 * - The channel farm: a merchant pays a private wallet, which opens channels to that merchant and pays it
 *   back through vouchers: the merchant funding its own revenue, which the claims carry on chain
 *   (docs/screens.md, "Channels"). Played against the first merchant that offers channels and is not one of
 *   the genuine-demand-only merchants (the utility API in the demo).
 *
 * Drawn after everything else, from the slot's generator, so the rest of the plan is what it was; a world
 * saved before channels existed plays none (mix.ts, `CHANNELS_OFF`).
 */
import type { Mix } from "./mix.ts";
import { indexesWhere, range } from "./plan-picks.ts";
import {
  type Action,
  type Behaviour,
  merchantWallet,
  type PlanContext,
  type PlanEndpoint,
  type PlanMerchant,
  SLOTS_PER_WEEK,
  type WalletId,
} from "./plan-types.ts";
import type { SlotActions } from "./slot-actions.ts";

/** Slots in a session: a day of the week's 336. */
export const SESSION_SLOTS = 48;
/** The weekly slot the farm's merchant pays it, and the first it buys in. */
const FARM_FUND = 2;
/** What the exchange pays each channel agent: on its first week, then every week. */
const AGENT_FIRST_USD = 20;
const AGENT_WEEKLY_USD = 5;
/** What the farm's merchant is minted once, and pays the farm every week. */
const FARM_MINT_USD = 50;
const FARM_WEEKLY_USD = 2;

export const CHANNEL_FARM: WalletId = "channel-farm";

/** The channels' wallets, in a fixed order (their keys follow the population's). */
export function channelWallets(mix: Mix): WalletId[] {
  return [
    ...range(mix.channelAgents).map((k) => `channel:${k}`),
    ...(mix.channelFarmCallsPerWeek > 0 ? [CHANNEL_FARM] : []),
  ];
}

/** Whether an endpoint may be paid through a channel. */
const offersChannels = (e: PlanEndpoint) => e.channels === true;

/** The merchants that offer channels, in the plan's order. */
function channelMerchants(ctx: PlanContext): PlanMerchant[] {
  return ctx.merchants.filter((m) => m.endpoints.some(offersChannels));
}

/** The merchant the channel farm is played against, or undefined where none fits. */
export function channelFarmTarget(ctx: PlanContext): string | undefined {
  return channelMerchants(ctx).find((m) => !ctx.roles.genuineOnly.includes(m.id))?.id;
}

/** The session a slot belongs to: its day since the chain's week began (the channel's salt). */
export function sessionOf(slot: number): number {
  return Math.floor(slot / SESSION_SLOTS);
}

/** The channels' money, calls and refunds in the slot. */
export function planChannels(ctx: PlanContext, slot: number, s: SlotActions, busy: number): void {
  const { mix } = ctx;
  const w = slot % SLOTS_PER_WEEK;
  const merchants = channelMerchants(ctx);
  const session = sessionOf(slot);
  const lastOfSession = slot % SESSION_SLOTS === SESSION_SLOTS - 1;
  if (merchants.length > 0 && mix.channelCallsPerWeek > 0) {
    for (let k = 0; k < mix.channelAgents; k++) {
      const from = `channel:${k}`;
      const merchant = merchants[k % merchants.length] as PlanMerchant;
      if (w === 0) s.send("exchange", from, slot === 0 ? AGENT_FIRST_USD : AGENT_WEEKLY_USD);
      for (let n = s.r.poisson((mix.channelCallsPerWeek / SLOTS_PER_WEEK) * busy); n > 0; n--) {
        channelCall(s, from, merchant, session, "agent");
      }
      if (lastOfSession) s.add([refund(s, from, merchant.id, session, "agent")]);
    }
  }
  const target = channelFarmTarget(ctx);
  if (target !== undefined && mix.channelFarmCallsPerWeek > 0) {
    const merchant = merchants.find((m) => m.id === target) as PlanMerchant;
    if (slot === 0) s.mint(merchantWallet(target), FARM_MINT_USD);
    if (w === FARM_FUND) s.send(merchantWallet(target), CHANNEL_FARM, FARM_WEEKLY_USD, "merchant_funded");
    if (w >= FARM_FUND || slot >= SLOTS_PER_WEEK) {
      for (let n = s.r.poisson(mix.channelFarmCallsPerWeek / SLOTS_PER_WEEK); n > 0; n--) {
        channelCall(s, CHANNEL_FARM, merchant, session, "merchant_funded");
      }
      if (lastOfSession) s.add([refund(s, CHANNEL_FARM, target, session, "merchant_funded")]);
    }
  }
}

/** A call through the payer's channel of `session`: a metered endpoint's of varying work. */
function channelCall(
  s: SlotActions,
  from: WalletId,
  merchant: PlanMerchant,
  session: number,
  behaviour: Behaviour,
): void {
  const endpoint = s.r.pick(indexesWhere(merchant, offersChannels));
  const sized = (merchant.endpoints[endpoint] as PlanEndpoint).sized;
  s.pay(from, merchant.id, endpoint, behaviour, sized?.(s.r.next()), session);
}

/** The session's end: the payer asks for what its channel holds back, after the slot's calls. */
function refund(
  s: SlotActions,
  from: WalletId,
  merchant: string,
  session: number,
  behaviour: Behaviour,
): Extract<Action, { type: "refund" }> {
  return { type: "refund", at: s.start + s.length - 1, from, merchant, session, behaviour };
}

/** Who pays through a channel wallet, for the ground truth: undefined for a wallet that is not a channel's. */
export function channelBehaviour(id: WalletId): Behaviour | undefined {
  if (id === CHANNEL_FARM) return "merchant_funded";
  return id.startsWith("channel:") ? "agent" : undefined;
}
