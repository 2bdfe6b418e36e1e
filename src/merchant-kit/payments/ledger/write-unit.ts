/**
 * A database transaction that outlives the handler: an endpoint that writes runs in one, and it commits
 * only once the payment has settled (src/merchant-kit/app.ts decides). So a write is never kept for a
 * payment that did not settle, whatever the concurrency: the payment and the write succeed together.
 */
import type { Database, Queryable } from "../../../common/db/index.ts";

export interface WriteUnit {
  /**
   * The open transaction as a `Database` for the handler: `query` and `exec` run in it, `transaction(fn)`
   * is a savepoint inside it (a failing `fn` undoes only its own part), `close()` is refused.
   */
  db: Database;
  /** Commits (true) or rolls back (false), once; resolves when the transaction has ended. */
  finish(commit: boolean): Promise<void>;
}

const ROLLBACK = Symbol("rollback");

/**
 * Opens a transaction on `db` and keeps it open until `finish`. On PGlite it holds the one connection,
 * so everything else of the process waits meanwhile: a unit must never wait on anything that itself
 * needs this database (the facilitator has its own, src/services/facilitator.ts).
 */
export async function openWriteUnit(db: Database): Promise<WriteUnit> {
  let decide: (commit: boolean) => void = () => undefined;
  const decision = new Promise<boolean>((resolve) => {
    decide = resolve;
  });
  let opened: (tx: Queryable) => void = () => undefined;
  const ready = new Promise<Queryable>((resolve) => {
    opened = resolve;
  });
  const ended = db
    .transaction(async (tx) => {
      opened(tx);
      if (!(await decision)) throw ROLLBACK;
    })
    .catch((error: unknown) => {
      if (error !== ROLLBACK) throw error;
    });
  const tx = await Promise.race([
    ready,
    // A transaction that could not begin (the database is gone) ends without ever opening.
    ended.then(() => {
      throw new Error("the transaction ended before it began");
    }),
  ]);
  return {
    db: inTransaction(tx, db),
    // Only the first decision counts: `decide` resolves a promise, which settles once.
    finish(commit) {
      decide(commit);
      return ended;
    },
  };
}

/** An open transaction behind the `Database` interface; nested transactions are savepoints. */
function inTransaction(tx: Queryable, { kind, store }: Database): Database {
  let savepoints = 0;
  return {
    kind,
    store,
    query: (sql, params) => tx.query(sql, params),
    exec: (sql) => tx.exec(sql),
    async transaction(fn) {
      const name = `unit_${++savepoints}`;
      await tx.query(`SAVEPOINT ${name}`);
      try {
        const result = await fn(tx);
        await tx.query(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (error) {
        await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
        throw error;
      }
    },
    async close() {
      throw new Error("a payment's transaction ends with its settlement, not by the handler");
    },
  };
}
