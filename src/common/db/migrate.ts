import { AppError } from "../errors.ts";
import type { Database, Queryable } from "./database.ts";

/** One schema change of a module. Versions are 1, 2, 3... and a version, once released, never changes. */
export interface Migration {
  version: number;
  /** What it does, for people reading `schema_migrations`. */
  name: string;
  /** SQL (several statements allowed) or a function for changes that need code. */
  up: string | ((tx: Queryable) => Promise<void>);
}

/** The migrations are not a valid list, or the database is newer than this program. */
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
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      module text NOT NULL,
      version integer NOT NULL,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (module, version)
    )`);
    const { rows } = await tx.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM schema_migrations WHERE module = $1",
      [module],
    );
    const current = rows[0]?.version ?? 0;
    const latest = migrations.at(-1)?.version ?? 0;
    if (current > latest) {
      throw new MigrationError(
        `the database has ${module} schema version ${current}, newer than this program's ${latest}: upgrade the program`,
      );
    }
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
      if (typeof migration.up === "string") await tx.exec(migration.up);
      else await migration.up(tx);
      await tx.query("INSERT INTO schema_migrations (module, version, name) VALUES ($1, $2, $3)", [
        module,
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
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
