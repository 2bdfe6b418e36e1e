/** `POST /api/store/insert`: rows into a collection (created if needed), as JSON objects or CSV. */
import { z } from "zod";
import { BadInputError } from "../../../common/errors.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { parseCsvRows } from "./csv.ts";
import {
  MAX_COLLECTIONS,
  MAX_ROW_BYTES,
  MAX_ROWS_PER_WRITE,
  MAX_WRITE_BODY_BYTES,
  QUOTA_BYTES,
} from "./limits.ts";
import { ExpiryFields } from "./params.ts";
import { insertRows } from "./store-engine.ts";
import {
  Collection,
  CollectionInfo,
  exampleCollection,
  PAST_EXPIRY,
  PRICE,
  RowData,
  type StoreWiring,
} from "./store-shared.ts";
import { expiryOf } from "./wallet.ts";

export function storeInsertEndpoint({ tables, scopeOf }: StoreWiring) {
  return defineEndpoint({
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
}
