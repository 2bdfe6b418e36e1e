/**
 * The SQL of the receiver's channel actions (claims, settles, refunds: `facilitator_channel_actions`), in
 * the authorization ledger's manner: every state change is a conditional UPDATE on the expected state, so
 * of racing requests (in this process or another sharing the server) exactly one sends.
 *
 *   (none) | refused | failed --claim--> submitting --signed--> pending --receipt--> settled | failed
 *                                            \___nothing broadcast___> refused
 */
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import type { Queryable } from "../../common/db/index.ts";
import type { ChannelAction } from "./wire.ts";

export type ActionState = "submitting" | "pending" | "settled" | "failed" | "refused";

export interface ActionRow {
  id: string;
  network: string;
  kind: "claim" | "settle" | "refund";
  receiver: string;
  token: string;
  state: ActionState;
  key_id: string | null;
  payment_payload: PaymentPayload;
  payment_requirements: PaymentRequirements;
  response: SettleResponse | null;
  tx_hash: `0x${string}` | null;
  tx_nonce: bigint | null;
  block_number: bigint | null;
  error_reason: string | null;
  error_message: string | null;
}

/** What a mined transaction cost, from its receipt. */
export interface Mined {
  blockNumber: bigint;
  gasUsed: bigint;
  cost: bigint;
}

/**
 * Takes the action for one request: a new row, or one whose earlier attempt sent nothing (refused),
 * reverted (failed: nothing moved) or was abandoned before signing by a process that died. True when this
 * call won; otherwise the row says where another request is.
 */
export async function claimAction(
  db: Queryable,
  id: string,
  action: ChannelAction,
  keyId: string | null,
  staleSeconds: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO facilitator_channel_actions AS a
       (id, network, kind, receiver, token, state, key_id, authorized, vouchers, payment_payload,
        payment_requirements, claimed_at)
     VALUES ($1, $2, $3, $4, $5, 'submitting', $6, $7, $8, $9, $10, now())
     ON CONFLICT (id) DO UPDATE SET
       state = 'submitting', key_id = EXCLUDED.key_id, authorized = EXCLUDED.authorized,
       payment_payload = EXCLUDED.payment_payload, payment_requirements = EXCLUDED.payment_requirements,
       response = NULL, tx_hash = NULL, tx_nonce = NULL, block_number = NULL, gas_used = NULL, cost_wei = NULL,
       error_reason = NULL, error_message = NULL, claimed_at = now(), updated_at = now()
     WHERE a.state IN ('refused', 'failed')
        OR (a.state = 'submitting' AND a.claimed_at < now() - make_interval(secs => $11))`,
    [
      id,
      action.requirements.network,
      action.action.type,
      action.receiver.toLowerCase(),
      action.token.toLowerCase(),
      keyId,
      action.needsAuthorizer,
      action.vouchers,
      JSON.stringify(action.payload),
      JSON.stringify(action.requirements),
      staleSeconds,
    ],
  );
  return rowCount === 1;
}

export async function findAction(db: Queryable, id: string): Promise<ActionRow | undefined> {
  const { rows } = await db.query<ActionRow>("SELECT * FROM facilitator_channel_actions WHERE id = $1", [id]);
  return rows[0];
}

/** submitting -> pending, with the hash of the signed transaction, before it is broadcast. */
export async function recordActionSigned(
  db: Queryable,
  id: string,
  tx: { hash: string; nonce: number },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_channel_actions SET state = 'pending', tx_hash = $2, tx_nonce = $3, updated_at = now()
     WHERE id = $1 AND state = 'submitting'`,
    [id, tx.hash.toLowerCase(), BigInt(tx.nonce)],
  );
  return rowCount === 1;
}

/** pending -> submitting: the node refused the transaction, so it never existed. */
export async function recordActionRefused(db: Queryable, id: string, hash: string): Promise<void> {
  await db.query(
    `UPDATE facilitator_channel_actions SET state = 'submitting', tx_hash = NULL, tx_nonce = NULL, updated_at = now()
     WHERE id = $1 AND state = 'pending' AND tx_hash = $2`,
    [id, hash.toLowerCase()],
  );
}

/** submitting -> refused: nothing was broadcast; the same action may be asked again. */
export async function releaseAction(
  db: Queryable,
  id: string,
  reason: string,
  message?: string,
): Promise<void> {
  await db.query(
    `UPDATE facilitator_channel_actions
     SET state = 'refused', error_reason = $2, error_message = $3, claimed_at = NULL, updated_at = now()
     WHERE id = $1 AND state = 'submitting'`,
    [id, reason, message ?? null],
  );
}

/** pending (with this transaction) -> settled, with its cost and the answer; undefined when already decided. */
export async function markActionSettled(
  db: Queryable,
  id: string,
  hash: string,
  mined: Mined,
  response: SettleResponse,
): Promise<ActionRow | undefined> {
  const { rows } = await db.query<ActionRow>(
    `UPDATE facilitator_channel_actions
     SET state = 'settled', block_number = $3, gas_used = $4, cost_wei = $5, response = $6, updated_at = now()
     WHERE id = $1 AND state = 'pending' AND tx_hash = $2
     RETURNING *`,
    [id, hash.toLowerCase(), mined.blockNumber, mined.gasUsed, mined.cost, JSON.stringify(response)],
  );
  return rows[0];
}

/** pending -> failed: reverted (its gas paid: `mined`) or dropped. False when already decided. */
export async function markActionFailed(
  db: Queryable,
  id: string,
  hash: string,
  failure: { reason: string; message: string },
  mined?: Mined,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_channel_actions
     SET state = 'failed', error_reason = $3, error_message = $4, block_number = $5, gas_used = $6, cost_wei = $7,
         updated_at = now()
     WHERE id = $1 AND state = 'pending' AND tx_hash = $2`,
    [
      id,
      hash.toLowerCase(),
      failure.reason,
      failure.message,
      mined?.blockNumber ?? null,
      mined?.gasUsed ?? null,
      mined?.cost ?? null,
    ],
  );
  return rowCount === 1;
}

/**
 * Actions of `network` a periodic check looks at: sent and undecided, or taken by a process that may have
 * died. Its own network's only, as for payments (authorization-ledger.ts, `listUnresolved`).
 */
export async function listUnresolvedActions(
  db: Queryable,
  network: string,
  limit: number,
): Promise<ActionRow[]> {
  const { rows } = await db.query<ActionRow>(
    `SELECT * FROM facilitator_channel_actions WHERE state IN ('pending', 'submitting') AND network = $1
     ORDER BY updated_at LIMIT $2`,
    [network, limit],
  );
  return rows;
}

/** A `submitting` row older than `staleSeconds` (its process died before signing) becomes refused. */
export async function releaseStaleAction(db: Queryable, id: string, staleSeconds: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_channel_actions
     SET state = 'refused', error_reason = 'unexpected_settle_error',
         error_message = 'an action was abandoned before broadcasting', claimed_at = NULL, updated_at = now()
     WHERE id = $1 AND state = 'submitting' AND claimed_at < now() - make_interval(secs => $2)`,
    [id, staleSeconds],
  );
  return rowCount === 1;
}
