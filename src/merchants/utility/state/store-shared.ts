/**
 * What the store's endpoints (store.ts) share: their price, the schemas of a collection, the answers they
 * document, and the wiring of a call to its wallet and of the tables they use.
 */
import { z } from "zod";
import type { Tables } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { NameSchema } from "./limits.ts";
import { stateTables } from "./schema.ts";
import { type StateOptions, type WalletScope, walletScope } from "./wallet.ts";

export const PRICE = PRICES["/api/store"];
export const Collection = NameSchema.describe("Collection name: 1-64 of A-Z a-z 0-9 _ - . (per wallet).");
export const RowData = z.record(z.string(), z.unknown());
export const Timestamp = z.string().describe("ISO 8601, UTC.");

export const CollectionInfo = z.object({
  name: z.string(),
  rows: z.number().int(),
  bytes: z.number().int().describe("Bytes of its rows as stored (JSONB text), counted against the quota."),
  created_at: Timestamp,
  expires_at: Timestamp.nullable(),
});

/** What every store endpoint answers when the wallet has no such collection (or it expired). */
export const NO_COLLECTION =
  "The wallet has no collection of that name, or it expired (collection_not_found).";
/** What an expiry in the past is refused with, found once the payment is verified. */
export const PAST_EXPIRY =
  "An `expires_at` in the past, or both `expires_at` and `ttl_seconds` (invalid_input).";

export const EXAMPLE_TIME = "2026-11-21T10:00:00.000Z";
export const exampleCollection = {
  name: "leads",
  rows: 2,
  bytes: 74,
  created_at: EXAMPLE_TIME,
  expires_at: null,
};

/** A paid call, as far as the store needs it: the verified payer and the host's database. */
interface StoreCall {
  payer: string;
  services: { db: Parameters<typeof walletScope>[0] };
}

/** The wiring every store endpoint shares, made once from the endpoints' `options`. */
export interface StoreWiring {
  tables: Tables;
  /** The paying wallet's view of the state for one call. */
  scopeOf(ctx: StoreCall): WalletScope;
}

export function storeWiring(options: StateOptions): StoreWiring {
  return {
    tables: stateTables(options),
    scopeOf: (ctx) => walletScope(ctx.services.db, ctx.payer, options),
  };
}
