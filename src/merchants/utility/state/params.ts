/**
 * Request fields shared by the state endpoints: the equality filter (a JSON object in a query string or
 * a body) and the expiry fields.
 */
import { z } from "zod";
import { ExpiresAtSchema, TtlSchema } from "./limits.ts";

const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** `{"field": value, ...}`: rows whose top-level fields equal these values (JSONB containment). */
export const FilterObject = z
  .record(z.string().min(1).max(256), Scalar)
  .describe('Rows whose top-level fields equal these values, e.g. {"city": "Lisbon", "active": true}.');

/** The same filter as a query parameter: JSON text. */
export const FilterQuery = z
  .string()
  .max(4096)
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "where must be a JSON object" });
      return z.NEVER;
    }
  })
  .pipe(FilterObject)
  .describe(
    'Equality filter as JSON, e.g. where={"city":"Lisbon"}: rows whose top-level fields equal these values.',
  );

/** Optional expiry fields of a write: a date or seconds from now; `expires_at: null` removes it. */
export const ExpiryFields = {
  expires_at: ExpiresAtSchema.nullable().optional(),
  ttl_seconds: TtlSchema.optional(),
};

/** The quota figures of a wallet's listing (`quotaUsage`): both kinds of state count against one quota. */
export const QuotaFields = {
  bytes_used: z.number().int().describe("The wallet's bytes: store collections and scratchpads together."),
  quota_bytes: z.number().int(),
  bytes_free: z.number().int(),
};
