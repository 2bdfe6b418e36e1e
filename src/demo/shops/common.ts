import { z } from "zod";

/**
 * A whole number from the query string, checked before any payment is asked for. A pattern rather than
 * `z.coerce.number()`, which would read an empty `count=` as 0 and "1e2" as 100.
 */
export const queryInt = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^[+-]?\d{1,16}$/, "must be a whole number, e.g. 5")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** A yes/no switch from the query string: "true"/"false" (or "1"/"0"). */
export const queryFlag = () =>
  z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
