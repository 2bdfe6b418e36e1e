import fs from "node:fs";
import {
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBInstance,
  type DuckDBPreparedStatement,
} from "@duckdb/node-api";
import { AppError, NotFoundError } from "../common/errors.ts";
import { sleep } from "../common/sleep.ts";
import type { CoreSettings } from "../config/core.ts";
import { dataLayout } from "../config/layout.ts";
import { StoreChanges } from "./changes.ts";
import { verifyAtOpen } from "./integrity.ts";
import { migrate } from "./migrations.ts";
import type { Params, Row, Sql } from "./sql.ts";
import { AnalyticsBusyError, AnalyticsDamagedError, storeError } from "./store-errors.ts";
import { releaseStoreFile } from "./store-file.ts";

/** Statements `allPrepared` keeps per connection; a few kinds of read use it. */
const MAX_PREPARED = 16;

export interface AnalyticsOptions {
  dataDir: string;
  /** DuckDB memory limit such as "1GB"; past it DuckDB spills to `<dataDir>/tmp`. */
  memoryLimit?: string;
  threads?: number | null;
  /**
   * Opens the store as it is, for `x402-merchants check`: in DuckDB's read-only mode (it writes nothing; a
   * write-ahead log is replayed in memory), neither verified nor migrated; a missing store is an error, not a
   * new store.
   */
  readOnly?: boolean;
  /** How much of the file every open verifies block by block (default `OPEN_VERIFY_BYTES`, src/analytics/integrity.ts). */
  openVerifyBytes?: number;
}

/** Shared by an analytics database and its forks: once a query met damage, nothing more is read or written. */
interface Health {
  damage?: AnalyticsDamagedError;
  /** Read-only (the check): it can write nothing, and it reads every table past a damaged one to list them all. */
  readsPastDamage: boolean;
}

/**
 * The analytics database: one embedded DuckDB file in the data directory, verified and migrated on open.
 * One connection, for one caller, or for callers that take turns (`exclusive`); `fork()` gives another caller
 * of the same process its own connection (DuckDB runs their transactions side by side). Calls on one
 * connection never overlap whoever makes them: DuckDB fails one of two calls at once on a connection
 * ("Attempting to execute an unsuccessful or closed pending query result"), so each waits for the last.
 *
 * A damaged store is refused at open (src/analytics/integrity.ts); damage a query meets later stops the
 * database and its forks: every later query fails with the same `AnalyticsDamagedError`, and DuckDB is told not
 * to checkpoint on close, which would write its log into the damaged file.
 */
export class Analytics implements Sql {
  private constructor(
    private readonly instance: DuckDBInstance,
    readonly connection: DuckDBConnection,
    readonly dataDir: string,
    /** The store's file (absolute), as DuckDB and every error name it. */
    readonly file: string,
    private readonly health: Health,
    /** The writes of this process's connections to the file, shared by the database and its forks. */
    readonly changes: StoreChanges,
    /** Forks close only their connection; the analytics database that opened the file closes it. */
    private readonly ownsInstance = true,
  ) {}

  /** The forks of the file's first connection that are open: closing it closes them first. */
  private readonly forks = new Set<Analytics>();
  private closed = false;
  /** Calls to DuckDB under way on this connection, for `stop` to wait for. */
  private readonly running = new Set<Promise<unknown>>();
  /** Set by `stop`: no new call starts. */
  private stopping = false;

  /** In a transaction: the lowest block a write reached, told to `changes` when it commits. */
  private pendingFrom: number | undefined;
  private inTransaction = false;

  /** Statements `allPrepared` keeps, by their SQL. */
  private readonly prepared = new Map<string, DuckDBPreparedStatement>();

  /** The last call to DuckDB queued on this connection: the next one starts once it has settled. */
  private lastCall: Promise<unknown> = Promise.resolve();
  /** The last turn `exclusive` queued on this connection. */
  private lastTurn: Promise<unknown> = Promise.resolve();

  static async open(options: AnalyticsOptions): Promise<Analytics> {
    const { dataDir } = options;
    const layout = dataLayout(dataDir).analytics;
    if (options.readOnly) {
      if (!fs.existsSync(layout.file))
        throw new NotFoundError(`there is no analytics store at ${layout.file}`);
    } else {
      fs.mkdirSync(dataDir, { recursive: true });
    }
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(layout.file, {
        memory_limit: options.memoryLimit ?? "1GB",
        temp_directory: layout.spill,
        ...(options.threads ? { threads: String(options.threads) } : {}),
        ...(options.readOnly ? { access_mode: "READ_ONLY" } : {}),
      });
    } catch (error) {
      throw storeError(error, layout.file, true) ?? error;
    }
    const health = { readsPastDamage: options.readOnly === true };
    const analytics = new Analytics(
      instance,
      await instance.connect(),
      dataDir,
      layout.file,
      health,
      new StoreChanges(),
    );
    try {
      // Every timestamp in the analytics database is UTC; fix the session zone so casts never depend on the host.
      await analytics.run("SET TimeZone = 'UTC'");
      if (!options.readOnly) {
        await verifyAtOpen(analytics, options.openVerifyBytes);
        await migrate(analytics);
      }
      return analytics;
    } catch (error) {
      // Refused or failed: leave the files as they were (DuckDB would checkpoint a replayed log on close).
      await analytics.stopCheckpoints();
      analytics.close();
      throw error;
    }
  }

  async run(sql: string, params?: Params): Promise<void> {
    await this.guarded(() => this.connection.run(sql, params));
  }

  async all<T extends Row = Row>(sql: string, params?: Params): Promise<T[]> {
    const reader = await this.guarded(() => this.connection.runAndReadAll(sql, params));
    return reader.getRowsJS().map(rowMaker(reader.deduplicatedColumnNames())) as T[];
  }

  async one<T extends Row = Row>(sql: string, params?: Params): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  /**
   * `all`, with the statement prepared once per connection and kept: for a large statement run again and
   * again with other parameters (a report's rendering took 16 ms to plan and 6 ms to run). DuckDB plans a
   * kept statement again by itself when a table it reads has changed, and sometimes at every execution
   * (docs/benchmarks.md): never slower than `all`. One caller at a time, as every call here.
   */
  async allPrepared<T extends Row = Row>(sql: string, params: Params): Promise<T[]> {
    const reader = await this.guarded(async () => {
      let statement = this.prepared.get(sql);
      if (!statement) {
        statement = await this.connection.prepare(sql);
        if (this.prepared.size >= MAX_PREPARED) this.dropPrepared();
        this.prepared.set(sql, statement);
      }
      statement.bind(params);
      return statement.runAndReadAll();
    });
    return reader.getRowsJS().map(rowMaker(reader.deduplicatedColumnNames())) as T[];
  }

  private dropPrepared(): void {
    for (const statement of this.prepared.values()) statement.destroySync();
    this.prepared.clear();
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
      const appender = await this.connection.createAppender(table, null, "temp");
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

  /** Runs `fn` in one transaction: everything it wrote is kept, or nothing is. */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.run("BEGIN TRANSACTION");
    this.inTransaction = true;
    this.pendingFrom = undefined;
    try {
      const result = await fn();
      await this.run("COMMIT");
      this.inTransaction = false;
      if (this.pendingFrom !== undefined) this.changes.committed(this.pendingFrom);
      return result;
    } catch (error) {
      this.inTransaction = false;
      // Past the guard: a transaction that met damage is still undone. A COMMIT that fails (a conflict)
      // has already ended it, and ROLLBACK would then throw "no transaction is active" over the reason.
      await this.queued(() => this.connection.run("ROLLBACK")).catch((rollback: Error) => {
        if (!/no transaction is active/.test(rollback.message)) throw rollback;
      });
      throw error;
    }
  }

  /**
   * `fn` once every turn queued before it on this connection has ended, and alone among them: for callers
   * that share the connection (the report service's builds, the demo's own writes), whose several calls and
   * transactions must not interleave with another's. Calls made outside any turn still never overlap one.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const turn = this.lastTurn.then(fn, fn);
    this.lastTurn = turn.catch(() => undefined);
    return turn;
  }

  /**
   * A write that changes what a report says (`bumpDataVersion`) reached data from block `from` on: told
   * to `changes` once it is committed, so that no reader renders from it before the store holds it.
   */
  wrote(from: number): void {
    if (!this.inTransaction) this.changes.committed(from);
    else this.pendingFrom = Math.min(this.pendingFrom ?? from, from);
  }

  /**
   * Another connection to the same file, for a second caller in this process (the indexer beside the
   * report service): each has its own transactions. Closing the analytics database closes its forks first.
   */
  async fork(): Promise<Analytics> {
    if (this.stopping) throw closingError();
    const connection = await this.instance.connect();
    const fork = new Analytics(
      this.instance,
      connection,
      this.dataDir,
      this.file,
      this.health,
      this.changes,
      false,
    );
    fork.owner = this.owner ?? this;
    fork.owner.forks.add(fork);
    await fork.run("SET TimeZone = 'UTC'");
    return fork;
  }

  /** The database whose forks this one is among (none for the database itself). */
  private owner: Analytics | undefined;

  /**
   * Closes once nothing runs on the file's connections: no call starts from here, those under way (a report
   * build the indexer's last commit started) are interrupted, and the close waits for them to end. Closing
   * does not stop a query that runs: it runs on, and the process cannot exit until it ends (a stopped demo's
   * exit was held for minutes by a week's build on a loaded machine, deaf to signals meanwhile). For a
   * process that stops while its store is in use; `close` is for one whose calls are done.
   */
  async stop(): Promise<void> {
    const all = this.ownsInstance ? [this, ...this.forks] : [this];
    for (const db of all) db.stopping = true;
    for (;;) {
      const under = all.filter((db) => db.running.size > 0);
      if (under.length === 0) break;
      for (const db of under) db.connection.interrupt();
      await Promise.allSettled(under.flatMap((db) => [...db.running]));
      // What failed on the interrupt may start one more call (a ROLLBACK) once its callers' handlers have run,
      // all of them before the next turn of the event loop: the loop waits for that call too.
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.close();
  }

  /** Closes the connection (again: nothing); the database that opened the file closes its open forks first. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.owner?.forks.delete(this);
    if (this.ownsInstance) for (const fork of [...this.forks]) fork.close();
    this.dropPrepared();
    this.connection.closeSync();
    if (this.ownsInstance) {
      this.instance.closeSync();
      // Only now: closing it earlier would have let go of DuckDB's lock (store-file.ts).
      releaseStoreFile(this.file);
    }
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

  /** DuckDB checkpoints its write-ahead log into the file on close; a damaged or refused store must stay as it is. */
  private async stopCheckpoints(): Promise<void> {
    try {
      await this.connection.run("PRAGMA disable_checkpoint_on_shutdown");
    } catch {
      // A read-only database never checkpoints; nothing else is left to try.
    }
  }
}

/** A call refused because the process is stopping: a 503, as a service that is going away answers. */
const closingError = () =>
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

/** Opens the analytics database the configuration names. */
export function openAnalytics(
  config: Pick<CoreSettings, "dataDir" | "duckdbMemory" | "duckdbThreads">,
): Promise<Analytics> {
  return Analytics.open({
    dataDir: config.dataDir,
    memoryLimit: config.duckdbMemory,
    threads: config.duckdbThreads,
  });
}

/**
 * `openAnalytics`, trying again while another process holds the database, for up to `waitMs`; past that the
 * last `AnalyticsBusyError` is thrown.
 */
export async function openAnalyticsWaiting(
  config: Pick<CoreSettings, "dataDir" | "duckdbMemory" | "duckdbThreads">,
  waitMs: number,
): Promise<Analytics> {
  const deadline = Date.now() + waitMs;
  for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
    try {
      return await openAnalytics(config);
    } catch (error) {
      const left = deadline - Date.now();
      if (!(error instanceof AnalyticsBusyError) || left <= 0) throw error;
      await sleep(Math.min(pause, left));
    }
  }
}
