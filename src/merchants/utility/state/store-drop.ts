/** `POST /api/store/drop`: a collection with all its rows, freeing its bytes of the quota. */
import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { dropCollection } from "./store-engine.ts";
import { Collection, NO_COLLECTION, PRICE, type StoreWiring } from "./store-shared.ts";

export function storeDropEndpoint({ tables, scopeOf }: StoreWiring) {
  return defineEndpoint({
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
}
