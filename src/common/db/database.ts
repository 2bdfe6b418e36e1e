/**
 * The one interface every service's PostgreSQL state goes through, whichever engine runs it: embedded
 * PGlite (a data directory, zero setup) or a PostgreSQL server (`DATABASE_URL`). Both answer the same SQL
 * with the same value types, so a module's SQL is written once and tested on both.
 *
 * Value types, identical on both engines:
 * - `int8` (bigint, `count(*)`) -> `bigint`: exact, never a silently rounded number;
 * - `numeric` -> `string` (token amounts: keep them as `numeric(78,0)` and `BigInt()` them);
 * - `timestamptz` -> `Date`; `json`/`jsonb` -> parsed values; `int4` -> `number`; `bool` -> `boolean`.
 * Parameters: pass `bigint` for `int8`/`numeric`, and `JSON.stringify(value)` for `jsonb` (the server driver
 * would turn a JS array into a Postgres array, not JSON).
 */
import { AppError } from "../errors.ts";

export interface QueryResult<Row> {
  rows: Row[];
  /** Rows returned, or affected by an INSERT/UPDATE/DELETE. */
  rowCount: number;
}

/** What a statement can run on: the database itself, or one open transaction. */
export interface Queryable {
  /** One statement with `$1`-style parameters. */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
  /** A script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export type DatabaseKind = "pglite" | "postgres";

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /**
   * Runs `fn` in one transaction (READ COMMITTED): committed when it resolves, rolled back when it throws.
   * Keep it short and never wait on the network inside: on PGlite a transaction holds the only connection,
   * so every other query of the process waits for it. Inside, use only `tx`: a query on the database
   * itself would wait for the transaction to end, which on PGlite is never.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Closes the engine (PGlite) or the pool (server). Idempotent. */
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Where PGlite keeps its files when there is no server (one of `dataLayout(dir).pglite`). */
  pgliteDir: string;
  /** A PostgreSQL server (`postgres://...`); null = embedded PGlite. */
  databaseUrl: string | null;
  /** Connections in the server pool. Default 10. */
  maxConnections?: number;
}

/** The database could not be opened (busy, unreachable, corrupt). */
export class DatabaseError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super(503, "database_unavailable", message, options);
  }
}

/** Another process holds the PGlite data directory: PGlite allows one process per directory. */
export class DatabaseBusyError extends DatabaseError {}

/** `int8` values become exact `bigint`s on both engines (PGlite would give a lossy `number`). */
export const parseInt8 = (value: string): bigint => BigInt(value);
export const INT8_OID = 20;
