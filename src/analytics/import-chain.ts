/**
 * Which chain an import's lines are of. Every on-chain line names its chain (`chain`, a slug of
 * `src/chain/chains.ts`); a file holds one chain's lines, and a store any chains' side by side, each row under
 * its chain, as the indexer keeps them (`index --chain`): the reports read each chain's rows apart. Base's lines
 * are held to Base's clock rule (`BlockClock`) and its stored rows; a chain whose blocks say their own time
 * (Polygon PoS, Arbitrum One) has no rule, so its lines are held to each other and to that chain's stored rows
 * instead: one time per block, and never earlier than a lower block's.
 */
import { type AnyChainRecord, BASE_RECORD, storeChains } from "../chain/chains.ts";

/** What the rule on `chain` says. */
export const CHAIN_SLUGS_TEXT = storeChains.list.map((c) => `"${c.slug}"`).join(", ");

/** SQL: the USDC of the chain named by the slug expression `chain` (a payment line's default asset). */
export function sqlUsdcOf(chain: string): string {
  const cases = storeChains.list.map((c) => `WHEN '${c.slug}' THEN '${c.usdc.address}'`).join(" ");
  return `(CASE ${chain} ${cases} END)`;
}

/** The record of a slug the rules have passed (Base when none is known yet). */
export function chainRecord(slug: string | undefined): AnyChainRecord {
  return slug === undefined ? BASE_RECORD : storeChains.chainBySlug(slug);
}

/** Why a line of `line`'s chain cannot be in a file of `file`'s (its first line's, `where`). */
export function chainMismatch(line: string, file: string, where: string): string {
  return `"chain" is "${line}", but ${where} is of ${file}: one chain a file (split it by chain, and import each)`;
}

/**
 * SQL: the first of `blocks` (rows of `record`, `block`, `us`: a line's block and its time in microseconds) whose
 * time breaks a stamped chain's order against the lines before it and the store's rows of `chain`: another time for its
 * block than the store's (else the block's first line's), or a time before a lower block's. `record` NULL marks a
 * stored row; the answer is always a line's.
 */
export function sqlStampedBreach(blocks: string, chain: AnyChainRecord): string {
  const stored = ["payments", "transfers", "checkpoints", "channel_events"]
    .map(
      (t) =>
        `SELECT NULL::BIGINT AS record, block_number AS block, epoch_us(block_time) AS us FROM ${t} WHERE chain = '${chain.slug}'`,
    )
    .join(" UNION ALL ");
  return `WITH b AS (SELECT record, block, us FROM (${blocks}) UNION ALL ${stored}),
    k AS (SELECT block, arg_min(us, coalesce(record, -1)) AS ref FROM b GROUP BY block),
    o AS (SELECT block, ref, max(ref) OVER (ORDER BY block ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
      FROM k)
    SELECT b.record, b.block, b.us, o.ref, o.before FROM b JOIN o USING (block)
    WHERE b.record IS NOT NULL AND (b.us <> o.ref OR b.us < o.before)
    ORDER BY b.record LIMIT 1`;
}

/** The reason a line's block time breaks a stamped chain's order (`sqlStampedBreach`'s answer). */
export function stampedReason(
  chain: AnyChainRecord,
  breach: { block: bigint; us: bigint; ref: bigint; before: bigint | null },
): string {
  const seconds = (us: bigint) => Number(us) / 1e6;
  if (breach.us !== breach.ref) {
    return `block ${breach.block} has time ${seconds(breach.us)}, but ${seconds(breach.ref)} before: on ${chain.name} a block has one time`;
  }
  return `block ${breach.block} has time ${seconds(breach.us)}, before a lower block's ${seconds(breach.before ?? 0n)}: on ${chain.name} times never go back`;
}
