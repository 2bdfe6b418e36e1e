/**
 * `/api/scratchpad`: the paying wallet's named text blobs (plain text, JSON or CSV) with optional expiry.
 * `GET /api/scratchpad` lists them (the price list's row); write, read and delete are sub-paths at the same
 * price (the platform routes GET and POST only). They share the wallet's 50 MB quota with `/api/store`.
 */
import { z } from "zod";
import { type AnyEndpoint, defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import {
  MAX_SCRATCHPAD_BYTES,
  MAX_SCRATCHPADS,
  MAX_WRITE_BODY_BYTES,
  NameSchema,
  QUOTA_BYTES,
} from "./limits.ts";
import { ExpiryFields, QuotaFields } from "./params.ts";
import { stateTables } from "./schema.ts";
import {
  CONTENT_TYPES,
  deleteScratchpad,
  listScratchpads,
  readScratchpad,
  writeScratchpad,
} from "./scratchpad-engine.ts";
import { expiryOf, quotaUsage, type StateOptions, walletScope } from "./wallet.ts";

const PRICE = PRICES["/api/scratchpad"];
const Name = NameSchema.describe("Scratchpad name: 1-64 of A-Z a-z 0-9 _ - . (per wallet).");
const Timestamp = z.string().describe("ISO 8601, UTC.");

const ScratchpadInfo = z.object({
  name: z.string(),
  content_type: z.enum(CONTENT_TYPES),
  bytes: z.number().int().describe("UTF-8 bytes of the content, counted against the wallet's quota."),
  created_at: Timestamp,
  updated_at: Timestamp,
  expires_at: Timestamp.nullable(),
});

/** Short names are accepted for the content type too. */
const ContentTypeInput = z
  .enum([...CONTENT_TYPES, "text", "json", "csv"])
  .transform((t) =>
    t === "text" ? "text/plain" : t === "json" ? "application/json" : t === "csv" ? "text/csv" : t,
  )
  .describe("text/plain (default for a new scratchpad), application/json or text/csv; or text, json, csv.");

/** What the scratchpad endpoints answer when the wallet has no such scratchpad (or it expired). */
const NO_SCRATCHPAD = "The wallet has no scratchpad of that name, or it expired (scratchpad_not_found).";

const EXAMPLE_TIME = "2026-11-21T10:00:00.000Z";
const exampleInfo = {
  name: "notes",
  content_type: "text/plain" as const,
  bytes: 11,
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_TIME,
  expires_at: null,
};

/** The scratchpad's endpoints; `options` lets tests shrink the quota or fix the clock. */
export function scratchpadEndpoints(options: StateOptions = {}): AnyEndpoint[] {
  const scopeOf = (ctx: { payer: string; services: { db: Parameters<typeof walletScope>[0] } }) =>
    walletScope(ctx.services.db, ctx.payer, options);
  const tables = stateTables(options);

  const list = defineEndpoint({
    method: "GET",
    path: "/api/scratchpad",
    price: PRICE,
    tables,
    description:
      "Your wallet's scratchpads: names, content types, sizes, updated and expiry dates, and bytes used of the 50 MB per-wallet quota (shared with /api/store).",
    input: z.object({}),
    output: z.object({
      scratchpads: z.array(ScratchpadInfo),
      ...QuotaFields,
    }),
    example: {
      input: {},
      output: { scratchpads: [exampleInfo], bytes_used: 11, quota_bytes: 52428800, bytes_free: 52428789 },
    },
    handler: async (_input, ctx) => {
      const scope = scopeOf(ctx);
      return { scratchpads: await listScratchpads(scope), ...(await quotaUsage(scope)) };
    },
  });

  const write = defineEndpoint({
    method: "POST",
    path: "/api/scratchpad/write",
    price: PRICE,
    effects: ["writes"],
    tables,
    description:
      "Writes one of your scratchpads (text, JSON or CSV): replace (default), create (only if new) or append; optional expiry. 507 past the 50 MB wallet quota, nothing written.",
    input: z.object({
      name: Name,
      content: z
        .string()
        .max(MAX_SCRATCHPAD_BYTES)
        .describe("The text. JSON must parse; CSV must be RFC 4180 with a header line."),
      content_type: ContentTypeInput.optional(),
      mode: z
        .enum(["replace", "create", "append"])
        .default("replace")
        .describe(
          "replace (create or overwrite), create (409 if it exists) or append (text: concatenated; CSV: lines added, a repeated header dropped; JSON: added to the stored array).",
        ),
      ...ExpiryFields,
    }),
    output: ScratchpadInfo,
    example: { input: { name: "notes", content: "hello world" }, output: exampleInfo },
    maxBodyBytes: MAX_WRITE_BODY_BYTES,
    errors: {
      400: `Content that is not its type (invalid_json, invalid_csv), an append of another type (content_type_mismatch) or to a JSON scratchpad that holds no array (not_an_array), more than ${MAX_SCRATCHPAD_BYTES / 1024 / 1024} MB once appended (too_large), an \`expires_at\` in the past (invalid_input). Nothing is written.`,
      409: "mode `create` and the scratchpad exists (already_exists): nothing is written.",
      507: `The write would pass the wallet's ${QUOTA_BYTES / 1024 / 1024} MB quota (store and scratchpads together), or make more than ${MAX_SCRATCHPADS} scratchpads (quota_exceeded): nothing is written.`,
    },
    handler: async (input, ctx) => {
      const scope = scopeOf(ctx);
      return writeScratchpad(scope, {
        name: input.name,
        content: input.content,
        contentType: input.content_type,
        mode: input.mode,
        expiresAt: expiryOf(scope, input),
      });
    },
  });

  const read = defineEndpoint({
    method: "GET",
    path: "/api/scratchpad/read",
    price: PRICE,
    tables,
    description:
      "Reads one of your scratchpads: its content with name, type, size and dates as JSON, or (raw=1) the content alone with its own content type.",
    input: z.object({
      name: Name,
      raw: z
        .enum(["0", "1", "true", "false"])
        .default("0")
        .transform((v) => v === "1" || v === "true")
        .describe("1: answer the content itself (text/plain, application/json or text/csv)."),
    }),
    output: ScratchpadInfo.extend({ content: z.string() }),
    example: { input: { name: "notes" }, output: { ...exampleInfo, content: "hello world" } },
    // `raw=1`: the content with its own type (a JSON scratchpad's is application/json, not this schema).
    outputMedia: ["application/json", "text/plain", "text/csv"],
    errors: { 404: NO_SCRATCHPAD },
    handler: async (input, ctx) => {
      const pad = await readScratchpad(scopeOf(ctx), input.name);
      if (!input.raw) return pad;
      return new Response(pad.content, { headers: { "content-type": `${pad.content_type}; charset=utf-8` } });
    },
  });

  const remove = defineEndpoint({
    method: "POST",
    path: "/api/scratchpad/delete",
    price: PRICE,
    effects: ["writes"],
    tables,
    description: "Deletes one of your scratchpads, freeing its bytes of the quota.",
    input: z.object({ name: Name }),
    output: z.object({ name: z.string(), deleted: z.literal(true), bytes_freed: z.number().int() }),
    example: { input: { name: "notes" }, output: { name: "notes", deleted: true, bytes_freed: 11 } },
    errors: { 404: NO_SCRATCHPAD },
    handler: async (input, ctx) => deleteScratchpad(scopeOf(ctx), input.name),
  });

  return [list, write, read, remove];
}
