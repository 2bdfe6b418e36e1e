import fs from "node:fs";
import path from "node:path";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { log } from "../log.ts";
import { createCluster, inspectCluster, readControlFile } from "./cluster.ts";
import { type Database, INT8_OID, parseInt8, type Queryable, type QueryResult } from "./database.ts";
import { lockDirectory } from "./lockfile.ts";
import { translateOpenError, translateQueryError } from "./pglite-errors.ts";
import { createPglite } from "./pglite-wasm.ts";
import { ownSession } from "./prepared.ts";
import {
  CHANGES_FILES,
  confirmOnCopy,
  fileBytes,
  findShrunk,
  listRelations,
  lostDataError,
  type RelationRecord,
  readRelationFiles,
  writeRelationFiles,
} from "./relation-files.ts";

/**
 * PostgreSQL's cache of table pages inside PGlite's WASM memory. The default (128 MB) is touched at start
 * and held for the life of the process: 150 MB of the 320 MB an idle PGlite took (measured, 16 MB: 170
 * MB). The state kept here (ledgers, collections, scratchpads) is small and read by key, and pages past
 * the cache come from the operating system's file cache.
 */
export const PGLITE_SHARED_BUFFERS = "16MB";

/**
 * Embedded PostgreSQL (PGlite, WASM) with its files in `dir`. One connection: statements and transactions
 * of the process run one after another, which is also why no row lock can ever wait here. The directory
 * is locked for this process until `close()`.
 *
 * Before PGlite runs, the directory must be absent or empty (a first start) or a whole cluster whose
 * recorded relation files are all there at their recorded size (cluster.ts, relation-files.ts); else the
 * open is refused with the reason, and nothing in the directory is changed. Failures that come from
 * damaged files are reported as such, with the relation (pglite-errors.ts).
 */
export async function openPglite(dir: string): Promise<Database> {
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const unlock = lockDirectory(dir);
  try {
    return await start(dir, unlock);
  } catch (error) {
    unlock();
    throw error;
  }
}

async function start(dir: string, unlock: () => void): Promise<Database> {
  let checked: Record<string, RelationRecord> | null = null;
  if (inspectCluster(dir) === "first") await createCluster(dir);
  else checked = await checkRelationFiles(dir);

  let pglite: PGlite;
  const pidFile = keepAsFound(path.join(dir, "postmaster.pid"));
  try {
    pglite = await createPglite({
      dataDir: dir,
      parsers: { [INT8_OID]: parseInt8 },
      startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
    });
  } catch (error) {
    pidFile.restore();
    throw translateOpenError(error, dir);
  }
  let relations = checked ?? {};
  const record = async (): Promise<void> => {
    try {
      relations = await listRelations(pglite);
      writeRelationFiles(dir, {
        format: 1,
        cluster: readControlFile(dir).cluster,
        closedControl: null,
        relations,
      });
    } catch (error) {
      // The data is fine; only the record lags, and the next open checks on a copy if it must.
      log("warn", "cannot record the database's relation files", { dir, error });
    }
  };
  if (checked === null) await record();

  const fail = (error: unknown) => translateQueryError(error, dir, relations);
  const db = wrap(pglite, fail, record);
  let closing: Promise<void> | undefined;
  // Its one session: statements may be prepared on it (prepared.ts).
  return ownSession<Database>({
    kind: "pglite",
    store: `the PGlite database in ${dir}`,
    ...db,
    async transaction(fn) {
      let changed = false;
      let result: Awaited<ReturnType<typeof fn>>;
      try {
        result = await pglite.transaction((tx) =>
          fn(
            wrap(tx, fail, async () => {
              changed = true;
            }),
          ),
        );
      } catch (error) {
        throw fail(error);
      }
      // After the commit: inside, the record would show files a rollback would take back.
      if (changed) await record();
      return result;
    },
    close() {
      closing ??= closeAndRecord(dir, pglite).finally(unlock);
      return closing;
    },
  });
}

/**
 * The recorded relations as found before PGlite runs, or null when there is no record (a directory of
 * an earlier version, or whose record was lost), which is written once the database is open. A relation
 * whose file is missing or shorter than recorded is a loss when the record was written at a clean close
 * that nothing followed; after a crash, the record may be behind and the loss is confirmed on a copy.
 */
async function checkRelationFiles(dir: string): Promise<Record<string, RelationRecord> | null> {
  const recorded = readRelationFiles(dir);
  if (recorded === null) return null;
  const shrunk = findShrunk(dir, recorded);
  if (shrunk.length === 0) return recorded.relations;
  const clean = recorded.closedControl === readControlFile(dir).hash;
  const lost = clean ? shrunk : await confirmOnCopy(dir, shrunk);
  if (lost.length > 0) throw lostDataError(dir, lost);
  // The record was behind the files: written again once open.
  return null;
}

/** Closes PGlite, then records the relation files as the close left them, with the control file's hash. */
async function closeAndRecord(dir: string, pglite: PGlite): Promise<void> {
  let relations: Record<string, RelationRecord> | null = null;
  try {
    relations = await listRelations(pglite);
  } catch (error) {
    log("warn", "cannot list the database's relation files at close", { dir, error });
  }
  await pglite.close();
  if (relations === null) return;
  try {
    for (const [file, relation] of Object.entries(relations)) {
      const bytes = fileBytes(dir, file);
      // What cannot be seen now is not recorded: the record must never refuse what was so at close.
      if (bytes === null) delete relations[file];
      else relation.bytes = bytes;
    }
    const control = readControlFile(dir);
    writeRelationFiles(dir, { format: 1, cluster: control.cluster, closedControl: control.hash, relations });
  } catch (error) {
    log("warn", "cannot record the database's relation files at close", { dir, error });
  }
}

/**
 * PostgreSQL writes its pid file first thing, so a start that fails (damaged WAL) would leave the
 * directory changed: put back as it was found, so that a refusal changes nothing.
 */
function keepAsFound(file: string): { restore(): void } {
  let found: Buffer | null = null;
  try {
    found = fs.readFileSync(file);
  } catch {}
  return {
    restore() {
      if (found === null) fs.rmSync(file, { force: true });
      else fs.writeFileSync(file, found);
    },
  };
}

/**
 * `target` as a Queryable whose failures from damaged files say so (`fail`), and which calls `changed`
 * after a statement that can move or shrink a relation's file.
 */
function wrap(
  target: PGlite | Transaction,
  fail: (error: unknown) => unknown,
  changed: () => Promise<void>,
): Queryable {
  return {
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      let result: Awaited<ReturnType<typeof target.query<Row>>>;
      try {
        result = await target.query<Row>(sql, params as unknown[]);
      } catch (error) {
        throw fail(error);
      }
      if (CHANGES_FILES.test(sql)) await changed();
      return {
        rows: result.rows,
        rowCount: result.fields.length > 0 ? result.rows.length : (result.affectedRows ?? 0),
      };
    },
    async exec(sql: string): Promise<void> {
      try {
        await target.exec(sql);
      } catch (error) {
        throw fail(error);
      }
      if (CHANGES_FILES.test(sql)) await changed();
    },
  };
}
