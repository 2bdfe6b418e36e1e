import type { Migration } from "../common/db/index.ts";

/**
 * The merchant kit's own tables. The module is named "platform", the kit's first name: a module's name is
 * recorded with its versions in every database, so it stays.
 */
export const KIT_MODULE = "platform";

export const KIT_MIGRATIONS: readonly Migration[] = [
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
  {
    version: 2,
    name: "the replay locks become the payment ledger: amounts and outcomes, for the funds in flight",
    up: `ALTER TABLE platform_replay_locks RENAME TO merchant_payments;
    ALTER INDEX platform_replay_locks_valid_before RENAME TO merchant_payments_valid_before;
    -- Rows from before this version were taken by handlers that finished: settled, amounts unknown.
    ALTER TABLE merchant_payments
      ADD COLUMN amount numeric(78, 0) NOT NULL DEFAULT 0,
      ADD COLUMN state text NOT NULL DEFAULT 'settled'
        CHECK (state IN ('running', 'settled', 'unsettled')),
      ADD COLUMN finished_at timestamptz;
    ALTER TABLE merchant_payments ALTER COLUMN state DROP DEFAULT, ALTER COLUMN amount DROP DEFAULT;
    CREATE INDEX merchant_payments_payer ON merchant_payments (payer);`,
  },
  {
    version: 3,
    name: "abandoned calls: a guarded handler the caller left, counted against the payer",
    up: `ALTER TABLE merchant_payments DROP CONSTRAINT merchant_payments_state_check,
      ADD CONSTRAINT merchant_payments_state_check
        CHECK (state IN ('running', 'settled', 'unsettled', 'abandoned'));
    CREATE INDEX merchant_payments_abandoned ON merchant_payments (payer, finished_at) WHERE state = 'abandoned';`,
  },
  {
    version: 4,
    name: "failed calls: a guarded handler that failed once it ran counts against the payer like an abandoned one",
    up: `ALTER TABLE merchant_payments DROP CONSTRAINT merchant_payments_state_check,
      ADD CONSTRAINT merchant_payments_state_check
        CHECK (state IN ('running', 'settled', 'unsettled', 'abandoned', 'failed'));
    DROP INDEX merchant_payments_abandoned;
    CREATE INDEX merchant_payments_unpaid ON merchant_payments (payer, finished_at)
      WHERE state IN ('abandoned', 'failed');`,
  },
];
