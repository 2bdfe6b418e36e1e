/**
 * The limits of the per-wallet state (`/api/store`, `/api/scratchpad`) and the names they accept. One
 * place, so the endpoints' docs, the engine's checks and the tests agree.
 */
import { z } from "zod";

/** 50 MB per wallet (docs/platform.md), shared by its collections and its scratchpads (one budget to reason about). */
export const QUOTA_BYTES = 50 * 1024 * 1024;

/** One row as stored (its JSONB text) at most; comparable stores take 16 KB rows. */
export const MAX_ROW_BYTES = 16 * 1024;

/** Rows per insert: a bounded transaction, as comparable stores allow. */
export const MAX_ROWS_PER_WRITE = 1000;

/** Rows per page of a read; the default keeps answers small. */
export const MAX_PAGE_SIZE = 1000;
export const DEFAULT_PAGE_SIZE = 100;

/**
 * Collections and scratchpads per wallet: an empty one costs no quota bytes, so their number is bounded
 * on its own.
 */
export const MAX_COLLECTIONS = 1000;
export const MAX_SCRATCHPADS = 1000;

/** One scratchpad's content at most (a write body must fit; the quota bounds the total). */
export const MAX_SCRATCHPAD_BYTES = 8 * 1024 * 1024;

/** A request body: 1,000 rows of 16 KB, or a full scratchpad, in JSON with room for escaping. */
export const MAX_WRITE_BODY_BYTES = 20 * 1024 * 1024;

/**
 * Names of collections and scratchpads: 1-64 characters, letters, digits, `_`, `-` and `.`, starting with a
 * letter or digit. Safe in URLs, file names and CSV headers without quoting.
 */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const NameSchema = z
  .string()
  .regex(NAME_PATTERN, "1-64 characters: letters, digits, '_', '-' and '.', starting with a letter or digit");

/**
 * An expiry date as callers send it: an ISO 8601 date-time with a zone (`2026-12-31T00:00:00Z`). A pattern
 * rather than zod's `z.iso.datetime()`: its JSON Schema `format: date-time` makes the Bazaar validator of
 * `@x402/extensions` (Ajv without formats) log a warning on every payment. Dates in the past are refused
 * where set, since the data would vanish on the spot.
 */
export const ExpiresAtSchema = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/,
    "an ISO 8601 date-time with zone",
  )
  .refine((s) => !Number.isNaN(Date.parse(s)), "not a real date")
  .describe("Expiry date, ISO 8601 with zone; the data is invisible from then on and purged later.");

/** Expiry as a duration from now, in seconds (at most ten years); the alternative to `expires_at`. */
export const TtlSchema = z.coerce
  .number()
  .int()
  .min(1)
  .max(10 * 365 * 24 * 3600)
  .describe("Expiry as seconds from now (alternative to `expires_at`).");
