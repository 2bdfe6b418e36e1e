/**
 * Solana payments in the facilitator's authorization ledger (`facilitator_authorizations`, migrations.ts): the
 * same table, states and conditional updates as the EVM authorizations (authorization-ledger.ts), so an
 * operator reads one ledger and a settlement is claimed by one request whatever arrives. A Solana payment is
 * keyed by (network, mint, payer: the transfer's authority, nonce: the SHA-256 of the signed message); its
 * `tx_hash` is the transaction's signature and `block_number` its slot. Base58 is case-sensitive: nothing here
 * lower-cases an address or a signature, where the EVM statements do.
 *
 * On Solana the chain itself sends a signed message once: the fee payer's Ed25519 signature of the same
 * message is the same bytes, so every retry is the same transaction, which the chain processes once. The
 * ledger's part is the answer: one success per payment, so one delivery.
 */
import type { Queryable } from "../../common/db/index.ts";
import type { AuthorizationKey } from "../authorization.ts";
import type { LedgerRow } from "../authorization-ledger.ts";

const KEY = "network = $1 AND asset = $2 AND payer = $3 AND nonce = $4";
const keyParams = (k: AuthorizationKey) => [k.network, k.asset, k.payer, k.nonce];

/** A verified payment's row: its content, what it pays whom. */
export interface SvmVerified {
  key: AuthorizationKey;
  digest: string;
  payTo: string;
  amount: string;
  payload: unknown;
  requirements: unknown;
}

/** Records a successful /verify; a row being settled or settled is left alone (false). */
export async function recordSvmVerified(db: Queryable, v: SvmVerified): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO facilitator_authorizations AS f
       (network, asset, payer, nonce, digest, state, pay_to, amount, valid_before,
        payment_payload, payment_requirements, x402_version)
     VALUES ($1, $2, $3, $4, $5, 'verified', $6, $7, 0, $8, $9, 2)
     ON CONFLICT (network, asset, payer, nonce) DO UPDATE SET
       digest = EXCLUDED.digest, state = 'verified', pay_to = EXCLUDED.pay_to, amount = EXCLUDED.amount,
       payment_payload = EXCLUDED.payment_payload, payment_requirements = EXCLUDED.payment_requirements,
       tx_hash = NULL, settled_amount = NULL, block_number = NULL, error_reason = NULL, error_message = NULL,
       claimed_at = NULL, submitted_at = NULL, settled_at = NULL, verified_at = now(), updated_at = now()
     WHERE f.state IN ('verified', 'failed')`,
    [
      ...keyParams(v.key),
      v.digest,
      v.payTo,
      v.amount,
      JSON.stringify(v.payload),
      JSON.stringify(v.requirements),
    ],
  );
  return rowCount === 1;
}

/** submitting -> pending with the transaction's signature, once it is signed and before it is sent. */
export async function recordSvmSigned(
  db: Queryable,
  key: AuthorizationKey,
  signature: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_authorizations
     SET state = 'pending', tx_hash = $5, submitted_at = now(), updated_at = now()
     WHERE ${KEY} AND state = 'submitting'`,
    [...keyParams(key), signature],
  );
  return rowCount === 1;
}

/** pending -> verified: the transaction never reached the chain; a later /settle signs the same one again. */
export async function releaseSvmUnsent(
  db: Queryable,
  key: AuthorizationKey,
  reason: string,
  message: string,
): Promise<void> {
  await db.query(
    `UPDATE facilitator_authorizations
     SET state = 'verified', tx_hash = NULL, claimed_at = NULL, submitted_at = NULL, error_reason = $5,
         error_message = $6, updated_at = now()
     WHERE ${KEY} AND state IN ('submitting', 'pending')`,
    [...keyParams(key), reason, message],
  );
}

/**
 * pending -> settled at `slot`; with `deliver`, the one success answer is claimed in the same statement.
 * Undefined when another request resolved it first.
 */
export async function markSvmSettled(
  db: Queryable,
  key: AuthorizationKey,
  signature: string,
  slot: bigint | null,
  deliver: boolean,
): Promise<LedgerRow | undefined> {
  const { rows } = await db.query<LedgerRow>(
    `UPDATE facilitator_authorizations
     SET state = 'settled', block_number = $6, settled_amount = amount, settled_at = now(), error_reason = NULL,
         error_message = NULL, updated_at = now()${deliver ? ", delivered_at = now()" : ""}
     WHERE ${KEY} AND state = 'pending' AND tx_hash = $5
     RETURNING *`,
    [...keyParams(key), signature, slot],
  );
  return rows[0];
}

/** pending -> failed: the transaction landed and failed (its fee was still paid). */
export async function markSvmFailed(
  db: Queryable,
  key: AuthorizationKey,
  signature: string,
  failure: { reason: string; message?: string; slot?: bigint | null },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_authorizations
     SET state = 'failed', error_reason = $6, error_message = $7, block_number = $8, updated_at = now()
     WHERE ${KEY} AND state = 'pending' AND tx_hash = $5`,
    [...keyParams(key), signature, failure.reason, failure.message ?? null, failure.slot ?? null],
  );
  return rowCount === 1;
}
