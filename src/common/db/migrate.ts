import crypto from "node:crypto";
import { AppError } from "../errors.ts";
import { log } from "../log.ts";
import type { Database, Queryable } from "./database.ts";

/** One schema change of a module. Versions are 1, 2, 3... and a version, once released, never changes. */
export interface Migration {
  version: number;
  /** What it does, for people reading `schema_migrations`. */
  name: string;
  /** SQL (several statements allowed) or a function for changes that need code. */
  up: string | ((tx: Queryable) => Promise<void>);
}

/**
 * The migrations are not a valid list, the database is newer than this program, or tables its version
 * has are gone.
 */
export class MigrationError extends AppError {
  constructor(message: string) {
    super(500, "schema_mismatch", message);
  }
}

/**
 * Every migration of every module takes this one advisory lock (transaction-scoped): two processes that
 * start at once on one server apply each migration exactly once, the second waiting for the first. The
 * number is arbitrary but fixed ("x402m" in ASCII); advisory locks are per database, not per schema.
 */
const MIGRATION_LOCK = 0x7834_3032_6d;

/**
 * Brings `module`'s tables up to its latest migration. Each migration runs in its own transaction together
 * with its row in `schema_migrations(module, version)`, so a failure leaves the database at the previous
 * version and the next start retries from there. Tables are created unqualified, in the connection's
 * `search_path` schema. Returns the versions applied now (empty when already current).
 *
 * Each row also records the module's tables once its version was applied (`tables`: those its migrations
 * created, less those they dropped or renamed, found by comparing the schema's tables before and after
 * each migration). At every start, a table of that list that is gone is refused with a MigrationError
 * naming it, rather than found missing by a request. Rows from before that record are completed once by
 * replaying the applied migrations in a scratch schema that is rolled back.
 *
 * @example
 * await migrate(db, "facilitator", [
 *   { version: 1, name: "ledger", up: "CREATE TABLE facilitator_authorizations (...)" },
 * ]);
 */
export async function migrate(
  db: Database,
  module: string,
  migrations: readonly Migration[],
): Promise<number[]> {
  checkList(module, migrations);
  await db.transaction(async (tx) => {
    await lock(tx);
    await ensureBookkeeping(tx);
    const { rows } = await tx.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM schema_migrations WHERE module = $1",
      [module],
    );
    const current = rows[0]?.version ?? 0;
    const latest = migrations.at(-1)?.version ?? 0;
    if (current > latest) {
      throw new MigrationError(
        `${db.store} has ${module} schema version ${current}, newer than this program's ${latest}: upgrade the program`,
      );
    }
    if (current > 0) await checkTables(db.store, tx, module, migrations.slice(0, current));
  });

  const applied: number[] = [];
  for (const migration of migrations) {
    const ran = await db.transaction(async (tx) => {
      await lock(tx);
      // Checked under the lock: another process may have applied it while we waited.
      const done = await tx.query("SELECT 1 FROM schema_migrations WHERE module = $1 AND version = $2", [
        module,
        migration.version,
      ]);
      if (done.rowCount > 0) return false;
      const before = await schemaTables(tx);
      await run(tx, migration);
      const after = await schemaTables(tx);
      const previous = migration.version === 1 ? [] : await recordedTables(tx, module, migration.version - 1);
      // Unknown before (a row whose record could not be completed) stays unknown.
      const tables =
        previous === null
          ? null
          : [
              ...previous.filter((t) => after.has(t) || !before.has(t)),
              ...[...after].filter((t) => !before.has(t)),
            ].sort();
      await tx.query(
        "INSERT INTO schema_migrations (module, version, name, tables) VALUES ($1, $2, $3, $4)",
        [module, migration.version, migration.name, tables],
      );
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
}

/** Creates `schema_migrations`, or adds the `tables` column to one of an earlier version. */
async function ensureBookkeeping(tx: Queryable): Promise<void> {
  // Looked up first, not `IF NOT EXISTS`: a start with nothing to change runs no DDL at all.
  const { rows } = await tx.query<{ oid: string | null; has_tables: boolean }>(
    `SELECT t.oid::text AS oid,
            EXISTS (SELECT 1 FROM pg_attribute a
                     WHERE a.attrelid = t.oid AND a.attname = 'tables' AND NOT a.attisdropped) AS has_tables
       FROM (SELECT to_regclass(quote_ident(current_schema()) || '.schema_migrations') AS oid) t`,
  );
  if (rows[0]?.oid == null) {
    await tx.exec(`CREATE TABLE schema_migrations (
      module text NOT NULL,
      version integer NOT NULL,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(),
      tables text[],
      PRIMARY KEY (module, version)
    )`);
  } else if (!rows[0].has_tables) {
    await tx.exec("ALTER TABLE schema_migrations ADD COLUMN tables text[]");
  }
}

/** Refuses when a table the module's current version has is gone. */
async function checkTables(
  store: string,
  tx: Queryable,
  module: string,
  applied: readonly Migration[],
): Promise<void> {
  const version = applied.length;
  let tables = await recordedTables(tx, module, version);
  if (tables === null) {
    tables = await replayTables(tx, module, applied);
    if (tables === null) return;
    await tx.query("UPDATE schema_migrations SET tables = $3 WHERE module = $1 AND version = $2", [
      module,
      version,
      tables,
    ]);
  }
  const existing = await schemaTables(tx);
  const missing = tables.filter((t) => !existing.has(t));
  if (missing.length === 0) return;
  throw new MigrationError(
    `${store} lacks the ${module} table${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, which its ` +
      `schema version ${version} has: the module cannot run without ${missing.length > 1 ? "them" : "it"}. ` +
      "Nothing was changed: restore the database from a backup, or, to start the module empty, drop its " +
      `tables and delete its rows from schema_migrations (module '${module}')`,
  );
}

/** The module's tables recorded with `version`, or null when that row predates the record. */
async function recordedTables(tx: Queryable, module: string, version: number): Promise<string[] | null> {
  const { rows } = await tx.query<{ tables: string[] | null }>(
    "SELECT tables FROM schema_migrations WHERE module = $1 AND version = $2",
    [module, version],
  );
  return rows[0]?.tables ?? null;
}

/**
 * The tables `applied` create, learnt by running them in a new schema put first on the search path,
 * inside a savepoint that is rolled back: nothing of it remains. Null when they cannot run there (a
 * migration that needs its data): the check is then skipped, and said so.
 */
async function replayTables(
  tx: Queryable,
  module: string,
  applied: readonly Migration[],
): Promise<string[] | null> {
  const scratch = `x402m_replay_${crypto.randomBytes(6).toString("hex")}`;
  await tx.exec("SAVEPOINT x402m_replay");
  try {
    await tx.exec(`CREATE SCHEMA ${scratch}`);
    await tx.query("SELECT set_config('search_path', $1 || ', ' || current_setting('search_path'), true)", [
      scratch,
    ]);
    for (const migration of applied) await run(tx, migration);
    const { rows } = await tx.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY tablename",
      [scratch],
    );
    return rows.map((r) => r.name);
  } catch (error) {
    log("warn", "cannot tell which tables a module's migrations made: its tables are not checked", {
      module,
      error,
    });
    return null;
  } finally {
    await tx.exec("ROLLBACK TO SAVEPOINT x402m_replay; RELEASE SAVEPOINT x402m_replay");
  }
}

/** The tables of the schema migrations create theirs in. */
async function schemaTables(tx: Queryable): Promise<Set<string>> {
  const { rows } = await tx.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()",
  );
  return new Set(rows.map((r) => r.name));
}

async function run(tx: Queryable, migration: Migration): Promise<void> {
  if (typeof migration.up === "string") await tx.exec(migration.up);
  else await migration.up(tx);
}

async function lock(tx: Queryable): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock($1)", [BigInt(MIGRATION_LOCK)]);
}

function checkList(module: string, migrations: readonly Migration[]): void {
  if (!/^[a-z][a-z0-9_]*$/.test(module)) throw new MigrationError(`bad module name "${module}"`);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new MigrationError(
        `${module} migration #${i + 1} has version ${m.version}: versions must be 1, 2, 3...`,
      );
    }
  });
}
