/** `GET /api/store`: the wallet's collections, with its quota use (the price list's row). */
import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { QuotaFields } from "./params.ts";
import { listCollections } from "./store-engine.ts";
import { CollectionInfo, exampleCollection, PRICE, type StoreWiring } from "./store-shared.ts";
import { quotaUsage } from "./wallet.ts";

export function storeListEndpoint({ tables, scopeOf }: StoreWiring) {
  return defineEndpoint({
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
}
