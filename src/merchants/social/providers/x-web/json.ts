/** Reading X's untyped JSON without trusting it: each accessor answers its type or a fallback. */

export type Json = Record<string, unknown>;

export const obj = (value: unknown): Json | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;

export const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

export const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** A count: X sends numbers, and a few (views) as decimal strings. */
export const num = (value: unknown): number => {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && /^\d+$/.test(value)) return Number(value);
  return 0;
};

/** A path into nested objects: `at(x, "a", "b")` is `x.a.b` when every step is an object. */
export function at(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    const o = obj(current);
    if (!o) return undefined;
    current = o[key];
  }
  return current;
}

const MONTHS: Record<string, number> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};

/**
 * X's legacy time (`Sun Nov 01 12:00:00 +0000 2026`) as ISO 8601 in UTC; also takes epoch milliseconds
 * (lists' `created_at`) and ISO. The epoch for what cannot be read.
 */
export function isoTime(value: unknown): string {
  if (typeof value === "number" && Number.isFinite(value)) return new Date(value).toISOString();
  const text = str(value) ?? "";
  const m = /^\w{3} (\w{3}) (\d{1,2}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2}) (\d{4})$/.exec(
    text.trim(),
  );
  if (m) {
    const [, mon, day, h, min, s, sign, oh, om, year] = m;
    const month = MONTHS[mon as string];
    if (month !== undefined) {
      const offset = (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
      const utc = Date.UTC(Number(year), month, Number(day), Number(h), Number(min), Number(s)) - offset;
      return new Date(utc).toISOString();
    }
  }
  if (/^\d{12,}$/.test(text)) return new Date(Number(text)).toISOString();
  const parsed = Date.parse(text);
  return new Date(Number.isFinite(parsed) ? parsed : 0).toISOString();
}
