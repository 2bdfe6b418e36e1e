/**
 * What a metered (/upto) chat call charges: its input and output tokens at the tier's rates, rounded up to
 * the next atomic unit of USDC (a millionth of a dollar), never above what the buyer authorised, and
 * nothing for a call that produced no output. The same rule is stated in the OpenAPI document and docs/.
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
 * authorised up to `maxAtomic`.
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
