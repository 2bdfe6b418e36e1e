/**
 * JSON.parse and JSON.stringify that keep numbers a double cannot hold (see exact-number.ts). Node 20 has
 * neither JSON.rawJSON nor the reviver's source text, so: a scanner finds such number tokens outside strings,
 * they are parsed as marked strings and revived as `ExactNumber`; on the way out `ExactNumber.toJSON` writes
 * a marked string and the marks (with their quotes) are removed.
 */
import { ExactNumber, fitsDouble, EXACT_MARK as MARK } from "./exact-number.ts";

const MARKED = new RegExp(`"${MARK}([^"]*)"`, "g");

/** Only text with a run of 16+ digits (or a 3-digit exponent) can hold a number a double loses. */
const MAYBE_INEXACT = /\d[\d.]{15}|[eE][-+]?\d{3}/;
const NUMBER_TOKEN = /-?\d+(\.\d+)?([eE][-+]?\d+)?/y;

/** Start and end of every number token outside strings whose digits a double would change. */
function inexactNumbers(text: string): [number, number][] {
  const found: [number, number][] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Skip the string, escapes included; an unterminated one ends the scan (JSON.parse reports it).
      i++;
      while (i < text.length && text.charCodeAt(i) !== 34) i += text.charCodeAt(i) === 92 /* \ */ ? 2 : 1;
      i++;
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      NUMBER_TOKEN.lastIndex = i;
      const token = NUMBER_TOKEN.exec(text)?.[0] ?? "-";
      if (!fitsDouble(token)) found.push([i, i + token.length]);
      i += token.length;
    } else i++;
  }
  return found;
}

/** JSON.parse, with numbers a double cannot hold as `ExactNumber`. Errors are JSON.parse's own. */
export function parseLossless(text: string): unknown {
  if (!MAYBE_INEXACT.test(text)) return JSON.parse(text);
  const spans = inexactNumbers(text);
  if (spans.length === 0) return JSON.parse(text);
  let marked = "";
  let from = 0;
  for (const [start, end] of spans) {
    marked += `${text.slice(from, start)}"${MARK}${text.slice(start, end)}"`;
    from = end;
  }
  marked += text.slice(from);
  try {
    return JSON.parse(marked, (_key, value) =>
      typeof value === "string" && value.startsWith(MARK) ? new ExactNumber(value.slice(MARK.length)) : value,
    );
  } catch (error) {
    // Report the error at its offset in the caller's text, not in the marked copy.
    JSON.parse(text);
    throw error;
  }
}

/** JSON.stringify, writing each `ExactNumber` as a bare number with its own digits. */
export function stringifyLossless(value: unknown, indent?: number): string {
  const text = JSON.stringify(value, null, indent);
  return text.includes(MARK) ? text.replace(MARKED, "$1") : text;
}
