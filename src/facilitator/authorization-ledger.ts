/**
 * The authorization ledger's SQL: one row per payer's authorization this facilitator verified (EIP-3009 or
 * Permit2 for exact, Permit2 for upto, a batch-settlement deposit's ERC-3009 or Permit2). Every state change
 * is a conditional UPDATE on the expected state, so of two racing requests (in this process or another one
 * sharing the server) exactly one wins and the other re-reads the row.
 *
 *   verified --claim--> submitting --signed--> pending --receipt--> settled | failed
 *                           |  \___nothing broadcast___> verified (released)
 *                           \____refused by the node: back to submitting, then released
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import type { Queryable } from "../common/db/index.ts";
import type { AuthorizationKey, CheckedPayment } from "./authorization.ts";

export type AuthorizationState = "verified" | "submitting" | "pending" | "settled" | "failed";

export interface LedgerRow {
  network: string;
  asset: string;
  payer: string;
  nonce: string;
  digest: string;
  state: AuthorizationState;
  payment_payload: PaymentPayload;
  payment_requirements: PaymentRequirements;
  tx_hash: `0x${string}` | null;
  tx_nonce: bigint | null;
  /** What /settle asked to take: the value (exact) or the metered amount, at most the maximum (upto). */
  settled_amount: string | null;
  block_number: bigint | null;
  error_reason: string | null;
  error_message: string | null;
  claimed_at: Date | null;
  updated_at: Date;
  /** The x402 version of the request that verified it, then of the one that settled it (v1.ts). */
  x402_version: number;
}

const KEY = "network = $1 AND asset = $2 AND payer = $3 AND nonce = $4";
const keyParams = (k: AuthorizationKey) => [k.network, k.asset, k.payer, k.nonce];

export async function findAuthorization(
  db: Queryable,
  key: AuthorizationKey,
): Promise<LedgerRow | undefined> {
  const { rows } = await db.query<LedgerRow>(
    `SELECT * FROM facilitator_authorizations WHERE ${KEY}`,
    keyParams(key),
  );
  return rows[0];
}

/**
 * Records a successful /verify. A row still `verified` (or `failed`: nothing of it is on chain, or the SDK
 * would not have passed it) takes the new content; a row being settled or settled is left alone and the
 * call returns false.
 */
export async function recordVerified(db: Queryable, payment: CheckedPayment): Promise<boolean> {
  const t = payment.terms;
  const { rowCount } = await db.query(
    `INSERT INTO facilitator_authorizations AS f
       (network, asset, payer, nonce, digest, state, pay_to, amount, valid_before,
        payment_payload, payment_requirements, x402_version)
     VALUES ($1, $2, $3, $4, $5, 'verified', $6, $7, $8, $9, $10, $11)
     ON CONFLICT (network, asset, payer, nonce) DO UPDATE SET
       digest = EXCLUDED.digest, state = 'verified', pay_to = EXCLUDED.pay_to, amount = EXCLUDED.amount,
       valid_before = EXCLUDED.valid_before, payment_payload = EXCLUDED.payment_payload,
       payment_requirements = EXCLUDED.payment_requirements, x402_version = EXCLUDED.x402_version, tx_hash = NULL, tx_nonce = NULL, settled_amount = NULL,
       block_number = NULL, error_reason = NULL, error_message = NULL, claimed_at = NULL,
       submitted_at = NULL, settled_at = NULL, verified_at = now(), updated_at = now()
     WHERE f.state IN ('verified', 'failed')`,
    [
      ...keyParams(payment.key),
      payment.digest,
      t.payTo.toLowerCase(),
      t.value,
      t.expires,
      JSON.stringify(payment.payload),
      JSON.stringify(payment.requirements),
      payment.version,
    ],
  );
  return rowCount === 1;
}

/**
 * verified -> submitting, for the one /settle that will submit `amount`, in x402 `version`. True when this
 * call won. A reclaimed claim keeps the amount of the first: the same payment is settled for what was first
 * asked.
 */
export async function claim(
  db: Queryable,
  key: AuthorizationKey,
  digest: string,
  amount: bigint,
  version: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_authorizations
     SET state = 'submitting', settled_amount = $6, x402_version = $7, claimed_at = now(), updated_at = now()
     WHERE ${KEY} AND digest = $5 AND state = 'verified'`,
    [...keyParams(key), digest, amount, version],
  );
  return rowCount === 1;
}

/**
 * A `submitting` row older than `staleSeconds` belongs to a process that died between claiming and
 * signing (a signed transaction would have moved it to `pending`): nothing was broadcast, take it over.
 */
export async function reclaimStale(
  db: Queryable,
  key: AuthorizationKey,
  staleSeconds: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_authorizations SET claimed_at = now(), updated_at = now()
     WHERE ${KEY} AND state = 'submitting' AND claimed_at < now() - make_interval(secs => $5)`,
    [...keyParams(key), staleSeconds],
  );
  return rowCount === 1;
}

/** submitting -> pending, with the hash of the signed transaction, before it is broadcast. */
export async function recordSigned(
  db: Queryable,
  key: AuthorizationKey,
  tx: { hash: string; nonce: number },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_authorizations
     SET state = 'pending', tx_hash = $5, tx_nonce = $6, submitted_at = now(), updated_at = now()
     WHERE ${KEY} AND state = 'submitting'`,
    [...keyParams(key), tx.hash.toLowerCase(), BigInt(tx.nonce)],
  );
  return rowCount === 1;
}

/** pending -> submitting: the node refused the transaction, so it never existed. */
export async function recordRefused(db: Queryable, key: AuthorizationKey, hash: string): Promise<void> {
  await db.query(
    `UPDATE facilitator_authorizations
     SET state = 'submitting', tx_hash = NULL, tx_nonce = NULL, submitted_at = NULL, updated_at = now()
     WHERE ${KEY} AND state = 'pending' AND tx_hash = $5`,
    [...keyParams(key), hash.toLowerCase()],
  );
}

/** submitting -> verified: the attempt broadcast nothing; a later /settle may try again. */
export async function release(
  db: Queryable,
  key: AuthorizationKey,
  reason: string,
  message?: string,
): Promise<void> {
  await db.query(
    `UPDATE facilitator_authorizations
     SET state = 'verified', claimed_at = NULL, error_reason = $5, error_message = $6, updated_at = now()
     WHERE ${KEY} AND state = 'submitting'`,
    [...keyParams(key), reason, message ?? null],
  );
}

/**
 * pending (with this transaction) -> settled. Returns the settled row, or undefined when the row is not
 * pending with this hash (another request already resolved it). With `deliver`, the same statement claims
 * the one success answer (`claimDelivery`) for the caller: the request that settled it answers it.
 */
export async function markSettled(
  db: Queryable,
  key: AuthorizationKey,
  hash: string,
  blockNumber: bigint | null,
  deliver = false,
): Promise<LedgerRow | undefined> {
  const { rows } = await db.query<LedgerRow>(
    `UPDATE facilitator_authorizations
     SET state = 'settled', block_number = $6, settled_at = now(), error_reason = NULL, error_message = NULL,
         updated_at = now()${deliver ? ", delivered_at = now()" : ""}
     WHERE ${KEY} AND state = 'pending' AND tx_hash = $5
     RETURNING *`,
    [...keyParams(key), hash.toLowerCase(), blockNumber],
  );
  return rows[0];
}

/**
 * submitting -> settled with no transaction: an upto payment whose metered amount is 0 moves nothing, and
 * the authorization is spent all the same (one payment, one delivery). Returns the settled row.
 */
export async function markSettledWithoutTransfer(
  db: Queryable,
  key: AuthorizationKey,
): Promise<LedgerRow | undefined> {
  const { rows } = await db.query<LedgerRow>(
    `UPDATE facilitator_authorizations
     SET state = 'settled', settled_amount = 0, settled_at = now(), error_reason = NULL, error_message = NULL,
         updated_at = now()
     WHERE ${KEY} AND state = 'submitting'
     RETURNING *`,
    keyParams(key),
  );
  return rows[0];
}

/**
 * Claims the one success answer of a settled authorization: true for the first caller only, so every
 * later /settle of it, concurrent or not, in any process, is told the nonce is used.
 */
export async function claimDelivery(db: Queryable, key: AuthorizationKey): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_authorizations SET delivered_at = now()
     WHERE ${KEY} AND state = 'settled' AND delivered_at IS NULL`,
    keyParams(key),
  );
  return rowCount === 1;
}

/** pending -> failed (reverted, dropped, or used by someone else). Returns false when already resolved. */
export async function markFailed(
  db: Queryable,
  key: AuthorizationKey,
  hash: string,
  failure: { reason: string; message?: string; blockNumber?: bigint | null },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_authorizations
     SET state = 'failed', error_reason = $6, error_message = $7, block_number = $8, updated_at = now()
     WHERE ${KEY} AND state = 'pending' AND tx_hash = $5`,
    [
      ...keyParams(key),
      hash.toLowerCase(),
      failure.reason,
      failure.message ?? null,
      failure.blockNumber ?? null,
    ],
  );
  return rowCount === 1;
}

/**
 * Rows of `network` a periodic check should look at: pending transactions, and claims that may have been
 * abandoned. Of its own network only: one process settling on several chains keeps one ledger, and a row
 * looked at on another chain's node would be judged by a chain that never saw its transaction.
 */
export async function listUnresolved(db: Queryable, network: string, limit: number): Promise<LedgerRow[]> {
  const { rows } = await db.query<LedgerRow>(
    `SELECT * FROM facilitator_authorizations WHERE state IN ('pending', 'submitting') AND network = $1
     ORDER BY updated_at LIMIT $2`,
    [network, limit],
  );
  return rows;
}

/** A row's key, as the ledger stores it. */
export function keyOf(row: LedgerRow): AuthorizationKey {
  return { network: row.network, asset: row.asset, payer: row.payer, nonce: row.nonce };
}
