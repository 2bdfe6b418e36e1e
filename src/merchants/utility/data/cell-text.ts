/**
 * How a value becomes the text of a CSV/TSV cell or an SQL string literal, and how such text is read back.
 * The rules are chosen so that JSON -> CSV -> JSON gives the records back exactly whenever the text of a
 * string value cannot be mistaken for another type (see `isAmbiguousString`).
 */
import { ExactNumber, numberFromText } from "./exact-number.ts";
import { parseLossless, stringifyLossless } from "./lossless-json.ts";
import type { JsonValue } from "./table.ts";

/** A JSON number exactly as `String(n)` writes it: only such text is read back as a number. */
const CANONICAL_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?(e[+-]\d+)?$/;

/**
 * The text of a value in a cell: null is the empty cell, numbers and booleans their JSON text, and nested
 * arrays or objects their compact JSON text (spreadsheets keep it as one cell; it is parsed back below).
 */
export function cellText(value: JsonValue): string {
  if (value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || value instanceof ExactNumber)
    return String(value);
  return stringifyLossless(value);
}

/** JSON text of an object or array, or undefined: how nested values come back from a text cell. */
export function nestedFromText(text: string): JsonValue | undefined {
  const first = text[0];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return parseLossless(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/**
 * A CSV/TSV cell read with type inference: empty is null, `true`/`false` booleans, a canonical number
 * (`12`, `-0.5`, `1e+21`; not `007`, `1.50`, `1e5`, which stay text so nothing is silently rewritten) a
 * number (an `ExactNumber` past a double's precision), JSON object/array text the nested value; anything else the text itself.
 */
export function inferCell(text: string): JsonValue {
  if (text === "") return null;
  if (text === "true") return true;
  if (text === "false") return false;
  if (CANONICAL_NUMBER.test(text)) {
    // Digits a double would change (an id past 2^53) are the exact number that wrote them.
    const n = numberFromText(text);
    if (n instanceof ExactNumber || String(n) === text) return n as JsonValue;
  }
  return nestedFromText(text) ?? text;
}

/**
 * A string that type inference would read as something else: the empty string, `true`, `false`, a
 * canonical number, or JSON object/array text. Only these lose their type through CSV/TSV (and the last
 * kind through SQL) with `infer_types` on; with it off every cell is text.
 */
export function isAmbiguousString(text: string): boolean {
  return inferCell(text) !== text;
}
