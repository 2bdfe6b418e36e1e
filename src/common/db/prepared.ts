/**
 * A statement that PGlite parses and plans once per database instead of once per call: `PREPARE` when first
 * run, then `EXECUTE` with the call's values. PGlite runs every statement in the process's one thread, and a
 * short `INSERT` or `UPDATE` of the payment ledger spends about 40% of its CPU in parsing and planning: a paid
 * request's take and finish, 1,032 µs by `query` with parameters, 630 µs prepared (docs/benchmarks-log.md,
 * 2026-11-29, 18:10).
 *
 * `EXECUTE` takes no protocol parameters (PostgreSQL refuses a bind to it), so the values are written into its
 * text as literals: only values that cannot be misread there (numbers, bigints, null, printable ASCII strings
 * with no quote or backslash: addresses, nonces, URLs, states), each quoted; a call with any other value, and
 * every call on a PostgreSQL server (a pool of sessions, where a statement's parse is not what a request costs)
 * or in a transaction, runs as the plain statement with parameters, the same SQL.
 */
import type { Database, Queryable, QueryResult } from "./database.ts";

export type PreparedValue = string | number | bigint | null;

/** Runs the statement on `q` with `params`, as `q.query(sql, params)` would. */
export type Prepared = <Row = Record<string, unknown>>(
  q: Queryable,
  params: readonly PreparedValue[],
) => Promise<QueryResult<Row>>;

/** A literal `EXECUTE` can carry as it is, once quoted: nothing a quote, a backslash or an encoding could turn. */
const SAFE_TEXT = /^[\x20-\x26\x28-\x5b\x5d-\x7e]*$/;

/** What each PGlite database has prepared: a statement's name, and whether its `PREPARE` succeeded. */
const preparedOn = new WeakMap<Queryable, Map<string, Promise<boolean>>>();

/**
 * The PGlite databases as pglite.ts opens them, each one session of its own. Only these prepare: a transaction,
 * or a handler's write unit that looks like a database (ledger/write-unit.ts), shares its database's session, where
 * a second `PREPARE` of the same name would fail and abort the transaction it ran in.
 */
const sessions = new WeakSet<Queryable>();

/** Marks `db` as a PGlite session of its own, where statements may be prepared (pglite.ts). */
export function ownSession<T extends Queryable>(db: T): T {
  sessions.add(db);
  return db;
}

/**
 * `sql` (with `$1`-style parameters of `types`, in order) under `name`, unique in the process. On PGlite the
 * first call prepares it; a database where `PREPARE` fails (or whose session lost it) runs it plain.
 */
export function prepared(name: string, types: readonly string[], sql: string): Prepared {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`${name}: not a statement name`);
  return async function run<Row>(q: Queryable, params: readonly PreparedValue[]) {
    const literals = isPglite(q) ? params.map(literal) : undefined;
    if (!literals || literals.includes(undefined) || params.length !== types.length)
      return q.query<Row>(sql, params);
    if (!(await prepare(q, name, types, sql))) return q.query<Row>(sql, params);
    const execute = `EXECUTE ${name}(${literals.join(", ")})`;
    try {
      return await q.query<Row>(execute);
    } catch (error) {
      // The session lost it (PGlite started again under the same object): prepared anew, once.
      if ((error as { code?: string }).code !== "26000") throw error;
      preparedOn.get(q)?.delete(name);
      if (!(await prepare(q, name, types, sql))) return q.query<Row>(sql, params);
      return q.query<Row>(execute);
    }
  };
}

function isPglite(q: Queryable): q is Database {
  return sessions.has(q) && (q as Partial<Database>).kind === "pglite";
}

function prepare(q: Queryable, name: string, types: readonly string[], sql: string): Promise<boolean> {
  let statements = preparedOn.get(q);
  if (!statements) {
    statements = new Map();
    preparedOn.set(q, statements);
  }
  let done = statements.get(name);
  if (!done) {
    // A script, not a statement: it writes nothing, so nothing waits for it as for a commit.
    done = q.exec(`PREPARE ${name}(${types.join(", ")}) AS ${sql}`).then(
      () => true,
      () => false,
    );
    statements.set(name, done);
  }
  return done;
}

/** The value as a quoted literal of `EXECUTE`, or undefined where it must travel as a parameter. */
function literal(value: PreparedValue): string | undefined {
  if (value === null) return "NULL";
  if (typeof value === "bigint") return `'${value}'`;
  if (typeof value === "number") return Number.isFinite(value) ? `'${value}'` : undefined;
  return SAFE_TEXT.test(value) ? `'${value}'` : undefined;
}
