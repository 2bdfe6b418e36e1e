/**
 * Numbers a double cannot hold: tweet ids past 2^53, decimals with more significant digits than 17, or
 * exponents beyond a double's range. They are kept as their text, in a `ExactNumber`, so every output writes
 * the same digits: JSON/NDJSON as a bare number, CSV/TSV/SQL as the digits.
 */

import { randomUUID } from "node:crypto";

/**
 * How JSON.stringify writes an `ExactNumber`: a string with this mark, which `stringifyLossless`
 * (lossless-json.ts) turns into the bare number. A per-process random nonce, so no string in the data can
 * be taken for one.
 */
export const EXACT_MARK = `~exact-${randomUUID()}:`;

/** The text of a JSON number the input gave, kept because `Number(text)` would change its digits. */
export class ExactNumber {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
  toJSON(): string {
    return `${EXACT_MARK}${this.text}`;
  }
}

/** JSON's number grammar: only such text may be written into JSON as a bare number. */
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/;

/** The significant digits of a number's text: no sign, point, exponent, or leading/trailing zeros. */
function significant(text: string): string {
  const mantissa = text.replace(/[eE].*$/, "").replace(/[-+.]/g, "");
  return mantissa.replace(/^0+/, "").replace(/0+$/, "");
}

/** Whether `Number(text)` keeps every significant digit of `text` (and is finite). */
export function fitsDouble(text: string): boolean {
  const n = Number(text);
  const digits = significant(text);
  if (!Number.isFinite(n) || (n === 0 && digits !== "")) return false; // overflow or underflow (1e-400)
  // Up to 15 significant digits always survive a double; only longer text needs the comparison.
  return digits.length <= 15 || digits === significant(String(n));
}

/**
 * A number from its text: a JS number when a double holds it exactly, else an `ExactNumber`. Text that is
 * not a JSON number (SQL's `+1`, `.5`) and does not fit a double gives undefined: the caller keeps it as text.
 */
export function numberFromText(text: string): number | ExactNumber | undefined {
  if (fitsDouble(text)) return Number(text);
  return JSON_NUMBER.test(text) ? new ExactNumber(text) : undefined;
}
