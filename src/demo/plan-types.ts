/**
 * The plan's vocabulary: slots, behaviours, merchants and endpoints as the plan sees them, wallets and
 * actions. A file of its own: plan.ts runs the plan's parts (demand.ts, patterns.ts, evasions.ts, ...),
 * and they speak these terms, so they cannot import them from plan.ts. plan.ts exports them still.
 */
import type { Mix } from "./mix.ts";

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
