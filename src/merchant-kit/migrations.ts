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
  {
    version: 5,
    name: "payment channels: the server's state of each batch-settlement channel, and each wallet's claim schedule",
    up: `CREATE TABLE merchant_channels (
      -- The channel's id (lower-case hex): the EIP-712 hash of its config, which names its receiver.
      channel_id text PRIMARY KEY,
      receiver text NOT NULL,
      payer text NOT NULL,
      config jsonb NOT NULL,
      -- What the merchant charged in all (chargedCumulativeAmount), and the payer's latest voucher.
      charged numeric(78, 0) NOT NULL,
      signed_max numeric(78, 0) NOT NULL,
      signature text NOT NULL,
      -- Mirrored from the escrow contract.
      balance numeric(78, 0) NOT NULL,
      total_claimed numeric(78, 0) NOT NULL,
      withdraw_requested_at bigint NOT NULL,
      refund_nonce bigint NOT NULL,
      onchain_synced_ms bigint,
      last_request_ms bigint NOT NULL,
      -- The request that holds the channel while it runs (the spec's serialisation), if any.
      pending_id text,
      pending_max numeric(78, 0),
      pending_expires_ms bigint,
      -- Since when the channel has charges not yet claimed (null: everything charged is claimed).
      unclaimed_since_ms bigint,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX merchant_channels_receiver ON merchant_channels (receiver);
    CREATE TABLE merchant_channel_schedule (
      receiver text PRIMARY KEY,
      -- One process at a time claims a wallet's channels: it holds the lease until it is done or this passes.
      leased_until_ms bigint NOT NULL DEFAULT 0,
      last_claim_ms bigint NOT NULL DEFAULT 0,
      last_settle_ms bigint NOT NULL DEFAULT 0,
      -- Claimed money not yet swept to the wallet.
      settle_due boolean NOT NULL DEFAULT false
    );`,
  },
  {
    version: 6,
    name: "payment ids: a buyer's id per payment, bound to its payer and request, and the answer it bought",
    up: `CREATE TABLE merchant_payment_answers (
      pay_to text NOT NULL,
      payment_id text NOT NULL,
      payer text NOT NULL,
      -- sha256 of the method, path, query and body: the id buys this request's answer and no other's.
      request_hash text NOT NULL,
      -- sha256 of the PAYMENT-SIGNATURE that bought the answer: the same header sent again is the same
      -- verified payer, answered before any verification (its authorization is spent by then).
      payment_hash text NOT NULL,
      -- running: one request holds the id and does the work; answered: its answer is below;
      -- unstored: it was charged but its answer was not kept (streamed, or too large), so a retry is refused.
      state text NOT NULL CHECK (state IN ('running', 'answered', 'unstored')),
      -- The request that holds a running id; a crashed one's is taken over once lease_until has passed.
      owner text NOT NULL,
      lease_until timestamptz NOT NULL,
      status integer,
      headers jsonb,
      -- base64: one encoding on both engines (PGlite and node-postgres return bytea differently).
      body text,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (pay_to, payment_id)
    );
    CREATE INDEX merchant_payment_answers_expires ON merchant_payment_answers (expires_at);`,
  },
  {
    version: 7,
    name: "access for a period: what each wallet paid a period of, and the sign-in messages already used",
    up: `CREATE TABLE merchant_access_grants (
      pay_to text NOT NULL,
      -- The path paid for, as requested (/pay/alice/day): a sign-in is served that path and no other.
      resource text NOT NULL,
      -- The wallet that paid, lower-case.
      payer text NOT NULL,
      granted_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      -- The signed-in calls the period has left (its route's accessCalls, added up over payments in one period).
      calls_left integer NOT NULL,
      PRIMARY KEY (pay_to, resource, payer)
    );
    CREATE INDEX merchant_access_grants_expires ON merchant_access_grants (expires_at);
    CREATE TABLE merchant_sign_in_nonces (
      pay_to text NOT NULL,
      -- A signed message's nonce, once it was served: the same message is refused after.
      nonce text NOT NULL,
      payer text NOT NULL,
      -- When the message is too old to be taken anyway (its issuedAt's limit), so the row can go.
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (pay_to, nonce)
    );
    CREATE INDEX merchant_sign_in_nonces_expires ON merchant_sign_in_nonces (expires_at);`,
  },
  {
    version: 8,
    name: "payment channels on several networks: a wallet's claim schedule per network",
    up: `ALTER TABLE merchant_channel_schedule ADD COLUMN network text NOT NULL DEFAULT '';
    -- '' is the host's first network, the only one before (so an existing row stays that network's).
    ALTER TABLE merchant_channel_schedule DROP CONSTRAINT merchant_channel_schedule_pkey;
    ALTER TABLE merchant_channel_schedule ADD PRIMARY KEY (receiver, network);`,
  },
  {
    version: 9,
    name: "a payment's settlement transaction: how a Solana payment is found on its chain",
    // Solana knows a transaction by its signature, not by anything the payment carries: the reservation asks
    // whether a settled payment landed through it (payments/ledger/svm-funds.ts). Null: unknown, or not needed.
    up: "ALTER TABLE merchant_payments ADD COLUMN settlement text",
  },
];
