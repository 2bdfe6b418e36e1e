/**
 * `/api/store`: the paying wallet's collections of JSON rows (docs/platform.md, "The utility API's endpoints"). `GET /api/store` lists
 * them (the price list's row); the operations are sub-paths at the same price, since the platform routes GET
 * and POST only: insert (JSON rows or CSV), query (paginated, equality filter), export (JSON or CSV),
 * delete (rows), drop (the collection) and expire. The wallet is the verified payer: nothing else names it.
 */
import type { AnyEndpoint } from "../../../merchant-kit/index.ts";
import { storeDeleteEndpoint } from "./store-delete.ts";
import { storeDropEndpoint } from "./store-drop.ts";
import { storeExpireEndpoint } from "./store-expire.ts";
import { storeExportEndpoint } from "./store-export.ts";
import { storeInsertEndpoint } from "./store-insert.ts";
import { storeListEndpoint } from "./store-list.ts";
import { storeQueryEndpoint } from "./store-query.ts";
import { storeWiring } from "./store-shared.ts";
import type { StateOptions } from "./wallet.ts";

/** The store's endpoints; `options` lets tests shrink the quota or fix the clock. */
export function storeEndpoints(options: StateOptions = {}): AnyEndpoint[] {
  const wiring = storeWiring(options);
  return [
    storeListEndpoint(wiring),
    storeInsertEndpoint(wiring),
    storeQueryEndpoint(wiring),
    storeExportEndpoint(wiring),
    storeDeleteEndpoint(wiring),
    storeDropEndpoint(wiring),
    storeExpireEndpoint(wiring),
  ];
}
