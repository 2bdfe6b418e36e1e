import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Database, DatabaseError, openDatabase } from "../../src/common/db/index.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";

/**
 * A PGlite directory that lost files, or whose files were damaged, must be refused at open (or its
 * failure named) with the store, the table and what to do, and never re-initialised or served empty.
 * Each case damages a directory of its own: most a copy of one made once (`withTableCopy`).
 */

// Each case opens PGlite several times (seconds each), some after a crashed child process.
const SLOW = { timeout: 120_000 };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A PGlite directory of this test's own (a copy of an empty cluster). */
async function pgliteDir(): Promise<string> {
  const options = await isolatedDatabaseOptions("pglite", "merchants");
  cleanups.push(options.cleanup);
  return options.pgliteDir;
}

const open = (dir: string) => openDatabase({ pgliteDir: dir, databaseUrl: null });

/** Opens `dir`, runs `statements` one by one (VACUUM cannot share a script), closes it cleanly. */
async function run(dir: string, ...statements: string[]): Promise<void> {
  const db = await open(dir);
  try {
    for (const sql of statements) await db.exec(sql);
  } finally {
    await db.close();
  }
}

/** `dir` after `sql` ran, with `kept` holding 1000 rows of 100 bytes (18 pages). */
async function withTable(dir: string, sql = ""): Promise<void> {
  await run(
    dir,
    `CREATE TABLE kept (id int PRIMARY KEY, v text);
     INSERT INTO kept SELECT g, repeat('x', 100) FROM generate_series(1, 1000) g; ${sql}`,
  );
}

async function relationFile(dir: string, table: string): Promise<string> {
  const db = await open(dir);
  try {
    const { rows } = await db.query<{ p: string }>("SELECT pg_relation_filepath($1::regclass) AS p", [table]);
    return rows[0]?.p as string;
  } finally {
    await db.close();
  }
}

/**
 * A directory as `withTable(dir, "CREATE TABLE other (id int)")` leaves it, closed cleanly, and the file of
 * `kept` in it: made once for the cases that damage it, which each take a copy (a copy takes a tenth of a
 * second, making it opens PGlite twice).
 */
let template: { dir: string; file: string };
let removeTemplate: () => Promise<void> = async () => undefined;
beforeAll(async () => {
  const options = await isolatedDatabaseOptions("pglite", "merchants");
  removeTemplate = options.cleanup;
  await withTable(options.pgliteDir, "CREATE TABLE other (id int)");
  template = { dir: options.pgliteDir, file: await relationFile(options.pgliteDir, "kept") };
}, SLOW.timeout);
afterAll(() => removeTemplate());

/** A copy of the template, alone in a directory of this test's own: what the next open finds. */
function withTableCopy(): { dir: string; file: string } {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-db-"));
  cleanups.push(async () => fs.rmSync(parent, { recursive: true, force: true }));
  const dir = path.join(parent, "postgres");
  fs.cpSync(template.dir, dir, { recursive: true });
  return { dir, file: template.file };
}

/**
 * Every file under `dir` with its sha256, and what lies beside it: "untouched" means equal snapshots. The
 * lock is left out: a dead process's lock is taken over by any open, refused or not.
 */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else
        files[path.relative(dir, full)] = crypto
          .createHash("sha256")
          .update(fs.readFileSync(full))
          .digest("hex");
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  files["(siblings)"] = fs
    .readdirSync(path.dirname(dir))
    .filter((name) => name.startsWith(path.basename(dir)) && name !== `${path.basename(dir)}.lock`)
    .sort()
    .join(",");
  return files;
}

/** Expects `promise` to be refused as damaged state, naming `dir`, with the advice, files untouched. */
async function expectRefused(dir: string, promise: () => Promise<unknown>, ...mentions: RegExp[]) {
  const before = snapshot(dir);
  const error = await promise().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DatabaseError);
  const { code, message } = error as DatabaseError;
  expect(code).toBe("database_damaged");
  expect(message).toContain(dir);
  expect(message).toMatch(/restore .*from a backup/i);
  for (const mention of mentions) expect(message).toMatch(mention);
  const after = snapshot(dir);
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (k) => before[k] !== after[k],
  );
  expect(changed.map((k) => [k, before[k], after[k]])).toEqual([]);
  return message;
}

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = fs.openSync(file, "r+");
  try {
    fs.writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    fs.closeSync(fd);
  }
}

// A process that dies without closing: the database as a crash or `kill -9` leaves it.
const CRASH = `
const { openDatabase } = await import(process.env.OPEN_MODULE);
const db = await openDatabase({ pgliteDir: process.env.PGLITE_DIR, databaseUrl: null });
for (const sql of JSON.parse(process.env.STATEMENTS)) await db.exec(sql);
process.kill(process.pid, "SIGKILL");
`;

async function crashAfter(dir: string, ...statements: string[]): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", CRASH], {
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      ...process.env,
      OPEN_MODULE: path.resolve("src/common/db/open.ts"),
      PGLITE_DIR: dir,
      STATEMENTS: JSON.stringify(statements),
    },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const signal = await new Promise((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
  expect(signal, stderr).toBe("SIGKILL");
}

async function count(db: Database, table: string): Promise<bigint> {
  const { rows } = await db.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`);
  return rows[0]?.n as bigint;
}

describe("a PGlite directory that is not whole", SLOW, () => {
  it("is refused when PG_VERSION is gone, instead of becoming a new empty database", async () => {
    const { dir } = withTableCopy();
    fs.rmSync(path.join(dir, "PG_VERSION"));
    await expectRefused(dir, () => open(dir), /PG_VERSION/, /move it away/);
  });

  it("is refused when it holds files but no database", async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "x402m-db-")), "postgres");
    cleanups.push(async () => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "notes.txt"), "mine");
    await expectRefused(dir, () => open(dir), /PG_VERSION/);
  });

  it("is refused, with what is missing, when its WAL or control file is gone", async () => {
    const { dir } = withTableCopy();
    const wal = fs.readdirSync(path.join(dir, "pg_wal")).find((f) => /^[0-9A-F]{24}$/.test(f)) as string;
    fs.rmSync(path.join(dir, "pg_wal", wal));
    fs.rmSync(path.join(dir, "global", "pg_control"));
    await expectRefused(dir, () => open(dir), /pg_wal/, /global\/pg_control/);
  });

  it("is a first start when empty: a new database, and no scratch left beside it", async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-db-"));
    cleanups.push(async () => fs.rmSync(parent, { recursive: true, force: true }));
    const dir = path.join(parent, "postgres");
    fs.mkdirSync(dir);
    await withTable(dir);
    const db = await open(dir);
    expect(await count(db, "kept")).toBe(1000n);
    await db.close();
    expect(fs.readdirSync(parent).sort()).toEqual(["postgres"]);
  });
});

describe("a PGlite table whose file lost data", SLOW, () => {
  it("is refused when its file was emptied while the database was closed", async () => {
    const { dir, file } = withTableCopy();
    fs.truncateSync(path.join(dir, file), 0);
    await expectRefused(dir, () => open(dir), /\bkept\b/, new RegExp(file), /0 bytes/);
  });

  it("is refused when its file lost its last pages", async () => {
    const { dir, file } = withTableCopy();
    fs.truncateSync(path.join(dir, file), 3 * 8192);
    await expectRefused(dir, () => open(dir), /\bkept\b/, new RegExp(file));
  });

  it("is refused when the run before crashed, if the crash recovery cannot bring the pages back", async () => {
    // `kept`'s file is still the template's: an insert into another table moves no table to a new file (and
    // opening the crashed directory to read it would recover it and close it cleanly).
    const { dir, file } = withTableCopy();
    await crashAfter(dir, "INSERT INTO other VALUES (1)");
    fs.truncateSync(path.join(dir, file), 0);
    await expectRefused(dir, () => open(dir), /\bkept\b/, new RegExp(file));
  });

  it("is not refused after ordinary use: deletes, TRUNCATE, VACUUM, DROP, rewrites, then reopening", async () => {
    const dir = await pgliteDir();
    await withTable(
      dir,
      `CREATE TABLE emptied AS SELECT * FROM kept; CREATE TABLE truncated AS SELECT * FROM kept;
       CREATE TABLE dropped AS SELECT * FROM kept; CREATE TABLE rewritten AS SELECT * FROM kept;`,
    );
    await run(
      dir,
      "DELETE FROM kept WHERE id > 500",
      "DELETE FROM emptied",
      "VACUUM emptied",
      "VACUUM kept",
      "TRUNCATE truncated; INSERT INTO truncated VALUES (1, 'a')",
      "DROP TABLE dropped",
      "ALTER TABLE rewritten ALTER COLUMN id TYPE bigint",
    );
    const db = await open(dir);
    try {
      expect(await count(db, "kept")).toBe(500n);
      expect(await count(db, "emptied")).toBe(0n);
      expect(await count(db, "truncated")).toBe(1n);
      expect(await count(db, "rewritten")).toBe(1000n);
    } finally {
      await db.close();
    }
  });

  it("is not refused after a crash, whatever the crashed run did to its tables", async () => {
    const dir = await pgliteDir();
    // A function rewrites a table without the statement saying so: the record of the files may then
    // be behind the files, and the open must find out that this is no loss.
    await withTable(
      dir,
      `CREATE TABLE emptied AS SELECT * FROM kept; CREATE TABLE hidden AS SELECT * FROM kept;
       CREATE FUNCTION empty_hidden() RETURNS void LANGUAGE sql AS 'TRUNCATE hidden';`,
    );
    await crashAfter(
      dir,
      "INSERT INTO kept VALUES (1001, 'y')",
      "CREATE TABLE fresh AS SELECT * FROM kept",
      "DELETE FROM emptied",
      "VACUUM emptied",
      "SELECT empty_hidden()",
      "INSERT INTO hidden VALUES (1, 'z')",
    );
    const db = await open(dir);
    try {
      expect(await count(db, "kept")).toBe(1001n);
      expect(await count(db, "fresh")).toBe(1001n);
      expect(await count(db, "emptied")).toBe(0n);
      expect(await count(db, "hidden")).toBe(1n);
    } finally {
      await db.close();
    }
    expect(fs.readdirSync(path.dirname(dir)).filter((f) => f.startsWith("postgres."))).toEqual([]);
  });
});

describe("a PGlite failure", SLOW, () => {
  it("names the store, the table and what to do when a page is damaged", async () => {
    const { dir, file } = withTableCopy();
    overwrite(path.join(dir, file), 3 * 8192, Buffer.alloc(8192, 0xab));
    const db = await open(dir);
    try {
      const message = await expectRefused(dir, () => db.query("SELECT count(*) FROM kept"), /\bkept\b/);
      expect(message).toContain(`invalid page in block 3 of relation "${file}"`);
      // The database still answers what does not touch the damage.
      expect((await db.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });

  it("names the store and what to do when PGlite aborts on a damaged WAL", async () => {
    const { dir } = withTableCopy();
    const wal = fs.readdirSync(path.join(dir, "pg_wal")).find((f) => /^[0-9A-F]{24}$/.test(f)) as string;
    overwrite(path.join(dir, "pg_wal", wal), 0, Buffer.alloc(4 * 8192, 0xab));
    await expectRefused(dir, () => open(dir), /Aborted/);
  });
});
