import crypto from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import {
  type Database,
  type DatabaseKind,
  type DatabaseOptions,
  openDatabase,
  type Queryable,
} from "../../src/common/db/index.ts";
import { dataLayout } from "../../src/config/layout.ts";

/**
 * The PostgreSQL server the tests may use (CI sets DATABASE_URL=postgres://postgres@127.0.0.1:5432/test),
 * or null. A test file runs its database cases on every kind of `DATABASE_KINDS`.
 */
export const SERVER_URL = process.env.DATABASE_URL || null;
export const DATABASE_KINDS: DatabaseKind[] = SERVER_URL ? ["pglite", "postgres"] : ["pglite"];
/**
 * Where a test keeps a ledger (a facilitator's, or a merchant's payments) when the database is not what it
 * tests (a merchant paid through the facilitator on a devnet, what a host offers): a schema of the server
 * when there is one (tens of milliseconds, as in production), else PGlite (about 1 CPU-s to open and
 * migrate, each time). The ledgers' own tests run on every kind of `DATABASE_KINDS`.
 */
export const LEDGER_KIND: DatabaseKind = SERVER_URL ? "postgres" : "pglite";

/** What a test gets: options for `openDatabase` (or a child process) that point at its own empty state. */
export interface TestDatabaseOptions extends DatabaseOptions {
  kind: DatabaseKind;
  /** A data directory of its own (its merchant PGlite directory is `pgliteDir`), for child processes. */
  dataDir: string;
  /** Removes the state (drops the schema, deletes the directory). Close every database on it first. */
  cleanup(): Promise<void>;
}

/**
 * Fresh, isolated database options of `kind`. PGlite: a new temporary data directory. Server: a new
 * random schema, selected through the URL's `options=-c search_path=...`, so the code under test (and any
 * child process given the URL as DATABASE_URL) creates its tables there and never sees another test's.
 * Cases can therefore run in any order and concurrently. The PGlite data directory holds both clusters, for
 * child processes given `dataDir` that open both, or with `clusters: "merchants"` only the one at
 * `pgliteDir`, for a test that opens that itself or a `serve` (which never starts a facilitator), or with
 * `clusters: "facilitator"` only the facilitator's, for a `devnet` or `facilitator` process (a copy of the
 * other costs a quarter CPU-second, for nothing).
 */
export async function isolatedDatabaseOptions(
  kind: DatabaseKind,
  clusters: "both" | "merchants" | "facilitator" = "both",
): Promise<TestDatabaseOptions> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-db-"));
  const removeDir = () => fs.rmSync(dataDir, { recursive: true, force: true });
  if (kind === "pglite") {
    const { pglite } = dataLayout(dataDir);
    const pgliteDir = pglite.merchants;
    const copies = {
      both: [pglite.merchants, pglite.facilitator],
      merchants: [pglite.merchants],
      facilitator: [pglite.facilitator],
    };
    for (const dir of copies[clusters]) {
      fs.cpSync(await pgliteTemplate(), dir, { recursive: true });
    }
    return { kind, dataDir, pgliteDir, databaseUrl: null, cleanup: async () => removeDir() };
  }
  if (!SERVER_URL) throw new Error("isolatedDatabaseOptions('postgres') needs DATABASE_URL");
  const schema = `test_${crypto.randomBytes(6).toString("hex")}`;
  await admin((client) => client.query(`CREATE SCHEMA ${schema}`));
  return {
    kind,
    dataDir,
    pgliteDir: dataLayout(dataDir).pglite.merchants,
    databaseUrl: withSearchPath(SERVER_URL, schema),
    cleanup: async () => {
      removeDir();
      await admin((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    },
  };
}

/**
 * An empty PGlite cluster to copy: creating one (initdb in WASM) takes about 2 s, copying it 0.1 s. Made
 * once per machine and PGlite version, atomically (workers racing to make it keep the first one).
 * The first-creation path itself is tested in test/common/db.test.ts.
 */
async function pgliteTemplate(): Promise<string> {
  // The package does not export its package.json: read it next to its entry point (dist/).
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const { version } = JSON.parse(
    fs.readFileSync(path.join(path.dirname(entry), "..", "package.json"), "utf8"),
  );
  const template = path.join(os.tmpdir(), `x402m-pglite-template-${version}`);
  if (fs.existsSync(path.join(template, "PG_VERSION"))) return template;
  const building = fs.mkdtempSync(`${template}-building-`);
  const db = await PGlite.create({ dataDir: building });
  await db.close();
  try {
    fs.renameSync(building, template);
  } catch {
    fs.rmSync(building, { recursive: true, force: true });
  }
  return template;
}

/**
 * An open, isolated database of `kind`; `close()` closes it and removes its state. On PGlite its data
 * directory holds the merchants' cluster it opened, not the facilitator's.
 */
export async function openTestDatabase(
  kind: DatabaseKind,
): Promise<{ db: Database; options: TestDatabaseOptions; close(): Promise<void> }> {
  const options = await isolatedDatabaseOptions(kind, "merchants");
  const db = await openDatabase(options);
  return {
    db,
    options,
    close: async () => {
      await db.close();
      await options.cleanup();
    },
  };
}

/**
 * One open database of each kind for a file's tests, opened by the first test that asks (a test run alone
 * opens only its own); each is closed through `closers`, which the file's `afterAll` runs. Tests that share one
 * read only their own rows (their own merchant, receiver or payer).
 */
export function storesByKind(closers: (() => Promise<void>)[]): (kind: DatabaseKind) => Promise<Database> {
  const stores = new Map<DatabaseKind, Promise<Database>>();
  return (kind) => {
    let store = stores.get(kind);
    if (!store) {
      store = openTestDatabase(kind).then((opened) => {
        closers.push(opened.close);
        return opened.db;
      });
      stores.set(kind, store);
    }
    return store;
  };
}

/** What a database was asked: its commits, and each statement's first three words. */
export interface DatabaseCounts {
  /** Transactions committed; a statement outside a transaction commits alone. */
  commits: number;
  statements: string[];
}

/** `db`, recording into `counts` what it commits and runs (transactions' statements included). */
export function countingDatabase(
  db: Database,
  counts: DatabaseCounts = { commits: 0, statements: [] },
): { db: Database; counts: DatabaseCounts } {
  const head = (sql: string) => sql.trim().split(/\s+/).slice(0, 3).join(" ");
  const counted = (q: Queryable): Queryable => ({
    query: (sql, params) => {
      counts.statements.push(head(sql));
      return q.query(sql, params);
    },
    exec: (sql) => q.exec(sql),
  });
  const proxy = new Proxy(db, {
    get(target, key, receiver) {
      if (key === "query") {
        return (sql: string, params?: readonly unknown[]) => {
          counts.commits++;
          return counted(target).query(sql, params);
        };
      }
      if (key === "transaction") {
        return <T>(fn: (tx: Queryable) => Promise<T>) => {
          counts.commits++;
          return target.transaction((tx) => fn(counted(tx)));
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: proxy, counts };
}

/** `url` with libpq's `options` parameter setting the search_path (percent-encoded: `+` is not a space here). */
export function withSearchPath(url: string, schema: string): string {
  const separator = url.includes("?") ? "&" : "?";
  return `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: SERVER_URL ?? undefined });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
