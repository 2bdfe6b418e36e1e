import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { DatabaseDamagedError, DatabaseError, restoreAdvice } from "./database.ts";

/**
 * What a PGlite data directory must hold before PGlite may open it. PGlite runs initdb in any directory
 * without `PG_VERSION`, over whatever is there, so a cluster that lost that one file would silently become
 * a new empty one; and without the others PostgreSQL fails to start with no reason given. The list is what
 * a cluster cannot start without (each was removed in turn from a fresh one); the directories PostgreSQL
 * recreates or can do without (pg_stat, pg_logical, pg_dynshmem, pg_serial, pg_snapshots, pg_subtrans,
 * pg_tblspc, the other databases of base/) are not required.
 */
const REQUIRED_FILES = ["PG_VERSION", "postgresql.conf", "pg_hba.conf", "global/pg_control"];
const REQUIRED_DIRECTORIES = [
  "pg_commit_ts",
  "pg_multixact/members",
  "pg_multixact/offsets",
  "pg_notify",
  "pg_replslot",
  "pg_twophase",
];
/** Directories that are never empty in a cluster, with what must be in them. */
const REQUIRED_CONTENTS: readonly { dir: string; what: string; test: (name: string) => boolean }[] = [
  { dir: "base", what: "no database", test: (name) => /^\d+$/.test(name) },
  { dir: "pg_wal", what: "no WAL segment", test: (name) => /^[0-9A-F]{24}$/.test(name) },
  { dir: "pg_xact", what: "no transaction status file", test: (name) => /^[0-9A-F]{4,}$/.test(name) },
];

/**
 * "first" when `dir` does not exist or is empty (a first start), "whole" when it looks like a complete
 * cluster; anything else is refused, naming what is missing, before PGlite touches a file.
 */
export function inspectCluster(dir: string): "first" | "whole" {
  let entries: string[];
  try {
    entries = fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "first";
    throw error;
  }
  if (entries.length === 0) return "first";
  const missing: string[] = [];
  for (const file of REQUIRED_FILES) if (!isFile(path.join(dir, file))) missing.push(file);
  for (const sub of REQUIRED_DIRECTORIES) if (!isDirectory(path.join(dir, sub))) missing.push(`${sub}/`);
  for (const { dir: sub, what, test } of REQUIRED_CONTENTS) {
    const names = listOrNull(path.join(dir, sub));
    if (names === null) missing.push(`${sub}/`);
    else if (!names.some(test)) missing.push(`${sub}/ (${what})`);
  }
  if (missing.length === 0) return "whole";
  const lost = missing.includes("PG_VERSION")
    ? "PGlite would make a new empty database over it"
    : "PGlite cannot start on it";
  throw new DatabaseDamagedError(
    `the PGlite database in ${dir} is incomplete: missing ${missing.join(", ")}; ${lost}. ` +
      `Nothing was changed: ${restoreAdvice(dir)}`,
  );
}

/**
 * Makes a new cluster in `dir` (absent or empty) all at once: initdb runs in `<dir>.creating`, which is
 * renamed into place when complete, so a first start that is interrupted leaves no half-made cluster
 * that the next start would have to refuse. Where the rename cannot replace `dir` (a mount point), initdb
 * runs in place.
 */
export async function createCluster(dir: string): Promise<void> {
  // Only ever ours, under the directory's lock: what an interrupted first start left.
  const scratch = `${dir}.creating`;
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(scratch);
  try {
    await initdb(scratch);
    fs.renameSync(scratch, dir);
  } catch (error) {
    fs.rmSync(scratch, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EBUSY" && code !== "EXDEV" && code !== "EPERM") throw error;
    fs.mkdirSync(dir, { recursive: true });
    await initdb(dir);
  }
}

/** The cluster's identity and the state of its control file (which every start and checkpoint rewrites). */
export interface ControlFile {
  /** pg_control's system identifier, made by initdb: tells one cluster from another. */
  cluster: string;
  /** sha256 of the whole file: equal to the one taken at a clean close, nothing ran since. */
  hash: string;
}

export function readControlFile(dir: string): ControlFile {
  const bytes = fs.readFileSync(path.join(dir, "global", "pg_control"));
  return {
    cluster: bytes.length >= 8 ? bytes.readBigUInt64LE(0).toString(16) : "",
    hash: crypto.createHash("sha256").update(bytes).digest("hex"),
  };
}

/** What PG_VERSION says, for messages ("17"), or null. */
export function clusterVersion(dir: string): string | null {
  try {
    return fs.readFileSync(path.join(dir, "PG_VERSION"), "utf8").trim();
  } catch {
    return null;
  }
}

function isFile(file: string): boolean {
  return statOrNull(file)?.isFile() ?? false;
}

function isDirectory(dir: string): boolean {
  return statOrNull(dir)?.isDirectory() ?? false;
}

/** A path that is not there, also because a parent is a file (ENOTDIR), is null. */
function statOrNull(file: string): fs.Stats | null {
  try {
    return fs.statSync(file);
  } catch {
    return null;
  }
}

function listOrNull(dir: string): string[] | null {
  try {
    return fs.readdirSync(dir);
  } catch {
    return null;
  }
}

/**
 * PGlite creates the cluster of an empty directory in a process of its own. initdb runs in a WASM instance of
 * its own beside a second PostgreSQL; in the opener their 500 MB stayed after they closed (measured: an idle
 * `serve` held 830 MB after its first start, 340 MB after a restart), as nothing collects garbage in a server
 * waiting for requests, and a worker thread still left 120 MB in the allocator. A process gives all of it back.
 */
async function initdb(dir: string): Promise<void> {
  const script = fileURLToPath(new URL("./pglite-create.mjs", import.meta.url));
  try {
    await promisify(execFile)(process.execPath, [script, dir]);
  } catch (error) {
    const reason = String((error as { stderr?: unknown }).stderr ?? "").trim() || (error as Error).message;
    throw new DatabaseError(`PGlite could not create its cluster in ${dir}: ${reason}`, { cause: error });
  }
}
