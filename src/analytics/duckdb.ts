import fs from "node:fs";
import { type DuckDBAppender, type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { NotFoundError } from "../common/errors.ts";
import { sleep } from "../common/sleep.ts";
import type { CoreSettings } from "../config/core.ts";
import { dataLayout } from "../config/layout.ts";
import { StoreChanges } from "./changes.ts";
import { closingError, type Health, StoreConnection } from "./connection.ts";
import { verifyAtOpen } from "./integrity.ts";
import { migrate } from "./migrations.ts";
import type { Params, Row, Sql } from "./sql.ts";
import { AnalyticsBusyError, storeError } from "./store-errors.ts";
import { releaseStoreFile } from "./store-file.ts";

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

/**
 * The analytics database: one embedded DuckDB file in the data directory, verified and migrated on open.
 * One connection, for one caller, or for callers that take turns (`exclusive`); `fork()` gives another caller
 * of the same process its own connection (DuckDB runs their transactions side by side). Its statements run
 * on that connection one at a time, and stop at damage, as connection.ts says.
 *
 * A damaged store is refused at open (src/analytics/integrity.ts); damage a query meets later stops the
 * database and its forks.
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
  ) {
    this.calls = new StoreConnection(connection, file, health);
  }

  /** The calls on this connection, one at a time. */
  private readonly calls: StoreConnection;
  /** The forks of the file's first connection that are open: closing it closes them first. */
  private readonly forks = new Set<Analytics>();
  private closed = false;

  /** In a transaction: the lowest block a write reached, told to `changes` when it commits. */
  private pendingFrom: number | undefined;
  /** The chain of the writes of the open transaction so far (undefined: any, or none yet). */
  private pendingChain: string | undefined;
  private inTransaction = false;

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
      await analytics.calls.stopCheckpoints();
      analytics.close();
      throw error;
    }
  }

  run(sql: string, params?: Params): Promise<void> {
    return this.calls.run(sql, params);
  }

  all<T extends Row = Row>(sql: string, params?: Params): Promise<T[]> {
    return this.calls.all<T>(sql, params);
  }

  async one<T extends Row = Row>(sql: string, params?: Params): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  /** `all`, with the statement prepared once per connection and kept (`StoreConnection.allPrepared`). */
  allPrepared<T extends Row = Row>(sql: string, params: Params): Promise<T[]> {
    return this.calls.allPrepared<T>(sql, params);
  }

  /** Appends `rows` to the temporary table `table` through DuckDB's appender (`StoreConnection.append`). */
  append<T>(
    table: string,
    rows: readonly T[],
    fill: (appender: DuckDBAppender, row: T) => void,
  ): Promise<void> {
    return this.calls.append(table, rows, fill);
  }

  /** Runs `fn` in one transaction: everything it wrote is kept, or nothing is. */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.run("BEGIN TRANSACTION");
    this.inTransaction = true;
    this.pendingFrom = undefined;
    this.pendingChain = undefined;
    try {
      const result = await fn();
      await this.run("COMMIT");
      this.inTransaction = false;
      if (this.pendingFrom !== undefined) this.changes.committed(this.pendingFrom, this.pendingChain);
      return result;
    } catch (error) {
      this.inTransaction = false;
      // Past the guard: a transaction that met damage is still undone. A COMMIT that fails (a conflict)
      // has already ended it, and ROLLBACK would then throw "no transaction is active" over the reason.
      await this.calls.rollback().catch((rollback: Error) => {
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
   * `fn` alone among the `storeTurn`s of every connection of this process to the file: for writers on several
   * connections whose transactions can meet on one row (two chains' indexers adding one merchant, a merchant
   * paid on both), which DuckDB would refuse to the later one at its commit as a conflict. Readers and the
   * report builds, which write their own chain's rows, need no turn.
   */
  storeTurn<T>(fn: () => Promise<T>): Promise<T> {
    const root = this.owner ?? this;
    const turn = root.lastStoreTurn.then(fn, fn);
    root.lastStoreTurn = turn.catch(() => undefined);
    return turn;
  }

  /** The last turn `storeTurn` queued on the file's first connection, for every connection. */
  private lastStoreTurn: Promise<unknown> = Promise.resolve();

  /**
   * A write that changes what a report says (`bumpDataVersion`) reached data from block `from` on: told
   * to `changes` once it is committed, so that no reader renders from it before the store holds it.
   */
  wrote(from: number, chain?: string): void {
    if (!this.inTransaction) this.changes.committed(from, chain);
    else {
      // A transaction that wrote two chains' data reached both: it is told as a write of any chain.
      this.pendingChain = this.pendingFrom === undefined || this.pendingChain === chain ? chain : undefined;
      this.pendingFrom = Math.min(this.pendingFrom ?? from, from);
    }
  }

  /**
   * Another connection to the same file, for a second caller in this process (the indexer beside the
   * report service): each has its own transactions. Closing the analytics database closes its forks first.
   */
  async fork(): Promise<Analytics> {
    if (this.calls.stopping) throw closingError();
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
    for (const db of all) db.calls.stopping = true;
    for (;;) {
      const under = all.filter((db) => db.calls.busy);
      if (under.length === 0) break;
      await Promise.allSettled(under.map((db) => db.calls.interrupt()));
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
    this.calls.close();
    if (this.ownsInstance) {
      this.instance.closeSync();
      // Only now: closing it earlier would have let go of DuckDB's lock (store-file.ts).
      releaseStoreFile(this.file);
    }
  }
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
