/** `GET /api/store/query`: a page of a collection's rows in insertion order, optionally filtered. */
import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./limits.ts";
import { FilterQuery } from "./params.ts";
import { readRows } from "./store-engine.ts";
import {
  Collection,
  EXAMPLE_TIME,
  NO_COLLECTION,
  PRICE,
  RowData,
  type StoreWiring,
  Timestamp,
} from "./store-shared.ts";

export function storeQueryEndpoint({ tables, scopeOf }: StoreWiring) {
  return defineEndpoint({
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
}
