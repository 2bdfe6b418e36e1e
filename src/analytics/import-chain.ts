/**
 * Which chain an import's lines are of. Every on-chain line names its chain (`chain`, a slug of
 * `src/chain/chains.ts`); a file holds one chain's lines, and a store one chain's data, as the indexer keeps it
 * (`index --chain`): the reports read every row of a store as one chain's week. Base's lines are held to Base's
 * clock rule (`BlockClock`); a chain whose blocks say their own time (Polygon PoS, Arbitrum One) has no rule, so
 * its lines are held to each other and to the stored rows instead: one time per block, and never earlier than a
 * lower block's.
 */
import { BASE_RECORD, type ChainRecord, chains } from "../chain/chains.ts";
import type { Analytics } from "./duckdb.ts";

/** The slugs a line's `chain` may be, as an SQL list. */
export const SQL_CHAIN_SLUGS = `(${chains.list.map((c) => `'${c.slug}'`).join(", ")})`;

/** What the rule on `chain` says. */
export const CHAIN_SLUGS_TEXT = chains.list.map((c) => `"${c.slug}"`).join(", ");

/** SQL: the USDC of the chain named by the slug expression `chain` (a payment line's default asset). */
export function sqlUsdcOf(chain: string): string {
  const cases = chains.list.map((c) => `WHEN '${c.slug}' THEN '${c.usdc.address}'`).join(" ");
  return `(CASE ${chain} ${cases} END)`;
}

/** The chain whose data the store holds (indexed or imported), or undefined when it holds none. */
export async function storeChain(analytics: Analytics): Promise<string | undefined> {
  const row = await analytics.one<{ chain: string }>(
    `SELECT chain FROM (
       SELECT chain FROM indexer_state UNION ALL SELECT chain FROM checkpoints
       UNION ALL (SELECT chain FROM payments LIMIT 1) UNION ALL (SELECT chain FROM transfers LIMIT 1)
     ) LIMIT 1`,
  );
  return row?.chain;
}

/** The record of a slug the rules have passed (Base when none is known yet). */
export function chainRecord(slug: string | undefined): ChainRecord {
  return slug === undefined ? BASE_RECORD : chains.chainBySlug(slug);
}

/** Why a file of `file`'s chain cannot go into a store of `stored`'s, or undefined when it can. */
export function chainMismatch(file: string, stored: string | undefined, where: string): string | undefined {
  if (stored === undefined || stored === file) return undefined;
  return `"chain" is "${file}", but ${where} holds ${stored} data: one chain a file and a store (import ${file} into a --data directory of its own)`;
}

/**
 * SQL: the first of `blocks` (rows of `record`, `block`, `us`: a line's block and its time in microseconds) whose
 * time breaks a stamped chain's order against the lines before it and the store's rows: another time for its
 * block than the store's (else the block's first line's), or a time before a lower block's. `record` NULL marks a
 * stored row; the answer is always a line's.
 */
export function sqlStampedBreach(blocks: string): string {
  const stored = ["payments", "transfers", "checkpoints", "channel_events"]
    .map((t) => `SELECT NULL::BIGINT AS record, block_number AS block, epoch_us(block_time) AS us FROM ${t}`)
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
  chain: ChainRecord,
  breach: { block: bigint; us: bigint; ref: bigint; before: bigint | null },
): string {
  const seconds = (us: bigint) => Number(us) / 1e6;
  if (breach.us !== breach.ref) {
    return `block ${breach.block} has time ${seconds(breach.us)}, but ${seconds(breach.ref)} before: on ${chain.name} a block has one time`;
  }
  return `block ${breach.block} has time ${seconds(breach.us)}, before a lower block's ${seconds(breach.before ?? 0n)}: on ${chain.name} times never go back`;
}
