import type { Migration } from "../common/db/index.ts";

/** The facilitator's tables: the authorization ledger, the Bazaar, API keys and a little metadata. */
export const FACILITATOR_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "authorization ledger, bazaar, chain identity",
    up: `
      -- One row per EIP-3009 authorization this facilitator verified, keyed like the token keys replays.
      -- States: verified -> submitting (claimed by one /settle) -> pending (transaction signed, its hash
      -- recorded before broadcast) -> settled | failed. submitting -> verified when nothing was broadcast.
      CREATE TABLE facilitator_authorizations (
        network text NOT NULL,
        asset text NOT NULL,
        payer text NOT NULL,
        nonce text NOT NULL,
        digest text NOT NULL,
        state text NOT NULL CHECK (state IN ('verified', 'submitting', 'pending', 'settled', 'failed')),
        pay_to text NOT NULL,
        amount numeric(78, 0) NOT NULL,
        valid_before numeric(78, 0) NOT NULL,
        payment_payload jsonb NOT NULL,
        payment_requirements jsonb NOT NULL,
        tx_hash text UNIQUE,
        tx_nonce bigint,
        block_number bigint,
        error_reason text,
        error_message text,
        verified_at timestamptz NOT NULL DEFAULT now(),
        claimed_at timestamptz,
        submitted_at timestamptz,
        settled_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (network, asset, payer, nonce)
      );
      CREATE INDEX facilitator_authorizations_unresolved
        ON facilitator_authorizations (updated_at) WHERE state IN ('submitting', 'pending');

      -- The Bazaar: resources this facilitator settled payments for, one row per resource
      -- (an MCP server's tools are separate resources: tool_name is '' for HTTP resources).
      CREATE TABLE bazaar_resources (
        resource text NOT NULL,
        tool_name text NOT NULL DEFAULT '',
        type text NOT NULL,
        x402_version integer NOT NULL,
        method text,
        description text,
        mime_type text,
        service_name text,
        tags jsonb,
        icon_url text,
        extensions jsonb,
        payments bigint NOT NULL DEFAULT 0,
        first_seen timestamptz NOT NULL DEFAULT now(),
        last_updated timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (resource, tool_name)
      );
      CREATE INDEX bazaar_resources_recent ON bazaar_resources (last_updated DESC, resource, tool_name);

      -- How each resource was paid: one row per (scheme, network, asset, payTo), the latest requirements.
      CREATE TABLE bazaar_accepts (
        resource text NOT NULL,
        tool_name text NOT NULL,
        scheme text NOT NULL,
        network text NOT NULL,
        asset text NOT NULL,
        pay_to text NOT NULL,
        requirements jsonb NOT NULL,
        last_updated timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (resource, tool_name, scheme, network, asset, pay_to),
        FOREIGN KEY (resource, tool_name) REFERENCES bazaar_resources ON DELETE CASCADE
      );
      CREATE INDEX bazaar_accepts_pay_to ON bazaar_accepts (pay_to);

      CREATE TABLE facilitator_meta (
        key text PRIMARY KEY,
        value text NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: "delivery: which /settle answered an authorization's success",
    up: `
      -- A settled authorization answers success to one /settle only (as the official facilitator does),
      -- so a stock resource server delivers one payment once. Rows settled before this version were
      -- delivered by the /settle that settled them.
      ALTER TABLE facilitator_authorizations ADD COLUMN delivered_at timestamptz;
      UPDATE facilitator_authorizations SET delivered_at = settled_at WHERE state = 'settled';
    `,
  },
  {
    version: 3,
    name: "upto: the amount each settlement takes",
    up: `
      -- Exact payments take their value; upto payments a metered amount up to their maximum (amount), fixed
      -- when a /settle claims the row. Rows settled before this version took their value.
      ALTER TABLE facilitator_authorizations ADD COLUMN settled_amount numeric(78, 0);
      UPDATE facilitator_authorizations SET settled_amount = amount WHERE state IN ('submitting', 'pending', 'settled');
    `,
  },
  {
    version: 4,
    name: "access: API keys, their daily gas and their settlement rate",
    up: `
      -- Bearer keys for payees beyond the allow-list (src/facilitator/access/). Only the key's SHA-256 is
      -- kept: the key itself is printed once, by "facilitator keys add". payees: a JSON array of
      -- lower-case addresses, or null for any payee. The rate is a bucket of rate_per_minute settlements
      -- refilled at that many a minute: rate_tokens as of rate_at.
      CREATE TABLE facilitator_api_keys (
        id text PRIMARY KEY,
        key_hash text NOT NULL UNIQUE,
        name text NOT NULL DEFAULT '',
        payees jsonb,
        gas_budget_wei numeric(78, 0) NOT NULL CHECK (gas_budget_wei >= 0),
        rate_per_minute integer NOT NULL CHECK (rate_per_minute > 0),
        rate_tokens double precision NOT NULL,
        rate_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      );

      -- A key's gas per UTC day: spent (from receipts) and reserved (the worst case of settlements under
      -- way). A reservation succeeds only while spent + reserved stays within the key's budget.
      CREATE TABLE facilitator_key_days (
        key_id text NOT NULL REFERENCES facilitator_api_keys ON DELETE CASCADE,
        day date NOT NULL,
        spent_wei numeric(78, 0) NOT NULL DEFAULT 0,
        reserved_wei numeric(78, 0) NOT NULL DEFAULT 0,
        settlements bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (key_id, day)
      );

      -- What one authorization's settlement reserved of a key's day, until its transaction is decided:
      -- charged what its receipt says, or released when nothing was mined.
      CREATE TABLE facilitator_key_charges (
        network text NOT NULL,
        asset text NOT NULL,
        payer text NOT NULL,
        nonce text NOT NULL,
        key_id text NOT NULL,
        day date NOT NULL,
        state text NOT NULL CHECK (state IN ('reserved', 'charged', 'released')),
        reserved_wei numeric(78, 0) NOT NULL,
        charged_wei numeric(78, 0),
        tx_hash text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (network, asset, payer, nonce)
      );
    `,
  },
  {
    version: 5,
    name: "batch-settlement: the receiver's channel actions, and what each keyed settlement was",
    up: `
      -- What a keyed settlement was charged as: exact, upto, deposit (a payer's authorizations) or claim,
      -- settle, refund (a channel's receiver's actions), so that the operator reads a key's gas per action.
      ALTER TABLE facilitator_key_charges ADD COLUMN action text NOT NULL DEFAULT 'exact';
      UPDATE facilitator_key_charges c SET action = 'upto'
      FROM facilitator_authorizations a
      WHERE a.network = c.network AND a.asset = c.asset AND a.payer = c.payer AND a.nonce = c.nonce
        AND a.payment_requirements->>'scheme' = 'upto';

      -- batch-settlement's claims, settles and refunds this facilitator sent for a channel's receiver: no
      -- payer's authorization, but sent once each all the same. id: the kind and a SHA-256 of what the
      -- action does (the claims; the receiver, token and total claimed it sweeps; the refund with its
      -- nonce), so a retry finds the first. States as the ledger's, plus refused: nothing was sent and it
      -- may be asked again (failed too: a reverted transaction moved nothing). A keyed one's gas is
      -- reserved and charged in facilitator_key_charges under (network, token, receiver, id).
      CREATE TABLE facilitator_channel_actions (
        id text PRIMARY KEY,
        network text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('claim', 'settle', 'refund')),
        receiver text NOT NULL,
        token text NOT NULL,
        state text NOT NULL CHECK (state IN ('submitting', 'pending', 'settled', 'failed', 'refused')),
        key_id text,
        authorized boolean NOT NULL,
        vouchers integer NOT NULL,
        payment_payload jsonb NOT NULL,
        payment_requirements jsonb NOT NULL,
        response jsonb,
        tx_hash text UNIQUE,
        tx_nonce bigint,
        block_number bigint,
        gas_used numeric(78, 0),
        cost_wei numeric(78, 0),
        error_reason text,
        error_message text,
        created_at timestamptz NOT NULL DEFAULT now(),
        claimed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX facilitator_channel_actions_unresolved
        ON facilitator_channel_actions (updated_at) WHERE state IN ('submitting', 'pending');
      CREATE INDEX facilitator_channel_actions_key ON facilitator_channel_actions (key_id, created_at);
    `,
  },
  {
    version: 6,
    name: "settlements in groups: one transaction for several authorizations",
    up: `
      -- A group's transaction (docs/facilitator.md, "Settlements in groups") carries several
      -- authorizations: their rows share its hash. Still indexed, for an operator's look-ups by transaction.
      ALTER TABLE facilitator_authorizations DROP CONSTRAINT IF EXISTS facilitator_authorizations_tx_hash_key;
      CREATE INDEX IF NOT EXISTS facilitator_authorizations_tx_hash ON facilitator_authorizations (tx_hash);
    `,
  },
  {
    version: 7,
    name: "a facilitator on several chains: each key's gas counted per chain, and its budget per chain",
    up: `
      -- Gas is paid in each chain's own coin (ETH on Base and Arbitrum, POL on Polygon): a key's day is counted
      -- per chain, against its budget there. A day already counted is its charges' chain's (Base's without any).
      ALTER TABLE facilitator_key_days ADD COLUMN network text;
      UPDATE facilitator_key_days d SET network = coalesce(
        (SELECT min(c.network) FROM facilitator_key_charges c WHERE c.key_id = d.key_id AND c.day = d.day),
        'eip155:8453');
      ALTER TABLE facilitator_key_days ALTER COLUMN network SET NOT NULL;
      ALTER TABLE facilitator_key_days DROP CONSTRAINT facilitator_key_days_pkey;
      ALTER TABLE facilitator_key_days ADD PRIMARY KEY (key_id, network, day);
      -- A key's budget on a chain other than by gas_budget_wei (network -> wei), from keys add --chain-gas-budget.
      ALTER TABLE facilitator_api_keys ADD COLUMN chain_gas_budgets jsonb NOT NULL DEFAULT '{}';
    `,
  },
  {
    version: 8,
    name: "x402 v1 payments: the version each authorization came in",
    up: `
      -- A v1 payment is kept as the v2 one it is (payment_payload and payment_requirements in v2's shapes,
      -- src/facilitator/v1.ts); this says which the payer's software spoke: at verify, then the settling
      -- request's. Every row before it was v2's.
      ALTER TABLE facilitator_authorizations ADD COLUMN x402_version integer NOT NULL DEFAULT 2;
    `,
  },
  {
    version: 9,
    name: "gas sponsoring: the buyers' Permit2 approvals this facilitator funded and broadcast",
    up: `
      -- One row per payment (its authorization's key) whose buyer's signed approve(Permit2, amount) this
      -- facilitator sent (x402's erc20ApprovalGasSponsoring, docs/facilitator.md "Gas sponsoring"): the ETH it
      -- gave the wallet for that transaction's gas (funding_tx, funded_wei) and the approval's own hash, each
      -- recorded before it is broadcast, so that a payment funds one approval whatever arrives or restarts.
      CREATE TABLE facilitator_sponsored_approvals (
        network text NOT NULL,
        asset text NOT NULL,
        payer text NOT NULL,
        nonce text NOT NULL,
        state text NOT NULL CHECK (state IN ('funding', 'approving', 'approved', 'failed')),
        approval_tx text NOT NULL,
        funding_tx text,
        funded_wei numeric(78, 0) NOT NULL DEFAULT 0,
        -- What it cost this facilitator: the funding's gas and the ETH given (the approval's gas is paid from it).
        cost_wei numeric(78, 0),
        approval_gas_used numeric(78, 0),
        error_message text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (network, asset, payer, nonce)
      );
    `,
  },
];
