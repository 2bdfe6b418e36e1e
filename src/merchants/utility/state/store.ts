/**
 * `/api/store`: the paying wallet's collections of JSON rows (spec 4.4 and 5.4). `GET /api/store` lists
 * them (the spec's row); the operations are sub-paths at the same price, since the platform routes GET
 * and POST only: insert (JSON rows or CSV), query (paginated, equality filter), export (JSON or CSV),
 * delete (rows), drop (the collection) and expire. The wallet is the verified payer: nothing else names it.
 */
import { z } from "zod";
import { BadInputError } from "../../../common/errors.ts";
import { type AnyEndpoint, defineEndpoint } from "../../../merchant-kit/endpoint.ts";
import { parseCsvRows, rowsToCsv } from "./csv.ts";
import {
  DEFAULT_PAGE_SIZE,
  MAX_COLLECTIONS,
  MAX_PAGE_SIZE,
  MAX_ROW_BYTES,
  MAX_ROWS_PER_WRITE,
  MAX_WRITE_BODY_BYTES,
  NameSchema,
  QUOTA_BYTES,
} from "./limits.ts";
import { ExpiryFields, FilterObject, FilterQuery, QuotaFields } from "./params.ts";
import { stateTables } from "./schema.ts";
import {
  deleteRows,
  dropCollection,
  exportRows,
  insertRows,
  listCollections,
  readRows,
  setCollectionExpiry,
} from "./store-engine.ts";
import { expiryOf, quotaUsage, type StateOptions, walletScope } from "./wallet.ts";

const PRICE = "0.001";
const Collection = NameSchema.describe("Collection name: 1-64 of A-Z a-z 0-9 _ - . (per wallet).");
const RowData = z.record(z.string(), z.unknown());
const Timestamp = z.string().describe("ISO 8601, UTC.");

const CollectionInfo = z.object({
  name: z.string(),
  rows: z.number().int(),
  bytes: z.number().int().describe("Bytes of its rows as stored (JSONB text), counted against the quota."),
  created_at: Timestamp,
  expires_at: Timestamp.nullable(),
});

/** What every store endpoint answers when the wallet has no such collection (or it expired). */
const NO_COLLECTION = "The wallet has no collection of that name, or it expired (collection_not_found).";
/** What an expiry in the past is refused with, found once the payment is verified. */
const PAST_EXPIRY = "An `expires_at` in the past, or both `expires_at` and `ttl_seconds` (invalid_input).";

const EXAMPLE_TIME = "2026-11-21T10:00:00.000Z";
const exampleCollection = { name: "leads", rows: 2, bytes: 74, created_at: EXAMPLE_TIME, expires_at: null };

/** The store's endpoints; `options` lets tests shrink the quota or fix the clock. */
export function storeEndpoints(options: StateOptions = {}): AnyEndpoint[] {
  const scopeOf = (ctx: { payer: string; services: { db: Parameters<typeof walletScope>[0] } }) =>
    walletScope(ctx.services.db, ctx.payer, options);
  const tables = stateTables(options);

  const list = defineEndpoint({
    method: "GET",
    path: "/api/store",
    price: PRICE,
    tables,
    description:
      "Your wallet's data store: lists your collections (names, row counts, created dates), total rows and storage bytes used against the 50 MB per-wallet quota.",
    input: z.object({}),
    output: z.object({
      collections: z.array(CollectionInfo),
      total_rows: z.number().int(),
      ...QuotaFields,
    }),
    example: {
      input: {},
      output: {
        collections: [exampleCollection],
        total_rows: 2,
        bytes_used: 74,
        quota_bytes: 52428800,
        bytes_free: 52428726,
      },
    },
    handler: async (_input, ctx) => {
      const scope = scopeOf(ctx);
      const collections = await listCollections(scope);
      return {
        collections,
        total_rows: collections.reduce((n, c) => n + c.rows, 0),
        ...(await quotaUsage(scope)),
      };
    },
  });

  const insert = defineEndpoint({
    method: "POST",
    path: "/api/store/insert",
    price: PRICE,
    effects: ["writes"],
    tables,
    description: `Inserts rows into one of your collections, creating it if needed: a JSON array of objects (\`rows\`) or CSV text with a header line (\`csv\`); at most ${MAX_ROWS_PER_WRITE} rows of ${MAX_ROW_BYTES / 1024} KB each per call; optional expiry. 507 past the 50 MB wallet quota, nothing written.`,
    input: z
      .object({
        collection: Collection,
        rows: z.array(RowData).max(MAX_ROWS_PER_WRITE).optional().describe("Rows as JSON objects."),
        csv: z.string().optional().describe("Rows as CSV (RFC 4180) with a header line of field names."),
        typed: z
          .boolean()
          .default(true)
          .describe(
            "CSV only: turn numbers, true/false and JSON cells into typed values (default), else keep strings.",
          ),
        ...ExpiryFields,
      })
      .refine((b) => (b.rows === undefined) !== (b.csv === undefined), {
        message: "give the rows as `rows` (JSON) or `csv`, one of them",
        path: ["rows"],
      }),
    output: z.object({
      collection: CollectionInfo,
      inserted: z.number().int(),
      first_id: z.string().nullable().describe("Id of the first inserted row; the others follow in order."),
    }),
    example: {
      input: {
        collection: "leads",
        rows: [
          { name: "Ada", city: "Lisbon" },
          { name: "Linus", city: "Oslo" },
        ],
      },
      output: { collection: exampleCollection, inserted: 2, first_id: "1" },
    },
    maxBodyBytes: MAX_WRITE_BODY_BYTES,
    errors: {
      400: `CSV that does not parse (invalid_csv), more than ${MAX_ROWS_PER_WRITE} rows of it (too_many_rows), a row over ${MAX_ROW_BYTES / 1024} KB as stored (row_too_large). ${PAST_EXPIRY} Nothing is written.`,
      507: `The write would pass the wallet's ${QUOTA_BYTES / 1024 / 1024} MB quota (store and scratchpads together), or make more than ${MAX_COLLECTIONS} collections (quota_exceeded): nothing is written.`,
    },
    handler: async (input, ctx) => {
      const rows = input.rows ?? parseCsvRows(input.csv ?? "", { typed: input.typed });
      if (rows.length > MAX_ROWS_PER_WRITE) {
        throw new BadInputError(`at most ${MAX_ROWS_PER_WRITE} rows per call`, "too_many_rows");
      }
      const scope = scopeOf(ctx);
      return insertRows(scope, input.collection, rows, expiryOf(scope, input));
    },
  });

  const query = defineEndpoint({
    method: "GET",
    path: "/api/store/query",
    price: PRICE,
    tables,
    description:
      "Reads rows of one of your collections in insertion order, paginated with next_token, optionally filtered by field equality (where).",
    input: z.object({
      collection: Collection,
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(MAX_PAGE_SIZE)
        .default(DEFAULT_PAGE_SIZE)
        .describe(`Rows per page, 1-${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}.`),
      next_token: z.string().max(100).optional().describe("The cursor the previous page returned."),
      where: FilterQuery.optional(),
    }),
    output: z.object({
      collection: z.string(),
      rows: z.array(z.object({ id: z.string(), created_at: Timestamp, data: RowData })),
      next_token: z.string().nullable().describe("Pass it back for the next page; null on the last page."),
    }),
    example: {
      input: { collection: "leads", limit: 1 },
      output: {
        collection: "leads",
        rows: [{ id: "1", created_at: EXAMPLE_TIME, data: { name: "Ada", city: "Lisbon" } }],
        next_token: "cjox",
      },
    },
    errors: {
      400: "A `next_token` this endpoint did not give for this collection (invalid_next_token).",
      404: NO_COLLECTION,
    },
    handler: async (input, ctx) =>
      readRows(scopeOf(ctx), input.collection, {
        limit: input.limit,
        nextToken: input.next_token,
        where: input.where,
      }),
  });

  const exportEndpoint = defineEndpoint({
    method: "GET",
    path: "/api/store/export",
    price: PRICE,
    tables,
    description:
      "Exports one of your collections whole (optionally filtered) as a JSON array of rows or as CSV (RFC 4180, header of every field).",
    input: z.object({
      collection: Collection,
      format: z.enum(["json", "csv"]).default("json").describe("json (default) or csv."),
      where: FilterQuery.optional(),
    }),
    output: z
      .array(RowData)
      .describe("format=json: the rows' data as a JSON array; format=csv: a text/csv document instead."),
    example: {
      input: { collection: "leads", format: "json" },
      output: [
        { name: "Ada", city: "Lisbon" },
        { name: "Linus", city: "Oslo" },
      ],
    },
    timeoutMs: 60_000,
    outputMedia: ["application/json", "text/csv"],
    errors: { 404: NO_COLLECTION },
    handler: async (input, ctx) => {
      const rows = await exportRows(scopeOf(ctx), input.collection, input.where);
      if (input.format === "json") return rows;
      return new Response(rowsToCsv(rows), {
        headers: {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="${input.collection}.csv"`,
        },
      });
    },
  });

  const deleteEndpoint = defineEndpoint({
    method: "POST",
    path: "/api/store/delete",
    price: PRICE,
    effects: ["writes"],
    tables,
    description:
      "Deletes rows of one of your collections: by id (ids) or by field equality (where; {} deletes every row). The collection stays; use /api/store/drop to remove it.",
    input: z
      .object({
        collection: Collection,
        ids: z
          .array(z.string().regex(/^\d{1,18}$/, "a row id as reads return it"))
          .min(1)
          .max(MAX_ROWS_PER_WRITE)
          .optional()
          .describe("Row ids to delete."),
        where: FilterObject.optional(),
      })
      .refine((b) => (b.ids === undefined) !== (b.where === undefined), {
        message: "give `ids` or `where`, one of them",
        path: ["ids"],
      }),
    output: z.object({ collection: CollectionInfo, deleted: z.number().int() }),
    example: {
      input: { collection: "leads", ids: ["2"] },
      output: { collection: { ...exampleCollection, rows: 1, bytes: 37 }, deleted: 1 },
    },
    errors: { 404: NO_COLLECTION },
    handler: async (input, ctx) =>
      deleteRows(
        scopeOf(ctx),
        input.collection,
        input.ids !== undefined ? { ids: input.ids } : { where: input.where ?? {} },
      ),
  });

  const drop = defineEndpoint({
    method: "POST",
    path: "/api/store/drop",
    price: PRICE,
    effects: ["writes"],
    tables,
    description: "Deletes one of your collections with all its rows, freeing its bytes of the quota.",
    input: z.object({ collection: Collection }),
    output: z.object({
      collection: z.string(),
      dropped: z.literal(true),
      rows_deleted: z.number().int(),
      bytes_freed: z.number().int(),
    }),
    example: {
      input: { collection: "leads" },
      output: { collection: "leads", dropped: true, rows_deleted: 2, bytes_freed: 74 },
    },
    errors: { 404: NO_COLLECTION },
    handler: async (input, ctx) => dropCollection(scopeOf(ctx), input.collection),
  });

  const expire = defineEndpoint({
    method: "POST",
    path: "/api/store/expire",
    price: PRICE,
    effects: ["writes"],
    tables,
    description:
      "Sets when one of your collections expires (expires_at or ttl_seconds), or removes the expiry (expires_at: null). Expired collections are invisible at once and purged later.",
    input: z
      .object({ collection: Collection, ...ExpiryFields })
      .refine((b) => b.expires_at !== undefined || b.ttl_seconds !== undefined, {
        message: "give `expires_at` (a date, or null to keep forever) or `ttl_seconds`",
        path: ["expires_at"],
      }),
    output: CollectionInfo,
    example: {
      input: { collection: "leads", ttl_seconds: 86400 },
      output: { ...exampleCollection, expires_at: "2026-11-22T10:00:00.000Z" },
    },
    errors: { 400: PAST_EXPIRY, 404: NO_COLLECTION },
    handler: async (input, ctx) => {
      const scope = scopeOf(ctx);
      return setCollectionExpiry(scope, input.collection, expiryOf(scope, input) ?? null);
    },
  });

  return [list, insert, query, exportEndpoint, deleteEndpoint, drop, expire];
}
