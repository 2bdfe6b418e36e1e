import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Database,
  DatabaseBusyError,
  DatabaseError,
  type DatabaseKind,
  type Migration,
  MigrationError,
  migrate,
  openDatabase,
} from "../../src/common/db/index.ts";
import { DATABASE_KINDS, isolatedDatabaseOptions, openTestDatabase } from "../helpers/db.ts";

/** A module name no other case uses, so cases sharing one database never see each other's tables. */
const uniqueModule = () => `m_${crypto.randomBytes(4).toString("hex")}`;

/** One open database of each kind for the cases that can share one (opening PGlite costs a CPU-second). */
const shared = new Map<DatabaseKind, ReturnType<typeof openTestDatabase>>();
function sharedDatabase(kind: DatabaseKind): ReturnType<typeof openTestDatabase> {
  const opened = shared.get(kind) ?? openTestDatabase(kind);
  shared.set(kind, opened);
  return opened;
}
afterAll(async () => {
  for (const opened of shared.values()) await (await opened).close();
});

describe.each(DATABASE_KINDS)("database on %s", (kind) => {
  let db: Database;
  beforeAll(async () => {
    ({ db } = await sharedDatabase(kind));
  });

  it("returns the same value types on both engines", async () => {
    const { rows } = await db.query<Record<string, unknown>>(
      `SELECT 9007199254740993::int8 AS big, count(*) AS n, 7::int4 AS small, 1.50::numeric AS amount,
              '2026-01-02T03:04:05Z'::timestamptz AS at, $1::jsonb AS doc, $2::numeric(78,0) + 1 AS wei,
              true AS yes, NULL::text AS nothing`,
      [JSON.stringify({ a: [1, 2] }), 10n ** 30n],
    );
    expect(rows).toEqual([
      {
        big: 9007199254740993n,
        n: 1n,
        small: 7,
        amount: "1.50",
        at: new Date("2026-01-02T03:04:05Z"),
        doc: { a: [1, 2] },
        wei: "1000000000000000000000000000001",
        yes: true,
        nothing: null,
      },
    ]);
  });

  it("counts affected rows, commits transactions and rolls them back on error", async () => {
    const table = uniqueModule();
    await db.exec(`CREATE TABLE ${table} (id int PRIMARY KEY, v text); CREATE INDEX ON ${table} (v)`);
    expect((await db.query(`INSERT INTO ${table} VALUES (1, 'a'), (2, 'b')`)).rowCount).toBe(2);
    expect((await db.query(`UPDATE ${table} SET v = 'c' WHERE id > $1`, [0])).rowCount).toBe(2);

    const result = await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO ${table} VALUES (3, 'd')`);
      return (await tx.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n;
    });
    expect(result).toBe(3n);

    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${table} VALUES (4, 'e')`);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    await expect(
      db.transaction((tx) => tx.query(`INSERT INTO ${table} VALUES (1, 'dup')`)),
    ).rejects.toThrow();
    const { rows } = await db.query<{ id: number }>(`SELECT id FROM ${table} ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual([1, 2, 3]);
  });

  it("lets exactly one of many concurrent conditional updates claim a row", async () => {
    // The facilitator's guarantee against double settlement rests on this.
    const table = uniqueModule();
    await db.exec(`CREATE TABLE ${table} (id int PRIMARY KEY, state text NOT NULL)`);
    await db.query(`INSERT INTO ${table} VALUES (1, 'verified')`);
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        db.transaction((tx) =>
          tx.query(`UPDATE ${table} SET state = $1 WHERE id = 1 AND state = 'verified' RETURNING id`, [
            `claimed-${i}`,
          ]),
        ),
      ),
    );
    expect(claims.map((c) => c.rowCount).sort()).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
  });

  it("applies a module's migrations once, in order, and only the new ones later", async () => {
    const module = uniqueModule();
    const v1: Migration = {
      version: 1,
      name: "items",
      up: `CREATE TABLE ${module}_items (id int PRIMARY KEY)`,
    };
    const v2: Migration = {
      version: 2,
      name: "seed",
      up: async (tx) => {
        await tx.query(`INSERT INTO ${module}_items VALUES ($1), ($2)`, [1, 2]);
      },
    };
    const v3: Migration = {
      version: 3,
      name: "names",
      up: `ALTER TABLE ${module}_items ADD COLUMN name text; UPDATE ${module}_items SET name = 'n' || id`,
    };
    expect(await migrate(db, module, [v1, v2])).toEqual([1, 2]);
    expect(await migrate(db, module, [v1, v2])).toEqual([]);
    expect(await migrate(db, module, [v1, v2, v3])).toEqual([3]);

    const { rows } = await db.query<{ version: number; name: string; applied_at: Date }>(
      "SELECT version, name, applied_at FROM schema_migrations WHERE module = $1 ORDER BY version",
      [module],
    );
    expect(rows.map((r) => [r.version, r.name])).toEqual([
      [1, "items"],
      [2, "seed"],
      [3, "names"],
    ]);
    expect(rows[0]?.applied_at).toBeInstanceOf(Date);
    const items = await db.query<{ name: string }>(`SELECT name FROM ${module}_items ORDER BY id`);
    expect(items.rows.map((r) => r.name)).toEqual(["n1", "n2"]);
  });

  it("leaves a failed migration unapplied and unrecorded, so the next start retries it", async () => {
    const module = uniqueModule();
    const good: Migration = { version: 1, name: "t", up: `CREATE TABLE ${module}_t (id int)` };
    const bad: Migration = {
      version: 2,
      name: "broken",
      up: `CREATE TABLE ${module}_u (id int); SELECT no_such_function()`,
    };
    await expect(migrate(db, module, [good, bad])).rejects.toThrow(/no_such_function/);
    const table = await db.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [`${module}_u`]);
    expect(table.rows[0]?.t).toBeNull();
    const fixed: Migration = { ...bad, up: `CREATE TABLE ${module}_u (id int)` };
    expect(await migrate(db, module, [good, fixed])).toEqual([2]);
  });

  it("refuses a database newer than the program, and a malformed list", async () => {
    const module = uniqueModule();
    const m = (version: number): Migration => ({ version, name: `v${version}`, up: "SELECT 1" });
    await migrate(db, module, [m(1), m(2)]);
    await expect(migrate(db, module, [m(1)])).rejects.toThrow(MigrationError);
    await expect(migrate(db, module, [m(1)])).rejects.toThrow(/version 2, newer than this program's 1/);
    await expect(migrate(db, uniqueModule(), [m(1), m(3)])).rejects.toThrow(/versions must be 1, 2, 3/);
    await expect(migrate(db, "Bad-Name", [m(1)])).rejects.toThrow(/bad module name/);
  });

  it("refuses to start when a table the module's migrations created is gone, and changes nothing", async () => {
    const module = uniqueModule();
    const migrations: Migration[] = [
      {
        version: 1,
        name: "a and b",
        up: `CREATE TABLE ${module}_a (id int); CREATE TABLE ${module}_b (id int)`,
      },
      { version: 2, name: "b renamed", up: `ALTER TABLE ${module}_b RENAME TO ${module}_c` },
      {
        version: 3,
        name: "a replaced",
        up: async (tx) => {
          await tx.exec(`DROP TABLE ${module}_a; CREATE TABLE ${module}_d (id int)`);
        },
      },
    ];
    expect(await migrate(db, module, migrations)).toEqual([1, 2, 3]);
    // Tables renamed or dropped by a later version are not missing.
    expect(await migrate(db, module, migrations)).toEqual([]);

    await db.exec(`DROP TABLE ${module}_c`);
    const error = await migrate(db, module, migrations).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    const { message } = error as MigrationError;
    expect(message).toContain(`${module}_c`);
    expect(message).not.toContain(`${module}_d`);
    expect(message).toContain(db.store);
    expect(message).toMatch(/restore .*from a backup/i);
    const { rows } = await db.query<{ version: number }>(
      "SELECT version FROM schema_migrations WHERE module = $1 ORDER BY version",
      [module],
    );
    expect(rows.map((r) => r.version)).toEqual([1, 2, 3]);
    const gone = await db.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [`${module}_c`]);
    expect(gone.rows[0]?.t).toBeNull();
  });
});

describe.each(DATABASE_KINDS)("a database migrated before its tables were recorded, on %s", (kind) => {
  it("is checked too: a missing table is refused, a whole one is recorded", async () => {
    const { db, close } = await openTestDatabase(kind);
    try {
      // schema_migrations as this program wrote it before it recorded each module's tables.
      await db.exec(`CREATE TABLE schema_migrations (
          module text NOT NULL, version integer NOT NULL, name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (module, version));
        CREATE TABLE whole_t (id int); CREATE TABLE broken_t (id int); CREATE TABLE broken_u (id int);
        INSERT INTO schema_migrations (module, version, name) VALUES ('whole', 1, 't'), ('broken', 1, 't'),
          ('broken', 2, 'u');`);
      const whole: Migration[] = [{ version: 1, name: "t", up: "CREATE TABLE whole_t (id int)" }];
      const broken: Migration[] = [
        { version: 1, name: "t", up: "CREATE TABLE broken_t (id int)" },
        { version: 2, name: "u", up: "CREATE TABLE broken_u (id int)" },
      ];
      await db.exec("DROP TABLE broken_u");
      expect(await migrate(db, "whole", whole)).toEqual([]);
      await expect(migrate(db, "broken", broken)).rejects.toThrow(/broken_u/);
      await db.exec("DROP TABLE whole_t");
      await expect(migrate(db, "whole", whole)).rejects.toThrow(/whole_t/);
    } finally {
      await close();
    }
  });
});

describe.runIf(DATABASE_KINDS.includes("postgres"))("database on a PostgreSQL server", () => {
  it("runs each migration once when several processes start at once", async () => {
    const options = await isolatedDatabaseOptions("postgres");
    // Separate pools stand for separate processes: separate connections racing for the same schema.
    const dbs = await Promise.all(Array.from({ length: 4 }, () => openDatabase(options)));
    try {
      const module = uniqueModule();
      const migrations: Migration[] = [
        { version: 1, name: "t", up: `CREATE TABLE ${module}_t (id int PRIMARY KEY)` },
        { version: 2, name: "row", up: `INSERT INTO ${module}_t VALUES (1)` },
      ];
      const applied = await Promise.all(dbs.map((db) => migrate(db, module, migrations)));
      expect(applied.flat().sort()).toEqual([1, 2]);
      const [db] = dbs as [Database];
      expect((await db.query(`SELECT * FROM ${module}_t`)).rowCount).toBe(1);
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
      await options.cleanup();
    }
  });

  it("keeps each test's tables in its own schema", async () => {
    const [a, b] = await Promise.all([openTestDatabase("postgres"), openTestDatabase("postgres")]);
    try {
      await a.db.exec("CREATE TABLE shared_name (id int)");
      await b.db.exec("CREATE TABLE shared_name (id int)");
      await a.db.query("INSERT INTO shared_name VALUES (1)");
      expect((await b.db.query("SELECT * FROM shared_name")).rowCount).toBe(0);
      const schema = await a.db.query<{ s: string }>("SELECT current_schema() AS s");
      expect(schema.rows[0]?.s).toMatch(/^test_[0-9a-f]{12}$/);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe("PGlite data directory", () => {
  it("creates a new cluster in a process of its own, so the opener never holds initdb's memory", async () => {
    // In the opening process, initdb's WASM instances left 500 MB that an idle server never collected.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-db-"));
    try {
      const probe = `
        import fs from "node:fs";
        const { openPglite } = await import("./src/common/db/pglite.ts");
        const db = await openPglite(process.argv[1]);
        await db.query("CREATE TABLE t (v int)");
        const peak = Number(/VmHWM:\\s+(\\d+)/.exec(fs.readFileSync("/proc/self/status", "utf8"))[1]);
        await db.close();
        process.stdout.write(String(Math.round(peak / 1024)));`;
      const run = spawnSync(
        process.execPath,
        ["--import", "tsx/esm", "--input-type=module", "-e", probe, path.join(dataDir, "postgres")],
        { encoding: "utf8" },
      );
      expect(run.stderr).toBe("");
      expect(fs.existsSync(path.join(dataDir, "postgres", "PG_VERSION"))).toBe(true);
      // Measured: about 250 MB at most with the cluster made apart, 810-880 MB when made in process.
      expect(Number(run.stdout)).toBeGreaterThan(50);
      expect(Number(run.stdout)).toBeLessThan(450);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it("refuses in one line a directory that holds files but no cluster, and keeps what it held", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-db-"));
    const pgliteDir = path.join(dataDir, "postgres");
    try {
      fs.mkdirSync(pgliteDir);
      fs.writeFileSync(path.join(pgliteDir, "notes.txt"), "mine");
      // Where initdb needs a directory: the check must say what is missing, not fail on the file.
      fs.writeFileSync(path.join(pgliteDir, "global"), "a file");
      const opening = openDatabase({ pgliteDir, databaseUrl: null });
      await expect(opening).rejects.toThrow(DatabaseError);
      await expect(opening).rejects.toThrow(
        /^the PGlite database in .+ is incomplete: missing [^\n]*global\/pg_control[^\n]*$/,
      );
      expect(fs.readFileSync(path.join(pgliteDir, "notes.txt"), "utf8")).toBe("mine");
      expect(fs.readFileSync(path.join(pgliteDir, "global"), "utf8")).toBe("a file");
      // The lock is released: a later open is not refused as busy.
      expect(fs.existsSync(`${pgliteDir}.lock`)).toBe(false);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it("runs PostgreSQL with a 16 MB page cache and PGlite's own start settings", async () => {
    // PostgreSQL's default 128 MB of shared buffers is touched at start and held by every idle process.
    const { db } = await sharedDatabase("pglite");
    const show = async (name: string) =>
      (await db.query<Record<string, string>>(`SHOW ${name}`)).rows[0]?.[name];
    expect(await show("shared_buffers")).toBe("16MB");
    expect(await show("max_worker_processes")).toBe("0");
    expect(await show("exit_on_error")).toBe("off");
  });

  it("keeps data across reopening, and lets one process at a time open it", async () => {
    // From a copy of an empty cluster: the first start itself (initdb, the directory made) is the first case
    // above, and would double this one's CPU.
    const { pgliteDir, cleanup } = await isolatedDatabaseOptions("pglite", "merchants");
    try {
      const db = await openDatabase({ pgliteDir, databaseUrl: null });
      expect(db.kind).toBe("pglite");
      expect(fs.existsSync(pgliteDir)).toBe(true);
      await db.exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
      await expect(openDatabase({ pgliteDir, databaseUrl: null })).rejects.toThrow(DatabaseBusyError);
      await expect(openDatabase({ pgliteDir, databaseUrl: null })).rejects.toThrow(/in use by process \d+/);
      await db.close();
      await db.close(); // idempotent

      // A lock left behind by a process that died is taken over.
      const dead = spawnSync(process.execPath, [
        "-e",
        "process.stdout.write(String(process.pid))",
      ]).stdout.toString();
      fs.writeFileSync(`${pgliteDir}.lock`, dead);
      const again = await openDatabase({ pgliteDir, databaseUrl: null });
      expect((await again.query<{ v: string }>("SELECT v FROM kept")).rows).toEqual([{ v: "still here" }]);
      await again.close();
      expect(fs.existsSync(`${pgliteDir}.lock`)).toBe(false);
    } finally {
      await cleanup();
    }
    // Two opens of PGlite: a minute on a loaded machine.
  }, 120_000);
});
