/** `POST /api/store/expire`: when a collection expires, or that it never does. */
import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { ExpiryFields } from "./params.ts";
import { setCollectionExpiry } from "./store-engine.ts";
import {
  Collection,
  CollectionInfo,
  exampleCollection,
  NO_COLLECTION,
  PAST_EXPIRY,
  PRICE,
  type StoreWiring,
} from "./store-shared.ts";
import { expiryOf } from "./wallet.ts";

export function storeExpireEndpoint({ tables, scopeOf }: StoreWiring) {
  return defineEndpoint({
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
}
