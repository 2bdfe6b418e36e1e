/**
 * One connection to the analytics store and the calls made on it, apart from the database that opens the file,
 * forks it, runs its transactions and closes it (duckdb.ts): every statement passes here, one at a time, and
 * is refused once the store met damage or the process is stopping.
 */
import type { DuckDBAppender, DuckDBConnection, DuckDBPreparedStatement } from "@duckdb/node-api";
import { AppError } from "../common/errors.ts";
import type { Params, Row } from "./sql.ts";
import { AnalyticsDamagedError, storeError } from "./store-errors.ts";

/** Statements `allPrepared` keeps per connection; a few kinds of read use it. */
const MAX_PREPARED = 16;

/** Shared by an analytics database and its forks: once a query met damage, nothing more is read or written. */
export interface Health {
  damage?: AnalyticsDamagedError;
  /** Read-only (the check): it can write nothing, and it reads every table past a damaged one to list them all. */
  readsPastDamage: boolean;
}

/**
 * Calls on one connection never overlap whoever makes them: DuckDB fails one of two calls at once on a
 * connection ("Attempting to execute an unsuccessful or closed pending query result"), so each waits for the last.
 *
 * Damage a call meets stops the database and its forks (their `Health` is one): every later call fails with the
 * same `AnalyticsDamagedError`, and DuckDB is told not to checkpoint on close, which would write its log into the
 * damaged file.
 */
export class StoreConnection {
  constructor(
    readonly duckdb: DuckDBConnection,
    /** The store's file (absolute), as DuckDB and every error name it. */
    private readonly file: string,
    private readonly health: Health,
  ) {}

  /** Set when the process stops (`Analytics.stop`): no new call starts. */
  stopping = false;
  /** Calls to DuckDB under way on this connection, for `Analytics.stop` to wait for. */
  private readonly running = new Set<Promise<unknown>>();
  /** Statements `allPrepared` keeps, by their SQL. */
  private readonly prepared = new Map<string, DuckDBPreparedStatement>();
  /** The last call to DuckDB queued on this connection: the next one starts once it has settled. */
  private lastCall: Promise<unknown> = Promise.resolve();

  async run(sql: string, params?: Params): Promise<void> {
    await this.guarded(() => this.duckdb.run(sql, params));
  }

  async all<T extends Row = Row>(sql: string, params?: Params): Promise<T[]> {
    const reader = await this.guarded(() => this.duckdb.runAndReadAll(sql, params));
    return reader.getRowsJS().map(rowMaker(reader.deduplicatedColumnNames())) as T[];
  }

  /**
   * `all`, with the statement prepared once per connection and kept: for a large statement run again and
   * again with other parameters (a report's rendering took 16 ms to plan and 6 ms to run). DuckDB plans a
   * kept statement again by itself when a table it reads has changed, and sometimes at every execution
   * (docs/benchmarks-log.md): never slower than `all`. One caller at a time, as every call here.
   */
  async allPrepared<T extends Row = Row>(sql: string, params: Params): Promise<T[]> {
    const reader = await this.guarded(async () => {
      let statement = this.prepared.get(sql);
      if (!statement) {
        statement = await this.duckdb.prepare(sql);
        if (this.prepared.size >= MAX_PREPARED) this.dropPrepared();
        this.prepared.set(sql, statement);
      }
      statement.bind(params);
      return statement.runAndReadAll();
    });
    return reader.getRowsJS().map(rowMaker(reader.deduplicatedColumnNames())) as T[];
  }

  /**
   * Appends `rows` to the temporary table `table` through DuckDB's appender (far faster than INSERTs),
   * `fill` giving one row's values in the table's column order.
   */
  async append<T>(
    table: string,
    rows: readonly T[],
    fill: (appender: DuckDBAppender, row: T) => void,
  ): Promise<void> {
    if (rows.length === 0) return;
    await this.guarded(async () => {
      const appender = await this.duckdb.createAppender(table, null, "temp");
      try {
        for (const row of rows) {
          fill(appender, row);
          appender.endRow();
        }
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
    });
  }

  /** A ROLLBACK that neither damage met before nor a stop refuses (`Analytics.transaction` says why). */
  async rollback(): Promise<void> {
    await this.queued(() => this.duckdb.run("ROLLBACK"));
  }

  /** Whether a call is under way or queued on this connection. */
  get busy(): boolean {
    return this.running.size > 0;
  }

  /** Interrupts the call under way; settles once it and every call queued behind it have ended. */
  interrupt(): Promise<unknown> {
    this.duckdb.interrupt();
    return Promise.allSettled([...this.running]);
  }

  /** DuckDB checkpoints its write-ahead log into the file on close; a damaged or refused store must stay as it is. */
  async stopCheckpoints(): Promise<void> {
    try {
      await this.duckdb.run("PRAGMA disable_checkpoint_on_shutdown");
    } catch {
      // A read-only database never checkpoints; nothing else is left to try.
    }
  }

  /** Closes the connection and the statements it kept. */
  close(): void {
    this.dropPrepared();
    this.duckdb.closeSync();
  }

  private dropPrepared(): void {
    for (const statement of this.prepared.values()) statement.destroySync();
    this.prepared.clear();
  }

  /** Runs one call to DuckDB, unless damage was met before; its failure as the error it means (src/analytics/store-errors.ts). */
  private guarded<T>(work: () => Promise<T>): Promise<T> {
    return this.queued(async () => {
      if (this.health.damage) throw this.health.damage;
      if (this.stopping) throw closingError();
      try {
        return await work();
      } catch (error) {
        const meant = storeError(error, this.file);
        if (meant instanceof AnalyticsDamagedError && !this.health.readsPastDamage) {
          this.health.damage ??= meant;
          await this.stopCheckpoints();
        }
        throw meant ?? error;
      }
    });
  }

  /**
   * `call` once the connection's last call has settled, counted among the calls under way from when it is
   * queued (so that `stop` waits for, and interrupts, what waits behind a running call too).
   */
  private queued<T>(call: () => Promise<T>): Promise<T> {
    const turn = this.lastCall.then(call, call);
    this.lastCall = turn.catch(() => undefined);
    this.running.add(turn);
    void turn.then(
      () => this.running.delete(turn),
      () => this.running.delete(turn),
    );
    return turn;
  }
}

/** A call refused because the process is stopping: a 503, as a service that is going away answers. */
export const closingError = () =>
  new AppError(503, "analytics_closing", "the analytics database is closing: the process is stopping");

type RowMaker = (values: unknown[]) => Row;
const rowMakers = new Map<string, RowMaker>();
const ROW_MAKERS_KEPT = 256;

/**
 * A function that turns one row's values into an object with the columns' names, all of one shape.
 * The driver's own `getRowObjectsJS` adds the keys one by one, which leaves V8 with slow dictionary
 * objects: three times slower than this for the 50,000 rows of a report build (1.1 s against 0.35 s).
 * The object literal is compiled once per column list; names are embedded as JSON string literals
 * (any text is safe there), "__proto__" as a computed key so that it stays an own property.
 */
function rowMaker(names: readonly string[]): RowMaker {
  const key = JSON.stringify(names);
  let make = rowMakers.get(key);
  if (!make) {
    const fields = names.map((name, i) => {
      const literal = JSON.stringify(name);
      return `${name === "__proto__" ? `[${literal}]` : literal}: values[${i}]`;
    });
    make = new Function("values", `return { ${fields.join(", ")} };`) as RowMaker;
    if (rowMakers.size >= ROW_MAKERS_KEPT) rowMakers.delete(rowMakers.keys().next().value as string);
    rowMakers.set(key, make);
  }
  return make;
}
