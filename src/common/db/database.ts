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
   * Which store this is, for messages: "the PGlite database in /data/postgres", "the PostgreSQL database
   * test on 127.0.0.1:5432 (schema s)". Never a password.
   */
  readonly store: string;
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
  constructor(message: string, options?: ErrorOptions, code = "database_unavailable") {
    // The message names the server's directories and what the operator should do: callers get less.
    super(503, code, message, {
      ...options,
      publicMessage: "the service's database is unavailable; its operator has the details in the log",
    });
  }
}

/**
 * The database's files are incomplete or damaged: refused at open, or a query that reached the damage.
 * The message names the store, the table where it is known, and what to do; the files are left as found.
 */
export class DatabaseDamagedError extends DatabaseError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options, "database_damaged");
  }
}

/** What to do with a PGlite directory that is damaged: said the same way in every refusal. */
export function restoreAdvice(dir: string): string {
  return `restore ${dir} from a backup, or move it away to start with an empty database`;
}

/** Another process holds the PGlite data directory: PGlite allows one process per directory. */
export class DatabaseBusyError extends DatabaseError {}

/** `int8` values become exact `bigint`s on both engines (PGlite would give a lossy `number`). */
export const parseInt8 = (value: string): bigint => BigInt(value);
export const INT8_OID = 20;
