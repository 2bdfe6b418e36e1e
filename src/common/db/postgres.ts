import pg from "pg";
import { log } from "../log.ts";
import { type Database, INT8_OID, parseInt8, type Queryable, type QueryResult } from "./database.ts";

/** How the pool's connections name themselves in `pg_stat_activity`, unless the URL names them. */
export const APPLICATION_NAME = "x402-merchants";

/**
 * Connections the pool keeps open however long they are idle. pg closes an idle connection after 10 s,
 * so a host paid less often than that opened a new one for each request: about 12 ms of the server's CPU
 * (a backend forked, authenticated, its catalog caches filled) and 4 ms of the host's, where the request
 * itself costs each about 2 ms (docs/benchmarks-log.md, "Issue 41").
 */
const KEPT_CONNECTIONS = 1;
/** The connections beyond those, opened for a burst, are closed once idle this long. */
const IDLE_CLOSE_MS = 60_000;

/**
 * A pool of connections to a PostgreSQL server. The URL may carry libpq options, e.g.
 * `?options=-c%20search_path%3Dmy_schema` (the tests give each case its own schema that way), and
 * `application_name` (default `x402-merchants`).
 */
export function openPostgres(url: string, maxConnections = 10): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: maxConnections,
    min: Math.min(KEPT_CONNECTIONS, maxConnections),
    idleTimeoutMillis: IDLE_CLOSE_MS,
    // An idle connection (and its timer) does not keep the process alive: one that is done can exit.
    allowExitOnIdle: true,
    // What operators see in pg_stat_activity; the URL's application_name (or PGAPPNAME) wins.
    fallback_application_name: APPLICATION_NAME,
    // Per pool, not pg's global registry: int8 as an exact bigint, like the PGlite side.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID && format !== "binary"
          ? parseInt8
          : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection that breaks (server restart) emits 'error' on the pool; unhandled, it would crash
  // the process. The next query simply gets a fresh connection.
  pool.on("error", (error) => {
    log("warn", "postgres idle connection error", { error: error.message });
  });
  let closing: Promise<void> | undefined;
  return {
    kind: "postgres",
    store: describeServer(url),
    ...wrap(pool),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query("BEGIN");
        const result = await fn(wrap(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        try {
          await client.query("ROLLBACK");
        } catch (rollbackError) {
          // The connection is in an unknown state: destroy it rather than hand it to the next caller.
          broken = rollbackError as Error;
        }
        throw error;
      } finally {
        client.release(broken);
      }
    },
    close() {
      closing ??= pool.end();
      return closing;
    },
  };
}

function wrap(target: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const result = await target.query(sql, params as unknown[]);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? result.rows.length };
    },
    async exec(sql: string): Promise<void> {
      // Without parameters pg uses the simple protocol, which runs several statements at once.
      await target.query(sql);
    },
  };
}

/** "the PostgreSQL database test on 127.0.0.1:5432 (schema s)": the URL without its credentials. */
export function describeServer(url: string): string {
  try {
    const parsed = new URL(url);
    const database = decodeURIComponent(parsed.pathname.slice(1)) || "(default)";
    const host = parsed.hostname ? ` on ${parsed.hostname}:${parsed.port || 5432}` : "";
    const schema = /(?:^|\s)-c\s*search_path=(\S+)/.exec(parsed.searchParams.get("options") ?? "")?.[1];
    return `the PostgreSQL database ${database}${host}${schema ? ` (schema ${schema})` : ""}`;
  } catch {
    return "the PostgreSQL database of DATABASE_URL";
  }
}
