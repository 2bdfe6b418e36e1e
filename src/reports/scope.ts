/**
 * Which chain's rows a report reads. Every statement of a build and of a read names its chain: a store holds
 * each chain's payments, transfers and reports side by side (`chain` columns), and a week of one is never
 * mixed with another's. The slug is a record's (`src/chain/chains.ts`), never a reader's text, so it is
 * written into the SQL as a literal: a statement's plan is then the same on every call for one chain, as it was
 * when every statement named Base.
 */
import type { AnyChainRecord } from "../chain/chains.ts";

const SLUG = /^[a-z][a-z0-9-]*$/;

/** The chain's slug as an SQL literal (`'base'`). */
export function sqlSlug(chain: Pick<AnyChainRecord, "slug">): string {
  if (!SLUG.test(chain.slug)) throw new Error(`internal: not a chain slug: ${JSON.stringify(chain.slug)}`);
  return `'${chain.slug}'`;
}

/** SQL: a row (optionally by an alias, "w.") is of `chain`. */
export const sqlChain = (chain: Pick<AnyChainRecord, "slug">, t = ""): string =>
  `${t}chain = ${sqlSlug(chain)}`;

/** A chain's data tables, whose rows' blocks a stamped chain's week close is chosen from (week/window.ts). */
export const DATA_TABLES = ["payments", "transfers"] as const;

/** SQL: `select` over each of `tables`' rows of `chain` where `where`, as one union. */
export function sqlOverTables(
  chain: Pick<AnyChainRecord, "slug">,
  tables: readonly string[],
  select: string,
  where: string,
): string {
  return tables
    .map((t) => `SELECT ${select} FROM ${t} WHERE ${sqlChain(chain)} AND ${where}`)
    .join(" UNION ALL ");
}

/** A time (unix ms) as an SQL TIMESTAMP literal, UTC as the store's times are. */
export function sqlTimestamp(ms: number): string {
  return `TIMESTAMP '${new Date(ms).toISOString().replace("T", " ").replace("Z", "")}'`;
}
