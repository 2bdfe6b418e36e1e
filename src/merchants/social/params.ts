/**
 * The social-data API's query parameters (docs/social.md; "numeric" means a decimal digit string), with the
 * messages the live service's clients know ("Missing required query parameter: username"). Every check is
 * a 400 before payment, never charged.
 */
import { z } from "zod";

/** A required query parameter: absent or empty is "Missing required query parameter: NAME". */
function required(name: string) {
  return z.string({
    error: (issue) => (issue.input === undefined ? `Missing required query parameter: ${name}` : undefined),
  });
}

/** X's IDs: 1 to 19 decimal digits (they pass 2^53: kept as strings). */
export const NUMERIC_ID = /^\d{1,19}$/;

export const numericId = (name: string, what: string) =>
  required(name)
    .min(1, `Missing required query parameter: ${name}`)
    .regex(NUMERIC_ID, `${name} must be a numeric ${what} ID (decimal digits)`)
    .describe(`Numeric ${what} ID (decimal digits, as a string).`);

/** A screen name: 1 to 15 letters, digits or underscores; a leading `@` is dropped. */
export const username = (name = "username") =>
  required(name)
    .transform((s) => s.trim().replace(/^@/, ""))
    .pipe(
      z
        .string()
        .min(1, `Missing required query parameter: ${name}`)
        .regex(/^\w{1,15}$/, `${name} must be an X screen name: 1 to 15 letters, digits or underscores`),
    )
    .describe("Screen name (with or without @).");

export const nextToken = z
  .string()
  .min(1)
  .max(4096)
  .optional()
  .describe("The previous page's meta.next_token, to get the next page.");

/** Session cookies of the caller's X account, taken as query parameters by the live service. */
export const cookie = (name: string, what: string) =>
  required(name)
    .min(1, `Missing required query parameter: ${name}`)
    .max(512)
    .regex(/^[A-Za-z0-9%_-]+$/, `${name} must be the value of your X ${what} cookie`)
    .describe(
      `The value of your X session's ${what} cookie: used for this call only, never stored or logged.`,
    );

/** Comma-separated numeric IDs, 1 to `max`, duplicates dropped. */
export const idList = (name: string, max: number) =>
  required(name)
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(
      z
        .array(z.string().regex(NUMERIC_ID, `${name} must be numeric tweet IDs separated by commas`))
        .min(1, `Missing required query parameter: ${name}`)
        .max(max, `${name} holds at most ${max} IDs`)
        .transform((ids) => [...new Set(ids)]),
    )
    .describe(`Comma-separated numeric tweet IDs, at most ${max}.`);

/** A non-negative count filter given as a query string. */
export const minCount = (what: string) =>
  z.coerce.number().int().min(0).max(1_000_000_000).optional().describe(`At least this many ${what}.`);

/** Space- or comma-separated words; `#` and `@` prefixes dropped where `strip` says. */
export const wordList = (what: string, strip?: RegExp) =>
  z
    .string()
    .max(512)
    .transform((s) =>
      s
        .split(/[\s,]+/)
        .map((w) => (strip ? w.replace(strip, "") : w))
        .filter(Boolean),
    )
    .optional()
    .describe(what);

export const day = (what: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, "a date as YYYY-MM-DD")
    .refine((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)), "a real date")
    .optional()
    .describe(what);
