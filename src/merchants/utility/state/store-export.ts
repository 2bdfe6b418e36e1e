/** `GET /api/store/export`: a whole collection (optionally filtered) as JSON or CSV. */
import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { rowsToCsv } from "./csv.ts";
import { FilterQuery } from "./params.ts";
import { exportRows } from "./store-engine.ts";
import { Collection, NO_COLLECTION, PRICE, RowData, type StoreWiring } from "./store-shared.ts";

export function storeExportEndpoint({ tables, scopeOf }: StoreWiring) {
  return defineEndpoint({
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
}
