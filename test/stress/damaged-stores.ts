/**
 * A data directory damaged as disks and crashes damage them (a store truncated, bytes overwritten, a file
 * of PostgreSQL's missing or emptied), then used as a user would: every command must refuse in one line
 * naming the damaged store and what to do, exit non-zero, and leave every file as it found it.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { dataLayout } from "../../src/config/layout.ts";
import { addr, checkpoint, payment } from "../helpers/data.ts";
import { tempDir } from "../helpers/indexer.ts";
import { listenSupportedOnly } from "../helpers/merchant.ts";
import { newMerchant } from "../helpers/x402.ts";
import { runCli, startCli } from "./child.ts";
import type { Scenario } from "./scenario.ts";

/**
 * Every file under `dir` with its SHA-256: equal maps mean nothing was touched. In a PGlite cluster only the
 * files of the project's tables and indexes count (relation file nodes from 16384 up): PostgreSQL itself
 * writes `pg_control`, the WAL and its catalogs' hint bits whenever it starts and stops, refused or not.
 */
function digest(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const postgres = (file: string) => {
    const cluster = [dataLayout(dir).pglite.merchants, dataLayout(dir).pglite.facilitator].find((c) =>
      file.startsWith(`${c}${path.sep}`),
    );
    if (!cluster) return false;
    const name = path.basename(file);
    return !(
      path.relative(cluster, file).startsWith(`base${path.sep}`) &&
      /^\d+$/.test(name) &&
      Number(name) >= 16_384
    );
  };
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (postgres(file)) continue;
    out.set(
      path.relative(dir, file),
      crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex"),
    );
  }
  return out;
}

const same = (a: Map<string, string>, b: Map<string, string>) =>
  a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

/** Overwrites `length` bytes at `at` of `file` with a fixed pattern. */
function scribble(file: string, at: number, length: number): void {
  const fd = fs.openSync(file, "r+");
  try {
    fs.writeSync(fd, Buffer.alloc(length, 0xa5), 0, length, at);
  } finally {
    fs.closeSync(fd);
  }
}

/** DuckDB's file: three 4 KiB headers, then blocks of 256 KiB. */
const DUCKDB_HEADERS = 3 * 4096;
const DUCKDB_BLOCK = 256 * 1024;

/** 64 bytes overwritten inside every block of a DuckDB file, so whatever the tables use is hit. */
function scribbleEveryBlock(file: string): void {
  for (let at = DUCKDB_HEADERS + 1024; at < fs.statSync(file).size; at += DUCKDB_BLOCK)
    scribble(file, at, 64);
}

/**
 * The largest file of a user relation (file node 16384 and above; below are PostgreSQL's own catalogs)
 * under the cluster's base/: a table or index of the project's.
 */
function largestRelation(pgdata: string): string {
  const base = path.join(pgdata, "base");
  const files = fs
    .readdirSync(base, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /^\d+$/.test(e.name) && Number(e.name) >= 16_384)
    .map((e) => path.join(e.parentPath, e.name));
  return files.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0] as string;
}

interface Case {
  name: string;
  store: "analytics" | "merchant state";
  damage(data: string): void;
}

const CASES: readonly Case[] = [
  {
    name: "analytics store truncated to half",
    store: "analytics",
    damage: (d) =>
      fs.truncateSync(
        dataLayout(d).analytics.file,
        Math.floor(fs.statSync(dataLayout(d).analytics.file).size / 2),
      ),
  },
  {
    name: "analytics store overwritten in every block",
    store: "analytics",
    damage: (d) => scribbleEveryBlock(dataLayout(d).analytics.file),
  },
  {
    name: "analytics store emptied",
    store: "analytics",
    damage: (d) => fs.truncateSync(dataLayout(d).analytics.file, 0),
  },
  {
    name: "merchant state without PG_VERSION",
    store: "merchant state",
    damage: (d) => fs.rmSync(path.join(dataLayout(d).pglite.merchants, "PG_VERSION")),
  },
  {
    name: "merchant state's largest table emptied",
    store: "merchant state",
    damage: (d) => fs.truncateSync(largestRelation(dataLayout(d).pglite.merchants), 0),
  },
  {
    name: "merchant state's largest table overwritten",
    store: "merchant state",
    damage: (d) => scribble(largestRelation(dataLayout(d).pglite.merchants), 0, 8192),
  },
  {
    name: "merchant state's global catalog missing",
    store: "merchant state",
    damage: (d) => fs.rmSync(path.join(dataLayout(d).pglite.merchants, "global"), { recursive: true }),
  },
];

export const damagedStores: Scenario = {
  name: "damaged-stores",
  about:
    "a data directory whose analytics store or merchant state (PGlite) was truncated, overwritten or lost a file, then used by report, import and serve. Goals: every command refuses in one line naming the store, exits non-zero, and changes no file.",
  async run({ say }) {
    const facilitator = await listenSupportedOnly();
    const dir = tempDir("x402m-stress-damage-");
    const pristine = path.join(dir, "pristine");
    const merchant = addr("m1");
    const env = {
      X402M_FACILITATOR_URL: facilitator.url,
      X402M_UTILITY_PAY_TO: newMerchant(),
      X402M_UTILITY_PORT: "0",
    };
    const failures: string[] = [];
    let refusals = 0;
    try {
      // A store with a week in it, and merchant state made by a first serve.
      const week = path.join(dir, "week.ndjson");
      const records = Array.from({ length: 2_000 }, (_, i) =>
        payment({ payer: addr(`p${i % 50}`), payTo: merchant, amount: 1_000 + i }),
      );
      fs.writeFileSync(week, `${[...records, checkpoint()].map((r) => JSON.stringify(r)).join("\n")}\n`);
      const made = await runCli(["import", week, "--data", pristine]);
      if (made.code !== 0) throw new Error(`import failed: ${made.stderr}`);
      const first = startCli(["serve", "--only", "reports,utility", "--data", pristine], {
        ...env,
        PORT: "0",
      });
      await first.ready(90_000);
      first.child.kill("SIGTERM");
      if ((await first.exit).code !== 0) throw new Error(`the first serve failed: ${first.stderr()}`);

      for (const c of CASES) {
        const data = path.join(dir, "case");
        fs.rmSync(data, { recursive: true, force: true });
        fs.cpSync(pristine, data, { recursive: true });
        c.damage(data);
        const before = digest(data);
        const commands: [string, string[]][] =
          c.store === "analytics"
            ? [
                ["report", ["report", merchant, "--data", data, "--wait", "0"]],
                ["import", ["import", week, "--data", data]],
                ["check", ["check", "--data", data]],
              ]
            : [["serve", ["serve", "--only", "utility", "--data", data]]];
        for (const [label, args] of commands) {
          if (label === "check") {
            // check reads and reports on stdout, exit 1 when the store is not whole: it is not a refusal.
            const run = await runCli(args, env);
            const problems: string[] = [];
            if (run.code !== 1) problems.push(`exit ${run.code}`);
            if (!/analytics/i.test(run.stdout))
              problems.push(`does not name the analytics: ${run.stdout.slice(0, 300)}`);
            if (!same(before, digest(data))) problems.push("files changed");
            if (problems.length === 0) refusals++;
            else failures.push(`${c.name}, ${label}: ${problems.join("; ")}`);
            say(
              `${c.name}, ${label}: ${problems.length === 0 ? `found: ${run.stdout.trim().split("\n").at(-1)?.slice(0, 160)}` : problems.join("; ")}`,
            );
            continue;
          }
          const cli = startCli(args, env);
          // A command that serves prints its ready line: serving on damage is a miss, not something to wait out.
          const ended = await Promise.race([
            cli.exit,
            cli.ready(60_000).then(
              () => "running" as const,
              () => new Promise<never>(() => undefined),
            ),
          ]);
          cli.kill();
          const message = cli.stderr().trim();
          const problems: string[] = [];
          if (ended === "running") problems.push("served on the damage");
          else if (ended.code === 0) problems.push("exit 0");
          if (message === "" || message.includes("\n"))
            problems.push(`not one line: ${JSON.stringify(message.slice(0, 400))}`);
          const names = c.store === "analytics" ? /analytics/i : /merchant state|postgres/i;
          if (!names.test(message)) problems.push(`does not name the ${c.store}: ${message.slice(0, 300)}`);
          if (!same(before, digest(data))) problems.push("files changed");
          if (problems.length === 0) refusals++;
          else failures.push(`${c.name}, ${label}: ${problems.join("; ")}`);
          say(
            `${c.name}, ${label}: ${problems.length === 0 ? `refused: ${message.slice(0, 160)}` : problems.join("; ")}`,
          );
        }
      }
    } finally {
      await facilitator.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    return {
      figures: { cases: CASES.length, "clear refusals": refusals, missed: failures.length },
      failures,
    };
  },
};
