/**
 * The tables of the per-wallet state (module `utility_state`). Every row carries or reaches its owner's
 * wallet: collections and scratchpads are keyed by (payer, name), rows hang off their collection, so a
 * query that starts from the paying wallet cannot reach another wallet's data.
 */
import type { Migration } from "../../../common/db/index.ts";
import type { Tables } from "../../../merchant-kit/index.ts";
import { purgeExpired, type StateOptions } from "./wallet.ts";

/** Module names are `[a-z][a-z0-9_]*` (the migration runner's rule). */
export const STATE_MODULE = "utility_state";

export const STATE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "store collections and rows, scratchpads",
    up: `CREATE TABLE utility_state_collections (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      payer text NOT NULL,
      name text NOT NULL,
      -- Kept in the same transaction as every row change, so listing and the quota never scan rows.
      row_count bigint NOT NULL DEFAULT 0,
      bytes bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      expires_at timestamptz,
      UNIQUE (payer, name)
    );
    CREATE INDEX utility_state_collections_expiry ON utility_state_collections (expires_at)
      WHERE expires_at IS NOT NULL;
    CREATE TABLE utility_state_rows (
      collection_id bigint NOT NULL REFERENCES utility_state_collections (id) ON DELETE CASCADE,
      id bigint GENERATED ALWAYS AS IDENTITY,
      data jsonb NOT NULL,
      -- octet_length(data::text): the row's size as stored, counted against the quota.
      bytes integer NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (collection_id, id)
    );
    CREATE TABLE utility_state_scratchpads (
      payer text NOT NULL,
      name text NOT NULL,
      content_type text NOT NULL,
      content text NOT NULL,
      -- octet_length(content): UTF-8 bytes, counted against the same quota as the collections.
      bytes bigint NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      expires_at timestamptz,
      PRIMARY KEY (payer, name)
    );
    CREATE INDEX utility_state_scratchpads_expiry ON utility_state_scratchpads (expires_at)
      WHERE expires_at IS NOT NULL;`,
  },
];

/**
 * The state's tables as the endpoints declare them (src/merchant-kit/tables.ts migrates them when the
 * host starts): the sweep drops every wallet's expired data, for wallets that never come back; a wallet's
 * own writes drop its expired data first anyway (wallet.ts).
 */
export function stateTables(options: Pick<StateOptions, "now"> = {}): Tables {
  return {
    module: STATE_MODULE,
    migrations: STATE_MIGRATIONS,
    sweep: (db) => purgeExpired(db, options.now?.() ?? new Date()),
  };
}
