import type { Database, DatabaseOptions } from "./database.ts";
import { openPglite } from "./pglite.ts";
import { openPostgres } from "./postgres.ts";

/**
 * Opens the service's PostgreSQL state: the server at `databaseUrl` when set, else embedded PGlite in
 * `pgliteDir` (created on first use, about 2 s; later opens take a fraction of that). A PGlite directory
 * that is not empty and not a whole cluster, or whose tables' files lost data, is refused with a
 * DatabaseDamagedError that names it, what is missing and what to do; nothing in it is changed.
 *
 * @example
 * const db = await openDatabase({ pgliteDir: dataLayout(dir).pglite.merchants, databaseUrl });
 * await migrate(db, "facilitator", FACILITATOR_MIGRATIONS);
 * const { rows } = await db.query<{ n: bigint }>("SELECT count(*) AS n FROM facilitator_authorizations");
 * await db.close();
 */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const db = openPostgres(options.databaseUrl, options.maxConnections);
    try {
      // Fail at start, with the reason, rather than on the first request.
      await db.query("SELECT 1");
    } catch (error) {
      await db.close();
      throw error;
    }
    return db;
  }
  return openPglite(options.pgliteDir);
}
