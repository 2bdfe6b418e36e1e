/**
 * What DuckDB's failures on the analytics store mean, as errors written for the person who runs the program.
 *
 * The node API gives a DuckDB error as a plain `Error` (it does not expose `duckdb_error_type`); the type is
 * the start of its message, "<Type> Error: ", which DuckDB writes from the exception's type (IO, Catalog,
 * Serialization, INTERNAL, ...). Classification reads that type first, then, within it, DuckDB's own sentence
 * for the case, matched whole: a word such as "lock" or "corrupt" alone appears in unrelated failures (a
 * corrupt block was once reported as "in use by another process" because /lock/i matched "block").
 *
 * Measured on DuckDB 1.5.6 (test/analytics/store-errors.test.ts):
 * - another process holds the file: `IO Error: Could not set lock on file "F": Conflicting lock is held in
 *   PROGRAM (PID N). See also ...`;
 * - a block fails its checksum, when a query or the open reads it: `IO Error: Corrupt database file: computed
 *   checksum X does not match stored checksum Y in block at location Z`;
 * - the file is shorter than a block it needs: `IO Error: Could not read enough bytes from file "F": attempted
 *   to read N bytes from location Z`;
 * - not a DuckDB file (its header damaged, or an empty or foreign file): `IO Error: The file "F" exists, but it
 *   is not a valid DuckDB database file!`;
 * - another DuckDB's storage version: `IO Error: Trying to read a database file with version number N, but we
 *   can only read versions between A and B.\nThe database file was created with DuckDB version V.` (or "a
 *   newer version of DuckDB");
 * - a write-ahead log entry fails its checksum: `IO Error: Failure while replaying WAL file "F.wal": Corrupt WAL
 *   file: entry at byte position N ...`; other replay failures carry other types (`INTERNAL Error: Failure while
 *   replaying WAL file "F.wal": Invalid WAL entry type!`);
 * - a missing directory: `IO Error: Cannot open file "F": No such file or directory` (a missing file in a
 *   directory that exists is created; read-only, `IO Error: Cannot open database "F" in read-only mode:
 *   database does not exist`, which `x402-merchants check` never meets: it looks for the file first).
 */
import { AppError } from "../common/errors.ts";

/** What an HTTP caller is told instead of a message that names the server's files (src/common/http.ts). */
const PUBLIC = {
  publicMessage: "the service's analytics store cannot be read; its operator has the details in the log",
};

/** The analytics database is held by another process (DuckDB allows one process per file). */
export class AnalyticsBusyError extends AppError {
  constructor(
    message: string,
    /** The process that holds it, as DuckDB names it. */
    readonly holder: LockHolder,
  ) {
    super(503, "analytics_busy", message);
  }
}

/**
 * The analytics store is damaged: a block fails its checksum, the file is cut short, its write-ahead log
 * cannot be replayed. Nothing is served from it or written to it; the files are left as they are.
 */
export class AnalyticsDamagedError extends AppError {
  constructor(
    readonly file: string,
    /** What is wrong, as a phrase: "block 40 (byte 10498048) fails its checksum". */
    readonly damage: string,
    options?: ErrorOptions,
  ) {
    super(
      500,
      "analytics_damaged",
      `the analytics store ${file} is damaged: ${damage}. It was left as it is: restore it from a backup, or index or import again into a new data directory (--data DIR); \`x402-merchants check\` lists the damage`,
      { ...options, ...PUBLIC },
    );
  }
}

/** The store was written by a DuckDB or an x402-merchants this program cannot read. */
export class AnalyticsVersionError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super(500, "analytics_version", message, { ...options, ...PUBLIC });
  }
}

/** The store cannot be opened, read or written for a reason of the file system (permissions, space). */
export class AnalyticsFileError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super(500, "analytics_file", message, { ...options, ...PUBLIC });
  }
}

/** Who holds a DuckDB file's lock: its PID and program, as DuckDB's error names them. */
export interface LockHolder {
  pid: number;
  program: string;
}

const LOCK_CONFLICT = /Could not set lock on file ".*?": Conflicting lock is held in (.*?) \(PID (\d+)\)/;

/** The holder a DuckDB open error names, or undefined when the error is not a lock conflict. */
export function lockHolder(message: string): LockHolder | undefined {
  const match = LOCK_CONFLICT.exec(message);
  if (!match) return undefined;
  return { pid: Number(match[2]), program: match[1] as string };
}

/**
 * A transaction that lost to another connection's (DuckDB's optimistic concurrency): its writes were
 * undone, and running it again on the data as it now is can succeed.
 */
export function isTransactionConflict(error: unknown): boolean {
  return (
    duckdbErrorType(error) === "TransactionContext" &&
    /conflict|Failed to commit/i.test((error as Error).message)
  );
}

/** DuckDB's type of an error ("IO", "Catalog", "INTERNAL", ...), or undefined when it is not DuckDB's. */
export function duckdbErrorType(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  return /^([A-Za-z][A-Za-z ]*?) Error: /.exec(error.message)?.[1];
}

const CHECKSUM =
  /^Corrupt database file: computed checksum \d+ does not match stored checksum \d+ in block at location (\d+)/;
const SHORT_READ =
  /^Could not read enough bytes from file "(.*?)": attempted to read (\d+) bytes from location (\d+)/;
const NOT_DUCKDB = /^The file "(.*?)" exists, but it is not a valid DuckDB database file!/;
const OTHER_VERSION =
  /^Trying to read a database file with version number (\d+), but we can only read versions between (\d+) and (\d+)\.\s*The database file was created with (.*?)\.(\s|$)/;
const WAL_REPLAY = /Failure while replaying WAL file "(.*?)": (.*)/;

/**
 * The error a DuckDB failure on the store `file` means, or undefined when it is not one of those (a
 * constraint, a bug in a query): those are left as DuckDB gave them. `opening`: the failure came from opening
 * the file, so any file-system failure is the store's; later, only one naming the store's file is (an import's
 * unreadable NDJSON file is the import's to report).
 */
export function storeError(error: unknown, file: string, opening = false): AppError | undefined {
  const type = duckdbErrorType(error);
  if (type === undefined) return undefined;
  const message = (error as Error).message;
  const text = message.slice(type.length + " Error: ".length);
  const firstLine = text.split("\n")[0] as string;
  const cause = { cause: error };

  const holder = lockHolder(message);
  if (holder) {
    return new AnalyticsBusyError(
      `the analytics store ${file} is in use by another process (PID ${holder.pid}, ${holder.program})`,
      holder,
    );
  }
  const wal = WAL_REPLAY.exec(message);
  if (wal) {
    const reason = (wal[2] as string).split("\n")[0];
    return new AnalyticsDamagedError(
      file,
      `its write-ahead log ${wal[1]} cannot be replayed (${reason})`,
      cause,
    );
  }
  if (type !== "IO") return undefined;
  const checksum = CHECKSUM.exec(text);
  if (checksum) {
    return new AnalyticsDamagedError(file, `the block at byte ${checksum[1]} fails its checksum`, cause);
  }
  const short = SHORT_READ.exec(text);
  if (short && (short[1] === file || opening)) {
    return new AnalyticsDamagedError(
      file,
      `it ends before byte ${BigInt(short[3] as string) + BigInt(short[2] as string)}, which a block in use needs: it was cut short`,
      cause,
    );
  }
  if (NOT_DUCKDB.test(text)) {
    return new AnalyticsDamagedError(
      file,
      "it does not start with DuckDB's header (damaged, or not a DuckDB file)",
      cause,
    );
  }
  const version = OTHER_VERSION.exec(text);
  if (version) {
    return new AnalyticsVersionError(
      `the analytics store ${file} was written by ${version[4]} (storage version ${version[1]}); this program's DuckDB reads versions ${version[2]} to ${version[3]}: open it with the x402-merchants that wrote it, or give this one another data directory (--data DIR)`,
      cause,
    );
  }
  if (opening || message.includes(file)) {
    return new AnalyticsFileError(
      `the analytics store ${file} cannot be ${opening ? "opened" : "used"}: ${firstLine}`,
      cause,
    );
  }
  return undefined;
}
