/**
 * `x402-merchants check`: reads the whole store, changes nothing, says what it found and what to do; exit 0
 * when whole, 1 when not, 2 for a usage mistake. Run in this process (runMain): it ends on its own, and a
 * child process each would cost a CPU-second more.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it, onTestFinished } from "vitest";
import { MIGRATIONS } from "../../src/analytics/migrations.ts";
import { writeServiceRecord } from "../../src/config/service-record.ts";
import {
  blockByte,
  blocksOnlyOf,
  damageBlock,
  fingerprint,
  makeStore,
  type Store,
} from "../analytics/damage.ts";
import { holdAnalytics } from "../helpers/hold.ts";
import { runMain } from "../helpers/in-process.ts";

interface Line {
  ok: boolean;
  subject: string;
  text: string;
}

async function check(store: Store, ...flags: string[]) {
  const result = await runMain(["check", "--json", "--data", store.dataDir, ...flags]);
  const report = result.stdout ? (JSON.parse(result.stdout) as { whole: boolean; lines: Line[] }) : undefined;
  const failed = report?.lines.filter((l) => !l.ok) ?? [];
  return { ...result, report, failed };
}

/** Runs SQL on the store with the bare driver (the store closed): data no writer of the project would store. */
async function tamper(store: Store, ...statements: string[]): Promise<void> {
  const instance = await DuckDBInstance.create(store.file);
  const connection = await instance.connect();
  for (const sql of statements) await connection.run(sql);
  connection.closeSync();
  instance.closeSync();
}

describe("x402-merchants check", () => {
  it("finds a whole store whole, and changes nothing", async () => {
    const store = await makeStore();
    const before = fingerprint(store);
    const { code, report, failed, stderr } = await check(store);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(failed).toEqual([]);
    expect(report?.lines.map((l) => l.subject)).toEqual(
      expect.arrayContaining(["file", "write-ahead log", "tables", "schema", "payments keys", "block times"]),
    );
    expect(report?.lines.find((l) => l.subject === "tables")?.text).toMatch(
      /^(\d+) of \1 read whole .*payments 20,000/,
    );
    expect(fingerprint(store)).toEqual(before);

    const text = await runMain(["check", "--data", store.dataDir]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^x402-merchants check: .*analytics\.duckdb\n {2}ok {4}file /);
    expect(text.stdout.trimEnd().split("\n").at(-1)).toBe("whole: nothing to do.");
  }, 60_000);

  it("names a damaged block and the tables it stops, says what to do, and changes nothing", async () => {
    const store = await makeStore();
    const [block] = await blocksOnlyOf(store, "payments");
    damageBlock(store, block as number);
    const before = fingerprint(store);
    const { code, failed } = await check(store);
    expect(code).toBe(1);
    expect(failed).toEqual([
      {
        ok: false,
        subject: "file",
        text: `block ${block} (byte ${blockByte(block as number)}) fails its checksum`,
        problem: "damage",
      },
      {
        ok: false,
        subject: "payments",
        text: `cannot be read: the block at byte ${blockByte(block as number)} fails its checksum`,
        problem: "damage",
      },
      expect.objectContaining({ subject: "tables", text: expect.stringMatching(/^\d+ of \d+ read whole/) }),
    ]);
    // Every table but the damaged one.
    const [, whole, all] = /^(\d+) of (\d+)/.exec(failed.at(-1)?.text ?? "") ?? [];
    expect(Number(whole)).toBe(Number(all) - 1);
    expect(fingerprint(store)).toEqual(before);

    const text = await runMain(["check", "--data", store.dataDir]);
    expect(text.code).toBe(1);
    expect(text.stdout.trimEnd().split("\n").at(-1)).toMatch(
      /^damaged: 3 problems\. Nothing was changed\. Restore the store from a backup .*, or index or import again into a new data directory/,
    );
  }, 60_000);

  it("reports what DuckDB cannot open, with what the file shows", async () => {
    const store = await makeStore(10);
    // Block 0 of a small store holds its catalog, which DuckDB reads on open.
    damageBlock(store, 0);
    const { code, failed } = await check(store);
    expect(code).toBe(1);
    expect(failed.map((l) => l.subject)).toEqual(["file", "open"]);
    expect(failed[1]?.text).toBe("DuckDB cannot open it: the block at byte 12288 fails its checksum");
  });

  it("names each invariant the data breaks", async () => {
    const store = await makeStore(100);
    await tamper(
      store,
      // A payment stored twice, a negative amount, a block with two times.
      "INSERT INTO payments SELECT * FROM payments LIMIT 1",
      "UPDATE payments SET amount = -5 WHERE tx_hash = (SELECT max(tx_hash) FROM payments)",
      `INSERT INTO transfers SELECT chain, '0x' || repeat('e', 64), 9, block_number, block_time + INTERVAL 1 SECOND,
         from_address, to_address, amount FROM transfers LIMIT 1`,
      // A checkpoint earlier than the one below it, an indexer standing on no checkpoint.
      "INSERT INTO checkpoints VALUES ('base', 50000000, TIMESTAMP '2000-01-01')",
      "INSERT INTO indexer_state VALUES ('base', 1, 2, '0xab', TIMESTAMP '2026-01-01', now()::TIMESTAMP)",
      // A cached report without its window, and the data version gone.
      `INSERT INTO reports SELECT 'base', 1, '0x01', 'n', false, false, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}', [], '{}', 1, '{}'`,
      "DELETE FROM meta WHERE key = 'data_version'",
    );
    const { code, failed } = await check(store);
    expect(code).toBe(1);
    expect(Object.fromEntries(failed.map((l) => [l.subject, l.text]))).toEqual({
      "data version": expect.stringMatching(/^meta\.data_version is missing/),
      "payments keys": expect.stringMatching(
        /^1 keys \(chain, tx_hash, log_index\) stored more than once, e\.g\. 0x/,
      ),
      "payments values": expect.stringMatching(/^1 rows with a negative amount/),
      "block times": expect.stringMatching(/^1 blocks stated with more than one time, e\.g\. block \d+/),
      checkpoints: "1 checkpoints earlier in time than the checkpoint below them, e.g. block 50000000",
      "indexer state": expect.stringMatching(/^1 chains whose indexer state is not a checkpoint/),
      "cached reports": "1 broken, e.g. report of 0x01 in window 1 without its window",
    });
    const text = await runMain(["check", "--data", store.dataDir]);
    expect(text.stdout.trimEnd().split("\n").at(-1)).toMatch(/^not whole: 7 problems in the data it holds/);
  }, 60_000);

  it("names a window whose leaderboard places leave a gap, which would hide a merchant from its pages", async () => {
    const store = await makeStore(10);
    const report = (address: string, place: number) =>
      `INSERT INTO reports SELECT 'base', 1, '${address}', 'n', false, false, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}', '[]', '{}', ${place}, '{}'`;
    await tamper(
      store,
      "INSERT INTO report_windows VALUES ('base', 1, 0, 'https://r.test', '2026-01-01T00:00:00Z', '1.4.0')",
      report("0x01", 1),
      report("0x02", 3),
    );
    const { code, failed } = await check(store);
    expect(code).toBe(1);
    expect(failed.map((l) => [l.subject, l.text])).toEqual([
      ["cached reports", "1 broken, e.g. window 1 whose leaderboard places are not 1 to 2"],
    ]);
  }, 60_000);

  it("names a flag feed that disagrees with its reports, or outlives them", async () => {
    const store = await makeStore(10);
    const flagged = (wallet: string, payTo: string, tx: number, cents: number) =>
      `INSERT INTO report_flags VALUES ('base', 1, '${wallet}', '${payTo}', 'tiny_repeat', ${tx}, ${cents * 10_000}, ${cents}, NULL, 5, 9, NULL)`;
    await tamper(
      store,
      "INSERT INTO report_windows VALUES ('base', 1, 0, 'https://r.test', '2026-01-01T00:00:00Z', '1.4.0')",
      `INSERT INTO reports SELECT 'base', 1, '0x01', 'n', false, false, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
         '{"tiny_repeat": {"tx": 3, "usd": 0.07}}', '[]', '{}', 1, '{}'`,
      flagged("0xa1", "0x01", 2, 4),
      flagged("0xa2", "0x01", 1, 3),
    );
    // As built: the rows add up to the report's flag.
    expect((await check(store)).failed).toEqual([]);
    await tamper(
      store,
      "UPDATE report_flags SET cents = 2 WHERE wallet = '0xa2'",
      flagged("0xa3", "0x09", 1, 1),
    );
    const { code, failed } = await check(store);
    expect(code).toBe(1);
    expect(failed.map((l) => [l.subject, l.text])).toEqual([
      [
        "flag feed",
        expect.stringMatching(
          /^3 broken, e\.g\. (flagged 0xa3 at 0x09 in window 1 without its report|tiny_repeat at 0x0[19] in window 1: .* in the report)$/,
        ),
      ],
    ]);
  }, 60_000);

  it("takes a schema behind this program's for whole: the next command migrates it", async () => {
    const store = await makeStore(10);
    const latest = MIGRATIONS.at(-1)?.version as number;
    await tamper(store, `DELETE FROM schema_migrations WHERE version = ${latest}`);
    const { code, report } = await check(store);
    expect(code).toBe(0);
    expect(report?.lines.find((l) => l.subject === "schema")?.text).toBe(
      `version ${latest - 1}; the next command that opens it migrates it to ${latest}`,
    );
  });

  it("tells a schema newer than this program's from damage", async () => {
    const store = await makeStore(10);
    await tamper(store, "INSERT INTO schema_migrations VALUES (99, 'from the future', now()::TIMESTAMP)");
    const result = await runMain(["check", "--data", store.dataDir]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAIL  schema");
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe(
      "not this program's: 1 problem. Nothing was changed. Open it with the x402-merchants that wrote it, or give this one another data directory (--data DIR).",
    );
  });

  it("says who holds the store and what to do, without waiting for a report service", async () => {
    const store = await makeStore(10);
    const holder = await holdAnalytics(store.dataDir);
    const busy = await runMain(["check", "--data", store.dataDir, "--wait", "0.2"]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(
      new RegExp(
        `is held by PID ${holder.pid} \\(.*\\), still after 0\\.2 s: check reads the file itself, .*; let that command finish or stop it, then run check again`,
      ),
    );

    writeServiceRecord(store.dataDir, {
      pid: holder.pid,
      url: "http://127.0.0.1:9",
      public_url: "http://127.0.0.1:9",
      started_at: new Date().toISOString(),
    });
    const started = Date.now();
    const served = await runMain(["check", "--data", store.dataDir]);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(served.code).toBe(1);
    expect(served.stderr).toContain(
      `is held by the report service at http://127.0.0.1:9 (PID ${holder.pid}): check reads the file itself, which DuckDB allows only while no other process has it open; stop that service (Ctrl-C, or kill ${holder.pid}), run check, then start it again`,
    );
  }, 60_000);

  it("fails without a store, and creates none", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-check-"));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const result = await runMain(["check", "--data", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `x402-merchants: there is no analytics store at ${path.join(dir, "analytics.duckdb")}\n`,
    );
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("takes no arguments", async () => {
    const result = await runMain(["check", "extra"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("x402-merchants: check takes no arguments\n");
  });
});
