import { AppError } from "../errors.ts";
import { clusterVersion } from "./cluster.ts";
import { DatabaseDamagedError, restoreAdvice } from "./database.ts";
import type { RelationRecord } from "./relation-files.ts";

/**
 * SQLSTATEs of a read that met damaged or missing files: data_corrupted ("invalid page in block 3 of
 * relation base/5/16396", "could not read blocks"), index_corrupted, undefined_file, io_error. Internal
 * errors (XX000) are left as they are: they are as often bugs as damage.
 */
const DAMAGE_CODES = new Set(["XX001", "XX002", "58P01", "58030"]);

/** `base/<db>/<relfilenode>` (or a segment of it) in PostgreSQL's messages. */
const RELATION_FILE = /\b((?:base\/\d+|global|pg_tblspc\/[^"\s]+)\/\d+)(?:\.\d+)?\b/;

/**
 * A query's failure as the operator needs it when it comes from damaged files: which store, which
 * relation (named from the record of the relation files, as the catalog may be what is damaged), and
 * what to do. PGlite's WebAssembly abort ("RuntimeError: Aborted()") means the engine is gone and every
 * later query fails too. Other errors (constraint violations, syntax) are returned as they are.
 */
export function translateQueryError(
  error: unknown,
  dir: string,
  relations: Readonly<Record<string, RelationRecord>>,
): unknown {
  // Already said (a transaction passes on its statement's error), or the caller's own.
  if (error instanceof AppError) return error;
  if (isAbort(error)) {
    return damaged(
      `the PGlite database in ${dir} stopped: PGlite aborted (${firstLine(error)}), which damaged files ` +
        "can cause; every query fails until the program is restarted. Restart it; if it fails again, " +
        restoreAdvice(dir),
      error,
    );
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string" || !DAMAGE_CODES.has(code)) return error;
  const file = RELATION_FILE.exec(firstLine(error))?.[1];
  const relation = file === undefined ? undefined : relations[file];
  const where =
    file === undefined
      ? ""
      : ` ${relation ? `${relation.what} (file ${file})` : `file ${file} (a relation this program does not record: a system catalog)`}`;
  return damaged(
    `the PGlite database in ${dir} is damaged: reading${where} failed: ${firstLine(error)}. ` +
      `Stop the program and ${restoreAdvice(dir)}`,
    error,
  );
}

/**
 * PGlite.create's failure on a directory that looked whole: its files, or its version, are at fault. Not
 * logged: it stops the start, whose caller prints it.
 */
export function translateOpenError(error: unknown, dir: string): DatabaseDamagedError {
  const version = clusterVersion(dir);
  return new DatabaseDamagedError(
    `PGlite cannot open the database in ${dir} (${firstLine(error)}): its files are damaged, or are of ` +
      `another PostgreSQL version than this PGlite's (PG_VERSION says ${version ?? "nothing"}). ` +
      `Nothing was changed: ${restoreAdvice(dir)}`,
    { cause: error },
  );
}

function isAbort(error: unknown): boolean {
  return error instanceof WebAssembly.RuntimeError || /\bAborted\(/.test(firstLine(error));
}

function damaged(message: string, cause: unknown): DatabaseDamagedError {
  // Not logged here: a request's failure is logged whole by the HTTP layer (a DatabaseError's message is for
  // the operator), and a start's is printed by the CLI; logging it here too said it twice.
  return new DatabaseDamagedError(message, { cause });
}

function firstLine(error: unknown): string {
  // PostgreSQL's errors are named "error": their message says it all.
  const plain = !(error instanceof Error) || error.name.toLowerCase() === "error";
  const text = plain
    ? error instanceof Error
      ? error.message
      : String(error)
    : `${error.name}: ${error.message}`;
  return text.split("\n")[0] as string;
}
