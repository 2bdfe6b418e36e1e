/**
 * The facilitator candidates an operator reviews: per sender of EIP-3009 settlements that are not
 * counted as x402 payments, how many it sent, for how much, between which wallets and when. A sender
 * with steady traffic to many merchants is likely a facilitator the registry misses; add it with
 * `--facilitator` (and to `src/chain/base-facilitators.json`) and index again into a fresh analytics database.
 */

import type { Analytics } from "../analytics/duckdb.ts";
import type { FacilitatorRegistry } from "../chain/facilitators.ts";

export interface CandidateSummary {
  sender: string;
  settlements: number;
  /** Total amount, USDC (6 decimals, exact). */
  usdc: string;
  payers: number;
  pay_tos: number;
  first_block: number;
  last_block: number;
  first_time: string;
  last_time: string;
  /** "unknown_sender", or "before_since" for a known signer's settlements before its start date. */
  reasons: string[];
  /** The registry's facilitator id for a known signer, or its label for an unconfirmed sender. */
  registry: string | null;
}

/** Every candidate sender, most settlements first. */
export async function listCandidates(
  analytics: Analytics,
  registry: FacilitatorRegistry,
): Promise<CandidateSummary[]> {
  const rows = await analytics.all<{
    sender: string;
    settlements: bigint;
    amount: bigint;
    payers: bigint;
    pay_tos: bigint;
    first_block: bigint;
    last_block: bigint;
    first_time: string;
    last_time: string;
    reasons: string[];
  }>(`SELECT sender, count(*) AS settlements, sum(amount) AS amount, -- HUGEINT: 923 bounded amounts pass 2^63
        count(DISTINCT payer) AS payers, count(DISTINCT pay_to) AS pay_tos,
        min(block_number) AS first_block, max(block_number) AS last_block,
        strftime(min(block_time), '%Y-%m-%dT%H:%M:%S+00:00') AS first_time,
        strftime(max(block_time), '%Y-%m-%dT%H:%M:%S+00:00') AS last_time,
        list(DISTINCT reason ORDER BY reason) AS reasons
      FROM facilitator_candidates WHERE chain = 'base'
      GROUP BY sender ORDER BY settlements DESC, sender`);
  return rows.map((r) => ({
    sender: r.sender,
    settlements: Number(r.settlements),
    usdc: formatUsdc(r.amount),
    payers: Number(r.payers),
    pay_tos: Number(r.pay_tos),
    first_block: Number(r.first_block),
    last_block: Number(r.last_block),
    first_time: r.first_time,
    last_time: r.last_time,
    reasons: [...r.reasons],
    registry: registry.signer(r.sender)?.facilitator ?? registry.unconfirmedLabel(r.sender) ?? null,
  }));
}

function formatUsdc(atomic: bigint): string {
  const whole = atomic / 1_000_000n;
  const fraction = (atomic % 1_000_000n).toString().padStart(6, "0");
  return `${whole}.${fraction}`;
}
