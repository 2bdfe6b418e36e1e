import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { AnalyticsBusyError, AnalyticsDamagedError, lockHolder } from "../../src/analytics/store-errors.ts";
import type { AppError } from "../../src/common/errors.ts";
import { holdAnalytics } from "../helpers/hold.ts";

let dir: string;
let analytics: Analytics;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-"));
  analytics = await Analytics.open({ dataDir: dir });
});
afterAll(() => {
  analytics.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("Analytics.allPrepared", () => {
  it("answers as all does, with each call's parameters, and sees writes and a table made again", async () => {
    await analytics.run("CREATE TABLE kept (k VARCHAR, v BIGINT)");
    await analytics.run("INSERT INTO kept VALUES ('a', 1), ('b', 2)");
    const sql = "SELECT v FROM kept WHERE k = $k ORDER BY v";
    expect(await analytics.allPrepared(sql, { k: "a" })).toEqual(await analytics.all(sql, { k: "a" }));
    expect(await analytics.allPrepared(sql, { k: "b" })).toEqual([{ v: 2n }]);
    await analytics.run("INSERT INTO kept VALUES ('b', 3)");
    expect(await analytics.allPrepared(sql, { k: "b" })).toEqual([{ v: 2n }, { v: 3n }]);
    // Dropped and made again with other columns: the kept statement is planned again by DuckDB.
    await analytics.run("DROP TABLE kept");
    await analytics.run("CREATE TABLE kept (extra INTEGER, v VARCHAR, k VARCHAR)");
    await analytics.run("INSERT INTO kept VALUES (0, 'text', 'b')");
    expect(await analytics.allPrepared(sql, { k: "b" })).toEqual([{ v: "text" }]);
    await analytics.run("DROP TABLE kept");
    await expect(analytics.allPrepared(sql, { k: "b" })).rejects.toThrow(/kept/);
  });
});

describe("Analytics.all", () => {
  it("gives the same row objects as the driver, whatever the columns' names and types", async () => {
    const sql = `SELECT 1 AS a, 'x' AS "quote""d", 2::BIGINT AS "back\\slash", NULL AS nothing,
        [1, 2] AS "ünï cödé", {'k': 3} AS "line
break", TIMESTAMP '2026-11-21 10:00:00' AS t, 1.5::DECIMAL(10, 2) AS d, 7 AS a
      FROM range(3)`;
    const rows = await analytics.all(sql);
    expect(rows).toEqual((await analytics.connection.runAndReadAll(sql)).getRowObjectsJS());
    expect(rows).toHaveLength(3);
    // A repeated name gets the driver's de-duplicated name.
    expect(rows[0]).toMatchObject({ a: 1, "a:1": 7, "back\\slash": 2n });
  });

  it("keeps a column named __proto__ as an own property (the driver's objects lose it)", async () => {
    const [row] = await analytics.all(`SELECT 5 AS "__proto__", 6 AS b`);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.hasOwn(row as object, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(row, "__proto__")?.value).toBe(5);
    expect(row?.b).toBe(6);
  });

  it("reads an empty result as no rows", async () => {
    expect(await analytics.all("SELECT 1 AS a WHERE false")).toEqual([]);
  });
});

describe("Analytics.transaction", () => {
  it("throws the reason a COMMIT failed, not ROLLBACK's complaint that nothing is left to undo", async () => {
    await analytics.run("CREATE TABLE tx_keys (k INTEGER PRIMARY KEY)");
    const other = await analytics.fork();
    try {
      await other.run("BEGIN TRANSACTION");
      await other.run("INSERT INTO tx_keys VALUES (1)");
      const failed = analytics
        .transaction(async () => {
          await analytics.run("INSERT INTO tx_keys VALUES (1)");
          await other.run("COMMIT");
        })
        .then(
          () => undefined,
          (error: Error) => error,
        );
      const error = await failed;
      expect(error).toBeInstanceOf(Error);
      expect(error?.message).not.toMatch(/no transaction is active/);
      expect(error?.message).toMatch(/constraint|duplicate|conflict/i);
      // And the connection is usable: no transaction was left open.
      expect(await analytics.all("SELECT count(*)::INTEGER AS n FROM tx_keys")).toEqual([{ n: 1 }]);
    } finally {
      other.close();
    }
  });
});

describe("Analytics.storeTurn", () => {
  it("lets two connections' writers add the same key at once, where DuckDB refuses one of them without turns", async () => {
    await analytics.run("CREATE TABLE turn_keys (k VARCHAR PRIMARY KEY)");
    const [a, b] = [await analytics.fork(), await analytics.fork()];
    // Each writer's transaction adds the key, then (apart) waits for the other's to have tried too: both open at once.
    const add = (db: Analytics, key: string, tried?: () => Promise<void>) =>
      db.transaction(async () => {
        try {
          await db.run("INSERT OR IGNORE INTO turn_keys VALUES ($key)", { key });
        } finally {
          await tried?.();
        }
      });
    let arrived = 0;
    let release = () => {};
    const both = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tried = () => {
      if (++arrived === 2) release();
      return both;
    };
    try {
      const apart = await Promise.allSettled([add(a, "m1", tried), add(b, "m1", tried)]);
      expect(apart.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      const turns = await Promise.allSettled([
        a.storeTurn(() => add(a, "m2")),
        b.storeTurn(() => add(b, "m2")),
        analytics.storeTurn(() => add(analytics, "m2")),
      ]);
      expect(turns.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
      expect(await analytics.all("SELECT k FROM turn_keys ORDER BY k")).toEqual([{ k: "m1" }, { k: "m2" }]);
    } finally {
      a.close();
      b.close();
    }
  });
});

describe("calls at once on one connection", () => {
  it("each answer its own parameters and none fails, kept statements, appends and writes among them", async () => {
    // DuckDB fails one of two calls at once on a connection ("Attempting to execute an unsuccessful or closed
    // pending query result"), and a kept statement is one object whose parameters each caller binds: the
    // connection takes calls one at a time, whoever makes them.
    await analytics.run("CREATE TABLE busy AS SELECT range AS x FROM range(5000)");
    await analytics.run("CREATE TEMP TABLE busy_rows (x BIGINT)");
    // How many calls the driver runs at once on the connection, whatever the race's luck: queries (`all`
    // runs through `run`), statements prepared and run, an appender from its making to its closing.
    let running = 0;
    let most = 0;
    const start = () => {
      most = Math.max(most, ++running);
    };
    const counted =
      <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        start();
        try {
          return await call(...args);
        } finally {
          running--;
        }
      };
    const connection = analytics.connection;
    const { run, prepare, createAppender } = connection;
    connection.run = counted(run.bind(connection));
    connection.prepare = counted(async (sql: string) => {
      const statement = await prepare.call(connection, sql);
      statement.run = counted(statement.run.bind(statement));
      return statement;
    });
    connection.createAppender = async (...args) => {
      start();
      const appender = await createAppender.apply(connection, args);
      const close = appender.closeSync.bind(appender);
      appender.closeSync = () => {
        running--;
        close();
      };
      return appender;
    };
    const calls: Promise<unknown>[] = [];
    const wrong: string[] = [];
    for (let i = 0; i < 800; i++) {
      if (i % 4 === 0) {
        calls.push(analytics.append("busy_rows", [1n, 2n, 3n], (appender, x) => appender.appendBigInt(x)));
      } else if (i % 4 === 1) {
        calls.push(
          analytics
            .allPrepared<{ n: bigint }>("SELECT count(*) AS n FROM busy WHERE x < $i", { i })
            .then(([row]) => {
              if (row?.n !== BigInt(i)) wrong.push(`${i}: ${row?.n}`);
            }),
        );
      } else if (i % 4 === 2) {
        calls.push(analytics.run("INSERT INTO busy_rows SELECT x FROM busy WHERE x < $i", { i }));
      } else {
        calls.push(analytics.all("SELECT count(*) AS n FROM busy_rows"));
      }
    }
    const failed = (await Promise.allSettled(calls)).filter((c) => c.status === "rejected");
    Object.assign(connection, { run, prepare, createAppender });
    expect(failed.map((c) => String((c as PromiseRejectedResult).reason))).toEqual([]);
    expect(wrong).toEqual([]);
    expect(most).toBe(1);
    await analytics.run("DROP TABLE busy");
  });

  it("keeps a turn's transaction whole: another caller's write waits for it, and is not undone with it", async () => {
    await analytics.run("CREATE TABLE turns (who VARCHAR)");
    let release = () => {};
    const paused = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = analytics.exclusive(() =>
      analytics.transaction(async () => {
        await analytics.run("INSERT INTO turns VALUES ('first')");
        await paused;
        throw new Error("the first turn fails");
      }),
    );
    const second = analytics.exclusive(() => analytics.run("INSERT INTO turns VALUES ('second')"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await expect(first).rejects.toThrow("the first turn fails");
    await second;
    expect(await analytics.all("SELECT who FROM turns")).toEqual([{ who: "second" }]);
    await analytics.run("DROP TABLE turns");
  });
});

describe("Analytics.stop", () => {
  it("interrupts what runs on the file's connections, waits for it, and refuses what comes after", async () => {
    const own = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-stop-"));
    const db = await Analytics.open({ dataDir: own });
    try {
      const fork = await db.fork();
      // Queries of hours, one in a transaction (its ROLLBACK comes after the interrupt): closing the database
      // alone would leave them running, and the process could not exit until they ended.
      const endless = "SELECT count(*) FROM range(1000000000000000) t(i) WHERE i % 7 = 3";
      const reading = db.all(endless).then(
        () => "finished",
        (error: Error) => error.message,
      );
      const building = fork
        .transaction(() => fork.run(`CREATE TEMP TABLE t AS ${endless}`))
        .then(
          () => "finished",
          (error: Error) => error.message,
        );
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Queued behind the endless read: refused, not run once the read is interrupted.
      const queued = db.all("SELECT 1").then(
        () => "ran",
        (error: AppError) => error.code,
      );
      await db.stop();
      expect(await queued).toBe("analytics_closing");
      expect(await reading).toMatch(/Interrupted/);
      expect(await building).toMatch(/Interrupted/);
      await expect(db.all("SELECT 1")).rejects.toMatchObject({ code: "analytics_closing", status: 503 });
      await expect(db.fork()).rejects.toMatchObject({ code: "analytics_closing" });
    } finally {
      db.close();
      fs.rmSync(own, { recursive: true, force: true });
    }
  });
});

describe("migrations", () => {
  it("fills the host of listings stored before migration 5", async () => {
    const old = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-"));
    try {
      let s = await Analytics.open({ dataDir: old });
      await s.run(`INSERT INTO listings (pay_to, resource, method, price_usd, description) VALUES
        ('0x01', 'https://user@API.Example.com:8443/v1?q=1', 'GET', 0.01, 'd'),
        ('0x01', 'not a url', '', 0.02, 'd')`);
      // Back to the schema before migration 5, rows kept (DuckDB alters no table an index depends on, so
      // migration 10's index goes first, and 10 runs again after 5).
      await s.run("DROP INDEX listings_pay_to");
      await s.run("ALTER TABLE listings DROP COLUMN host");
      await s.run("DELETE FROM schema_migrations WHERE version IN (5, 10)");
      s.close();
      s = await Analytics.open({ dataDir: old });
      expect(await s.all("SELECT resource, host FROM listings ORDER BY price_usd")).toEqual([
        { resource: "https://user@API.Example.com:8443/v1?q=1", host: "api.example.com" },
        { resource: "not a url", host: "" },
      ]);
      s.close();
    } finally {
      fs.rmSync(old, { recursive: true, force: true });
    }
  });
});

describe("a database held by another process", () => {
  it("is busy, naming the process that holds it", async () => {
    const held = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-"));
    const holder = await holdAnalytics(held);
    const error = await Analytics.open({ dataDir: held }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnalyticsBusyError);
    expect((error as AnalyticsBusyError).holder.pid).toBe(holder.pid);
    expect((error as Error).message).toContain(`in use by another process (PID ${holder.pid}, `);
    await holder.release();
    (await Analytics.open({ dataDir: held })).close();
  });

  it("stays busy while another process holds it through Analytics.open, whose check reads the file", async () => {
    // POSIX lets go of all of a process's locks on a file when it closes any descriptor of it: the open
    // check's own read of the file must not release DuckDB's lock.
    const held = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-"));
    (await Analytics.open({ dataDir: held })).close();
    const script = `
      const { Analytics } = await import(${JSON.stringify(path.resolve("src/analytics/duckdb.ts"))});
      await Analytics.open({ dataDir: process.env.HELD });
      process.stdout.write("held\\n");
      setInterval(() => undefined, 1 << 30);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, HELD: held },
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout?.once("data", () => resolve());
        child.once("exit", (code) => reject(new Error(`the holder exited with ${code}`)));
      });
      const error = await Analytics.open({ dataDir: held }).then(
        (opened) => {
          opened.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AnalyticsBusyError);
      expect((error as AnalyticsBusyError).holder.pid).toBe(child.pid);
    } finally {
      child.kill("SIGKILL");
    }
  }, 60_000);

  it("is told from other failures by DuckDB's whole lock-conflict message, not the word lock", () => {
    expect(
      lockHolder(
        'IO Error: Could not set lock on file "/d/analytics.duckdb": Conflicting lock is held in /usr/bin/node (PID 8020). See also https://duckdb.org/docs/stable/connect/concurrency',
      ),
    ).toEqual({ pid: 8020, program: "/usr/bin/node" });
    // Each of these says "lock" somewhere; none is another process holding the file.
    for (const message of [
      "IO Error: Corrupt database file: computed checksum 1 does not match stored checksum 2 in block at location 4096",
      'IO Error: Could not set lock on file "/ro/analytics.duckdb": Permission denied',
      "Catalog Error: Table with name blocks does not exist!",
    ]) {
      expect(lockHolder(message)).toBeUndefined();
    }
  });

  it("does not call a corrupt block busy", async () => {
    const corrupt = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-"));
    (await Analytics.open({ dataDir: corrupt })).close();
    // The first block after DuckDB's three header blocks: what the catalog is read from on open.
    const fd = fs.openSync(path.join(corrupt, "analytics.duckdb"), "r+");
    fs.writeSync(fd, Buffer.alloc(4096, 9), 0, 4096, 3 * 4096);
    fs.closeSync(fd);
    const error = await Analytics.open({ dataDir: corrupt }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnalyticsDamagedError);
    expect((error as Error).message).toMatch(/is damaged: the block at byte 12288 fails its checksum/);
  });
});
