/**
 * What the store's own modules (migrations.ts, integrity.ts, listings.ts) need of the analytics database:
 * SQL, an appender, a transaction, and its file. A file of its own because duckdb.ts opens the store through
 * them (verifies, then migrates), so they cannot import the class from it without importing it back.
 * `Analytics` (duckdb.ts) is one; its forks too.
 */
import type { DuckDBAppender, DuckDBValue } from "@duckdb/node-api";

export type Params = DuckDBValue[] | Record<string, DuckDBValue>;
export type Row = Record<string, unknown>;

export interface Sql {
  /** The store's file. */
  readonly file: string;
  run(sql: string, params?: Params): Promise<void>;
  all<T extends Row = Row>(sql: string, params?: Params): Promise<T[]>;
  one<T extends Row = Row>(sql: string, params?: Params): Promise<T | undefined>;
  /** Appends `rows` to the temporary table `table`, `fill` giving one row's values in column order. */
  append<T>(
    table: string,
    rows: readonly T[],
    fill: (appender: DuckDBAppender, row: T) => void,
  ): Promise<void>;
  /** Runs `fn` in one transaction: everything it wrote is kept, or nothing is. */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * A write that changes what a report says reached data from block `from` on (`bumpDataVersion`), of
   * `chain` (its slug; undefined: of any chain).
   */
  wrote(from: number, chain?: string): void;
}
