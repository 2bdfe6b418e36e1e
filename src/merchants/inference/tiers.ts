/**
 * The inference merchant's price list (docs/inference.md): the default route and the 15 tiers, each with its per-call
 * price, its /upto maximum where the spec lists one, and its limits. Prices are written here exactly as the
 * spec lists them and nowhere else; the model behind a route and its per-token rates are configuration
 * (`X402M_INFERENCE_*`, src/merchants/inference/settings.ts), not code.
 *
 * Aliases are brand-free and stable: `t1` .. `t15` name the tiers by their rank in the price table (docs/inference.md) (ascending
 * per-call price), whatever model the operator puts behind them. A path once published is never renamed.
 */
import type { PriceUsd } from "../../merchant-kit/index.ts";
import { priceToAtomic } from "../../merchant-kit/index.ts";
import type { TokenRates } from "./metering.ts";

/** What one call may ask for and send; checked before payment (the endpoint's input schema). */
export interface TierLimits {
  /** `max_tokens` (or `max_completion_tokens`): accepted range, and the value used when the call names none. */
  maxTokens: { min: number; max: number; default: number };
  /** Characters of all messages' text together. */
  inputCharacters: number;
  /** Characters of any one message's text, when the tier bounds it. */
  messageCharacters?: number;
  /** The reply's reasoning tokens (a reasoning model's) count toward `max_tokens` (tier 8). */
  reasoningCountsAsOutput?: boolean;
}

export interface Tier {
  /** The tier's number in docs/inference.md's table; null for the default route (`/v1/chat/completions`). */
  number: number | null;
  /** The path segment of `/v1/chat/completions/_t/<alias>`, and the configuration's name for the route. */
  alias: string;
  /** Per-call price (`exact`). */
  price: PriceUsd;
  /** The /upto route's price, the most a metered call may cost; null when the tier has no /upto route. */
  uptoPrice: PriceUsd | null;
  limits: TierLimits;
  /** The price table's "Stated constraints" column (docs/inference.md), as it reads there ("none" when it states none). */
  stated: string;
}

/**
 * What the project allows where the spec states no constraint, so that what one call can make an upstream
 * spend stays bounded: `max_tokens` up to 4,096 (1,024 when not given), and 200,000 characters of input
 * (about 50,000 tokens of English).
 */
export const GENERAL_LIMITS: TierLimits = {
  maxTokens: { min: 1, max: 4096, default: 1024 },
  inputCharacters: 200_000,
};

const tier = (
  number: number,
  price: PriceUsd,
  uptoPrice: PriceUsd | null,
  stated = "none",
  limits: Partial<TierLimits> = {},
): Tier => ({
  number,
  alias: `t${number}`,
  price,
  uptoPrice,
  limits: { ...GENERAL_LIMITS, ...limits },
  stated,
});

/** Spec 4.5's tier table, in its order. */
export const TIERS: readonly Tier[] = [
  tier(1, "0.002", null),
  tier(2, "0.002237", "0.015187"),
  tier(3, "0.003139", "0.004049"),
  tier(4, "0.005214", "0.041977"),
  tier(5, "0.005783", "0.043205", "max_tokens 512-2048, default 1024", {
    maxTokens: { min: 512, max: 2048, default: 1024 },
  }),
  tier(6, "0.007016", "0.044559"),
  tier(7, "0.007016", null),
  tier(
    8,
    "0.007157",
    "0.019977",
    "max_tokens 512-4096, default 4096; reasoning tokens count toward max_tokens",
    { maxTokens: { min: 512, max: 4096, default: 4096 }, reasoningCountsAsOutput: true },
  ),
  tier(9, "0.010497", null),
  tier(10, "0.011974", "0.028233"),
  tier(11, "0.013259", null),
  tier(12, "0.01385", null, "input up to 36K characters, output 1024 tokens", {
    maxTokens: { min: 1, max: 1024, default: 1024 },
    inputCharacters: 36_000,
  }),
  tier(13, "0.016673", null),
  tier(14, "0.023386", null, "input 12K characters per message, output 2048 tokens", {
    maxTokens: { min: 1, max: 2048, default: 2048 },
    messageCharacters: 12_000,
  }),
  tier(15, "0.037526", null),
];

/** `/v1/chat/completions`: the default model, at its documented price (docs/inference.md), with the general limits. */
export const DEFAULT_ROUTE: Tier = {
  number: null,
  alias: "default",
  price: "0.002856",
  uptoPrice: null,
  limits: GENERAL_LIMITS,
  stated: "none",
};

/** The default route and every tier: what the configuration names (`default`, `t1` .. `t15`). */
export const ROUTES: readonly Tier[] = [DEFAULT_ROUTE, ...TIERS];

/**
 * The configuration's infix of a route's settings: `X402M_INFERENCE_<infix>_MODEL`, `..._RATES`
 * (`DEFAULT`, `TIER_1` .. `TIER_15`).
 */
export function settingInfix(route: Tier): string {
  return route.number === null ? "DEFAULT" : `TIER_${route.number}`;
}

/**
 * Rates used when the operator names none (the offline engine, the demo): the route's per-call price buys
 * 1,000 input and 1,000 output tokens, output costing four times input. So input is 200 times the price
 * and output 800 times, in dollars per million tokens (tier 1, $0.002: 0.4 and 1.6).
 */
export function defaultRates(route: Tier): TokenRates {
  const micro = priceToAtomic(route.price, 6);
  return { inputPerMillion: microDollars(micro * 200n), outputPerMillion: microDollars(micro * 800n) };
}

/** Millionths of a dollar as a plain decimal string ("400000" -> "0.4"). */
function microDollars(micro: bigint): string {
  const whole = micro / 1_000_000n;
  const fraction = (micro % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

/** The model name a route answers as when the operator names none. */
export function defaultModel(route: Tier): string {
  return `offline-${route.alias}`;
}
