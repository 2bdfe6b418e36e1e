/**
 * The SQL of `facilitator_sponsored_approvals`: one row per payment whose buyer's approval this facilitator
 * funded and broadcast, each transaction's hash recorded before it is sent (migrations.ts, version 8).
 *
 *   funding (the ETH for its gas, when the wallet lacks it) -> approving (the buyer's transaction sent)
 *     -> approved | failed
 */
import type { Queryable } from "../../common/db/index.ts";
import type { AuthorizationKey } from "../authorization.ts";

export interface ApprovalRow {
  state: "funding" | "approving" | "approved" | "failed";
  approval_tx: string;
  funding_tx: string | null;
  funded_wei: string;
}

const KEY = "network = $1 AND asset = $2 AND payer = $3 AND nonce = $4";
const keyParams = (k: AuthorizationKey) => [k.network, k.asset, k.payer, k.nonce];

/**
 * The payment's row, made at its first attempt with the approval's hash; a later attempt (the payment's
 * claim taken over after a crash) finds it as that attempt left it.
 */
export async function startApproval(
  db: Queryable,
  key: AuthorizationKey,
  approvalTx: string,
): Promise<ApprovalRow> {
  const { rows } = await db.query<ApprovalRow>(
    `INSERT INTO facilitator_sponsored_approvals AS a (network, asset, payer, nonce, state, approval_tx)
     VALUES ($1, $2, $3, $4, 'funding', $5)
     ON CONFLICT (network, asset, payer, nonce) DO UPDATE SET updated_at = now()
     RETURNING state, approval_tx, funding_tx, funded_wei::text AS funded_wei`,
    [...keyParams(key), approvalTx.toLowerCase()],
  );
  return rows[0] as ApprovalRow;
}

/** The funding transaction, signed: recorded before it is broadcast. */
export async function recordFunding(
  db: Queryable,
  key: AuthorizationKey,
  hash: string,
  wei: bigint,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE facilitator_sponsored_approvals SET funding_tx = $5, funded_wei = $6, updated_at = now()
     WHERE ${KEY} AND state = 'funding'`,
    [...keyParams(key), hash.toLowerCase(), wei],
  );
  return rowCount === 1;
}

/** The node refused the funding: it never existed. */
export async function forgetFunding(db: Queryable, key: AuthorizationKey, hash: string): Promise<void> {
  await db.query(
    `UPDATE facilitator_sponsored_approvals SET funding_tx = NULL, funded_wei = 0, updated_at = now()
     WHERE ${KEY} AND funding_tx = $5`,
    [...keyParams(key), hash.toLowerCase()],
  );
}

export async function markApproving(db: Queryable, key: AuthorizationKey): Promise<void> {
  await db.query(
    `UPDATE facilitator_sponsored_approvals SET state = 'approving', updated_at = now()
     WHERE ${KEY} AND state IN ('funding', 'approving')`,
    keyParams(key),
  );
}

/** The approval mined (or reverted), with what its sponsoring cost this facilitator. */
export async function endApproval(
  db: Queryable,
  key: AuthorizationKey,
  outcome: { state: "approved" | "failed"; costWei: bigint; gasUsed?: bigint; error?: string },
): Promise<void> {
  await db.query(
    `UPDATE facilitator_sponsored_approvals
     SET state = $5, cost_wei = $6, approval_gas_used = $7, error_message = $8, updated_at = now()
     WHERE ${KEY}`,
    [...keyParams(key), outcome.state, outcome.costWei, outcome.gasUsed ?? null, outcome.error ?? null],
  );
}
