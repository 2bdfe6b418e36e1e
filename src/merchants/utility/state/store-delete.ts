/** `POST /api/store/delete`: rows of a collection, by id or by field equality; the collection stays. */
import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { MAX_ROWS_PER_WRITE } from "./limits.ts";
import { FilterObject } from "./params.ts";
import { deleteRows } from "./store-engine.ts";
import {
  Collection,
  CollectionInfo,
  exampleCollection,
  NO_COLLECTION,
  PRICE,
  type StoreWiring,
} from "./store-shared.ts";

export function storeDeleteEndpoint({ tables, scopeOf }: StoreWiring) {
  return defineEndpoint({
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
}
