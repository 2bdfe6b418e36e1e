/**
 * The API keys of the facilitator's database: issued, listed and revoked by `x402-merchants facilitator
 * keys` (src/cli/facilitator-keys.ts), read by the gate (gate.ts) on every keyed request.
 *
 * A key is `x402m_` and 32 random bytes in base64url (256 bits): only its SHA-256 is stored, and a request's
 * key is found by the hash of what it sent. A lookup by hash compares nothing secret in JavaScript, and
 * what its timing could reveal is the hash of a guess, which says nothing about any key.
 *
 * Every limit is one conditional statement, so concurrent requests in this process or in others sharing a
 * PostgreSQL server can never pass it together: the rate takes a token only while one is left, a
 * reservation of gas succeeds only while the day's spent and reserved gas plus it stay within the budget.
 */
import crypto from "node:crypto";
import type { Queryable } from "../../common/db/index.ts";
import type { AuthorizationKey, SettlementAction } from "../authorization.ts";

/** What every key starts with: a key found in a log or a repository says whose it is. */
export const KEY_PREFIX = "x402m_";
const KEY_PATTERN = /^x402m_[A-Za-z0-9_-]{43}$/;

/** A key as the database holds it (never the key itself). */
export interface ApiKey {
  id: string;
  name: string;
  /** Lower-case addresses the key settles for; null: any payee. */
  payees: string[] | null;
  /** Gas a UTC day on each chain, in the chain's own coin's wei, where `chainGasBudgetsWei` names none. */
  gasBudgetWei: bigint;
  /** The budget on a chain other than `gasBudgetWei`, by network (CAIP-2). */
  chainGasBudgetsWei: Record<string, bigint>;
  ratePerMinute: number;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface NewApiKey {
  name: string;
  /** Lower-case addresses; null: any payee (`--any-payee`). */
  payees: readonly string[] | null;
  /** Gas the key may make the facilitator pay per UTC day on each chain, in wei of the chain's coin. */
  gasBudgetWei: bigint;
  /** Another budget on some chains, by network (CAIP-2). */
  chainGasBudgetsWei?: Readonly<Record<string, bigint>>;
  /** Settlements a minute (a bucket of that many, refilled at that many a minute). */
  ratePerMinute: number;
}

/** What a key used on one chain in a day. */
export interface GasDay {
  spentWei: bigint;
  reservedWei: bigint;
  settlements: bigint;
}

/** A key and what it used today (UTC), for `keys list`: on every chain together, and on each. */
export interface ApiKeyUsage extends ApiKey, GasDay {
  day: string;
  chains: Record<string, GasDay>;
}

interface KeyRow {
  id: string;
  name: string;
  payees: string[] | null;
  gas_budget_wei: string;
  chain_gas_budgets: Record<string, string>;
  rate_per_minute: number;
  created_at: Date;
  revoked_at: Date | null;
}

const KEY_COLUMNS =
  "k.id, k.name, k.payees, k.gas_budget_wei, k.chain_gas_budgets, k.rate_per_minute, k.created_at, k.revoked_at";

/** A key's budget on the chain `$n` names: its own there, else the key's. */
const budgetOn = (n: string) => `coalesce((k.chain_gas_budgets ->> ${n})::numeric, k.gas_budget_wei)`;

const TODAY = "(now() AT TIME ZONE 'UTC')::date";
/** The rate bucket's tokens now: what was left, plus the refill since, at most a minute's worth. */
const TOKENS_NOW = `least(rate_per_minute::float8,
  rate_tokens + greatest(0, extract(epoch FROM (now() - rate_at))) * rate_per_minute / 60.0)`;

function toKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    payees: row.payees,
    gasBudgetWei: BigInt(row.gas_budget_wei),
    chainGasBudgetsWei: Object.fromEntries(
      Object.entries(row.chain_gas_budgets ?? {}).map(([network, wei]) => [network, BigInt(wei)]),
    ),
    ratePerMinute: row.rate_per_minute,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

/** The SHA-256 of a key, as stored. */
export function hashKey(key: string): string {
  return crypto.createHash("sha256").update(key).digest("hex");
}

/** Whether a string has the shape of a key (checked before any lookup). */
export function looksLikeKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/** Issues a key: the returned `key` exists nowhere else, and is never shown again. */
export async function addKey(db: Queryable, spec: NewApiKey): Promise<{ key: string; apiKey: ApiKey }> {
  const id = `k_${crypto.randomBytes(6).toString("hex")}`;
  const key = `${KEY_PREFIX}${crypto.randomBytes(32).toString("base64url")}`;
  const { rows } = await db.query<KeyRow>(
    `INSERT INTO facilitator_api_keys AS k
       (id, key_hash, name, payees, gas_budget_wei, chain_gas_budgets, rate_per_minute, rate_tokens)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     RETURNING ${KEY_COLUMNS}`,
    [
      id,
      hashKey(key),
      spec.name,
      spec.payees === null ? null : JSON.stringify(spec.payees),
      spec.gasBudgetWei,
      JSON.stringify(
        Object.fromEntries(
          Object.entries(spec.chainGasBudgetsWei ?? {}).map(([network, wei]) => [network, wei.toString()]),
        ),
      ),
      spec.ratePerMinute,
      spec.ratePerMinute,
    ],
  );
  return { key, apiKey: toKey(rows[0] as KeyRow) };
}

/** Every key (revoked ones too), oldest first, with what it used today (UTC). */
export async function listKeys(db: Queryable): Promise<ApiKeyUsage[]> {
  const { rows } = await db.query<
    KeyRow & { day: string; chains: Record<string, { spent: string; reserved: string; settlements: string }> }
  >(
    `SELECT ${KEY_COLUMNS}, to_char(${TODAY}, 'YYYY-MM-DD') AS day,
            coalesce((SELECT jsonb_object_agg(d.network, jsonb_build_object('spent', d.spent_wei::text,
                        'reserved', d.reserved_wei::text, 'settlements', d.settlements::text))
                      FROM facilitator_key_days d WHERE d.key_id = k.id AND d.day = ${TODAY}), '{}') AS chains
     FROM facilitator_api_keys k
     ORDER BY k.created_at, k.id`,
  );
  return rows.map((row) => {
    const chains = Object.fromEntries(
      Object.entries(row.chains).map(([network, d]): [string, GasDay] => [
        network,
        { spentWei: BigInt(d.spent), reservedWei: BigInt(d.reserved), settlements: BigInt(d.settlements) },
      ]),
    );
    const all = Object.values(chains);
    const sum = (pick: (d: GasDay) => bigint) => all.reduce((total, d) => total + pick(d), 0n);
    return {
      ...toKey(row),
      day: row.day,
      spentWei: sum((d) => d.spentWei),
      reservedWei: sum((d) => d.reservedWei),
      settlements: sum((d) => d.settlements),
      chains,
    };
  });
}

/** Revokes a key at once (requests under way keep what they reserved). */
export async function revokeKey(
  db: Queryable,
  id: string,
): Promise<"revoked" | "already revoked" | "unknown"> {
  const { rowCount } = await db.query(
    "UPDATE facilitator_api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
    [id],
  );
  if (rowCount === 1) return "revoked";
  const { rows } = await db.query("SELECT 1 FROM facilitator_api_keys WHERE id = $1", [id]);
  return rows.length > 0 ? "already revoked" : "unknown";
}

/** Keys not revoked: with none and no allow-list, a facilitator beyond loopback would be open. */
export async function countLiveKeys(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: bigint }>(
    "SELECT count(*) AS n FROM facilitator_api_keys WHERE revoked_at IS NULL",
  );
  return Number(rows[0]?.n ?? 0n);
}

/** A live key found by what a request sent, with its state now: gas used today and rate tokens left. */
export interface PresentedKey extends ApiKey {
  /** Spent and reserved today (UTC), on the chain it was found for. */
  usedWei: bigint;
  /** Its budget on that chain. */
  budgetWei: bigint;
  /** Rate tokens in the bucket now (a settlement takes one). */
  tokens: number;
}

/** The live key a request sent, with its day on `network`'s chain, or undefined (unknown, revoked, malformed). */
export async function findKey(
  db: Queryable,
  key: string,
  network: string,
): Promise<PresentedKey | undefined> {
  if (!looksLikeKey(key)) return undefined;
  const { rows } = await db.query<KeyRow & { used_wei: string; budget_wei: string; tokens: number }>(
    `SELECT ${KEY_COLUMNS}, ${budgetOn("$2")} AS budget_wei,
            coalesce(d.spent_wei + d.reserved_wei, 0) AS used_wei, ${TOKENS_NOW} AS tokens
     FROM facilitator_api_keys k
     LEFT JOIN facilitator_key_days d ON d.key_id = k.id AND d.network = $2 AND d.day = ${TODAY}
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [hashKey(key), network],
  );
  const row = rows[0];
  return row
    ? {
        ...toKey(row),
        usedWei: BigInt(row.used_wei),
        budgetWei: BigInt(row.budget_wei),
        tokens: Number(row.tokens),
      }
    : undefined;
}

/**
 * Takes one settlement from the key's rate bucket. Returns undefined when taken, else the seconds until a
 * token is back. One statement: of concurrent callers, only as many as there are tokens get one.
 */
export async function takeRateToken(db: Queryable, id: string): Promise<number | undefined> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_api_keys SET rate_tokens = ${TOKENS_NOW} - 1, rate_at = greatest(rate_at, now())
     WHERE id = $1 AND ${TOKENS_NOW} >= 1`,
    [id],
  );
  if (rowCount === 1) return undefined;
  const { rows } = await db.query<{ tokens: number; rate_per_minute: number }>(
    `SELECT ${TOKENS_NOW} AS tokens, rate_per_minute FROM facilitator_api_keys WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  return row ? secondsForToken(Number(row.tokens), row.rate_per_minute) : 60;
}

/** Seconds until a bucket holding `tokens` has one again. */
export function secondsForToken(tokens: number, ratePerMinute: number): number {
  return Math.max(1, Math.ceil(((1 - tokens) * 60) / ratePerMinute));
}

/** A reservation made: the day (UTC) it counts against. */
export interface Reserved {
  day: string;
}

/**
 * Reserves `wei` of the key's budget for one authorization's settlement, on today's row (or on `day`, the
 * day of the reservation it tops up), in one statement: it succeeds only while the key is live and the
 * day's spent + reserved + `wei` stays within the budget. `topUp`: adds to the authorization's reservation
 * under way (a retry at a higher fee); otherwise it replaces whatever the authorization's charge row held.
 * `action`: what the operator sees it charged as. Undefined when refused.
 */
export async function reserveGas(
  db: Queryable,
  keyId: string,
  authorization: AuthorizationKey,
  wei: bigint,
  topUp?: Reserved,
  action: SettlementAction = "exact",
): Promise<Reserved | undefined> {
  const { rows } = await db.query<{ day: string }>(
    `WITH k AS (
       SELECT k.id, ${budgetOn("$3")} AS budget_wei FROM facilitator_api_keys k
       WHERE k.id = $1 AND k.revoked_at IS NULL AND $2::numeric <= ${budgetOn("$3")}
     ), d AS (
       INSERT INTO facilitator_key_days AS d (key_id, network, day, reserved_wei)
       SELECT id, $3, coalesce($7::date, ${TODAY}), $2::numeric FROM k
       ON CONFLICT (key_id, network, day) DO UPDATE SET reserved_wei = d.reserved_wei + EXCLUDED.reserved_wei
       WHERE d.spent_wei + d.reserved_wei + EXCLUDED.reserved_wei <= (SELECT budget_wei FROM k)
       RETURNING d.key_id, d.day
     )
     INSERT INTO facilitator_key_charges AS c (network, asset, payer, nonce, key_id, day, state, reserved_wei, action)
     SELECT $3, $4, $5, $6, key_id, day, 'reserved', $2::numeric, $9 FROM d
     ON CONFLICT (network, asset, payer, nonce) DO UPDATE SET
       reserved_wei = CASE WHEN $8::boolean THEN c.reserved_wei + EXCLUDED.reserved_wei
                      ELSE EXCLUDED.reserved_wei END,
       key_id = EXCLUDED.key_id, day = EXCLUDED.day, state = 'reserved', charged_wei = NULL, tx_hash = NULL,
       action = EXCLUDED.action, updated_at = now()
     RETURNING to_char(day, 'YYYY-MM-DD') AS day`,
    [
      keyId,
      wei,
      authorization.network,
      authorization.asset,
      authorization.payer,
      authorization.nonce,
      topUp?.day ?? null,
      topUp !== undefined,
      action,
    ],
  );
  return rows[0];
}

/**
 * Ends an authorization's reservation: `charged` with what its transaction cost (mined, whether it
 * transferred or reverted), or `released` (nothing was mined). Its day then holds the cost as spent in
 * place of the reservation, and one settlement more (not for a sponsored approval: its payment's own
 * settlement counts). A no-op when the authorization holds no reservation (not keyed, or ended).
 */
export async function endReservation(
  db: Queryable,
  authorization: AuthorizationKey,
  outcome: { charged: bigint; txHash: string } | "released",
): Promise<boolean> {
  const charged = outcome === "released" ? null : outcome.charged;
  const { rowCount } = await db.query(
    `WITH c AS (
       UPDATE facilitator_key_charges SET state = $5, charged_wei = $6::numeric, tx_hash = $7::text, updated_at = now()
       WHERE network = $1 AND asset = $2 AND payer = $3 AND nonce = $4 AND state = 'reserved'
       RETURNING key_id, day, reserved_wei, action
     )
     UPDATE facilitator_key_days d
     SET reserved_wei = d.reserved_wei - c.reserved_wei, spent_wei = d.spent_wei + coalesce($6::numeric, 0),
         settlements = d.settlements + CASE WHEN $6::numeric IS NULL OR c.action = 'approval' THEN 0 ELSE 1 END
     FROM c WHERE d.key_id = c.key_id AND d.network = $1 AND d.day = c.day`,
    [
      authorization.network,
      authorization.asset,
      authorization.payer,
      authorization.nonce,
      outcome === "released" ? "released" : "charged",
      charged,
      // Base58 (a Solana signature) is case-sensitive; an EVM hash is kept lower-case.
      outcome === "released"
        ? null
        : outcome.txHash.startsWith("0x")
          ? outcome.txHash.toLowerCase()
          : outcome.txHash,
    ],
  );
  return rowCount === 1;
}

/** Whether an authorization holds a reservation (its settlement was keyed and is not decided yet). */
export async function hasReservation(db: Queryable, authorization: AuthorizationKey): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM facilitator_key_charges
     WHERE network = $1 AND asset = $2 AND payer = $3 AND nonce = $4 AND state = 'reserved'`,
    [authorization.network, authorization.asset, authorization.payer, authorization.nonce],
  );
  return rows.length > 0;
}

/** A key's budget and what its day holds on `network`'s chain, for a refusal's message. */
export async function dayOf(
  db: Queryable,
  keyId: string,
  network: string,
): Promise<{ budgetWei: bigint; spentWei: bigint; reservedWei: bigint } | undefined> {
  const { rows } = await db.query<{ gas_budget_wei: string; spent_wei: string; reserved_wei: string }>(
    `SELECT ${budgetOn("$2")} AS gas_budget_wei, coalesce(d.spent_wei, 0) AS spent_wei,
            coalesce(d.reserved_wei, 0) AS reserved_wei
     FROM facilitator_api_keys k
     LEFT JOIN facilitator_key_days d ON d.key_id = k.id AND d.network = $2 AND d.day = ${TODAY}
     WHERE k.id = $1`,
    [keyId, network],
  );
  const row = rows[0];
  return row
    ? {
        budgetWei: BigInt(row.gas_budget_wei),
        spentWei: BigInt(row.spent_wei),
        reservedWei: BigInt(row.reserved_wei),
      }
    : undefined;
}
