import type { PriceUsd } from "./endpoint.ts";

/**
 * A dollar price in the token's atomic units, exactly: "0.001" with 6 decimals is 1000n. Decimal string
 * arithmetic, never floating point; a price finer than the token can express is a catalogue mistake.
 */
export function priceToAtomic(price: PriceUsd, decimals: number): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(price);
  if (!match) throw new Error(`price "${price}" is not a plain decimal number of dollars`);
  const whole = match[1] ?? "0";
  const fraction = (match[2] ?? "").replace(/0+$/, "");
  if (fraction.length > decimals) {
    throw new Error(`price "${price}" has more than ${decimals} decimals: the token cannot be charged it`);
  }
  return BigInt(whole + fraction.padEnd(decimals, "0"));
}
