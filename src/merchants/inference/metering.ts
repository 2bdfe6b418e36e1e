/**
 * What a metered (/upto) chat call charges: its input and output tokens at the tier's rates, rounded up to
 * the next atomic unit of USDC (a millionth of a dollar), and nothing for a call that produced no output.
 * The work is kept within what the buyer authorised, not the charge: before any work, a call's output is
 * bounded to what the maximum covers after its prompt (`outputTokensCovered`), and a call whose prompt
 * leaves too little is refused (chat.ts), so the charge of a call that ran is its usage, never a cap below
 * it. The same rule is stated in the OpenAPI document and docs/inference.md.
 *
 * Rates are in US dollars per million tokens, as providers list them. A dollar per million tokens is one
 * atomic unit of USDC per token, so a rate is kept as an exact count of billionths of an atomic unit per
 * token and the cost computed in integers.
 */

/** A tier's per-token rates, in US dollars per million tokens (decimal strings, e.g. "0.15"). */
export interface TokenRates {
  inputPerMillion: string;
  outputPerMillion: string;
}

const SCALE = 1_000_000_000n;
const DECIMAL = /^(\d+)(?:\.(\d{1,9}))?$/;

/** `rate` (dollars per million tokens) in billionths of an atomic unit per token; refuses what it cannot hold exactly. */
export function parseRate(rate: string): bigint {
  const match = DECIMAL.exec(rate);
  if (!match)
    throw new Error(
      `a token rate is a decimal number of dollars per million tokens with at most 9 decimals, not "${rate}"`,
    );
  return BigInt(match[1] as string) * SCALE + BigInt((match[2] ?? "").padEnd(9, "0"));
}

/**
 * The atomic units of USDC to settle for a call that read `promptTokens` and wrote `completionTokens`,
 * authorised up to `maxAtomic`. The cap binds only where an engine counted more than the call was bounded
 * by (an upstream whose tokenizer counts a prompt longer than o200k_base does): the buyer signed no more.
 */
export function meteredAmount(
  usage: { promptTokens: number; completionTokens: number },
  rates: TokenRates,
  maxAtomic: bigint,
): bigint {
  if (usage.completionTokens <= 0) return 0n;
  const billionths =
    BigInt(usage.promptTokens) * parseRate(rates.inputPerMillion) +
    BigInt(usage.completionTokens) * parseRate(rates.outputPerMillion);
  const atomic = (billionths + SCALE - 1n) / SCALE;
  return atomic < maxAtomic ? atomic : maxAtomic;
}

/**
 * The most output tokens a call may be given after a prompt of `promptTokens`, so that its charge at
 * `rates` never exceeds `max`: the work is kept under what the buyer authorised, rather than the charge
 * capped below the work. Negative when the prompt alone costs more than `max`; unbounded (`Infinity`)
 * when output is free.
 */
export function outputTokensCovered(promptTokens: number, rates: TokenRates, max: bigint): number {
  const left = max * SCALE - BigInt(promptTokens) * parseRate(rates.inputPerMillion);
  if (left < 0n) return -1;
  const output = parseRate(rates.outputPerMillion);
  if (output === 0n) return Number.POSITIVE_INFINITY;
  return Number(left / output);
}

/** The longest prompt, in tokens, that still leaves `outputTokens` covered by `max` at `rates`. */
export function promptTokensCovered(outputTokens: number, rates: TokenRates, max: bigint): number {
  const left = max * SCALE - BigInt(outputTokens) * parseRate(rates.outputPerMillion);
  if (left < 0n) return -1;
  const input = parseRate(rates.inputPerMillion);
  if (input === 0n) return Number.POSITIVE_INFINITY;
  return Number(left / input);
}

/** The `max_tokens` at which a route's documents state the longest prompt its maximum covers. */
const REFERENCE_MAX_TOKENS = 1024;

/**
 * What a metered route's maximum buys at its rates, as the route's documents publish it: the most output
 * tokens with the shortest prompt (within the route's `max_tokens` range), and the longest prompt at a
 * reference `max_tokens` (the route's default, 1,024 where that is more, or fewer where the maximum covers
 * fewer), so that a buyer sees the maximum is the rates times the largest call the route takes.
 */
export function meteredCoverage(
  rates: TokenRates,
  max: bigint,
  maxTokens: { min: number; max: number; default: number },
): { outputTokens: number; at: { maxTokens: number; promptTokens: number } } {
  const outputTokens = Math.min(maxTokens.max, outputTokensCovered(0, rates, max));
  const reference = Math.min(maxTokens.default, REFERENCE_MAX_TOKENS, outputTokens);
  return {
    outputTokens,
    at: { maxTokens: reference, promptTokens: Math.max(0, promptTokensCovered(reference, rates, max)) },
  };
}
