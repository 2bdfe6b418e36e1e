import type { Migration } from "../common/db/index.ts";

/** The platform's own tables (module "platform"). */
export const PLATFORM_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "replay locks: one row per payment authorization a handler ran for",
    up: `CREATE TABLE platform_replay_locks (
      payer text NOT NULL,
      nonce text NOT NULL,
      resource text NOT NULL,
      taken_at timestamptz NOT NULL DEFAULT now(),
      -- The authorization's validBefore: after it the chain refuses the authorization anyway.
      valid_before timestamptz NOT NULL,
      PRIMARY KEY (payer, nonce)
    );
    CREATE INDEX platform_replay_locks_valid_before ON platform_replay_locks (valid_before);`,
  },
];
