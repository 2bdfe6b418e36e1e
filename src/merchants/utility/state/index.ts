/**
 * Per-wallet state of the utility API: `/api/store` (collections of JSON rows) and `/api/scratchpad`
 * (named text blobs), each listed at its spec path with its operations as sub-paths, all keyed by the
 * verified paying wallet and sharing one 50 MB quota per wallet.
 */
import type { AnyEndpoint } from "../../../merchant-kit/index.ts";
import { scratchpadEndpoints } from "./scratchpad.ts";
import { storeEndpoints } from "./store.ts";
import type { StateOptions } from "./wallet.ts";

export { parseCsvRows, rowsToCsv } from "./csv.ts";
export { MAX_ROW_BYTES, MAX_ROWS_PER_WRITE, QUOTA_BYTES } from "./limits.ts";
export { STATE_MIGRATIONS, STATE_MODULE, stateTables } from "./schema.ts";
export { scratchpadEndpoints } from "./scratchpad.ts";
export { storeEndpoints } from "./store.ts";
export type { StateOptions } from "./wallet.ts";

/** Every state endpoint, with `options` (tests: a small quota, a fixed clock). */
export function stateEndpoints(options: StateOptions = {}): AnyEndpoint[] {
  return [...storeEndpoints(options), ...scratchpadEndpoints(options)];
}
