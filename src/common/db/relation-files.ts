import fs from "node:fs";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { log } from "../log.ts";
import { readControlFile } from "./cluster.ts";
import { DatabaseDamagedError, restoreAdvice } from "./database.ts";
import { createPglite } from "./pglite-wasm.ts";

/**
 * The record of a PGlite cluster's relation files, kept in the cluster's directory: each user relation's
 * file (`base/<db>/<relfilenode>`), what it is and its size. PostgreSQL reads a table whose file was
 * emptied or cut short as a table with fewer rows, without a word; against this record the open finds
 * that out, and a failure that names only a file can name its table.
 *
 * When it is written: at a clean close (then it also holds the control file's hash, proof that nothing
 * ran since), and after every statement that can give a relation a new file or shrink one (CREATE, ALTER,
 * DROP, TRUNCATE, VACUUM, CLUSTER, REINDEX, REFRESH). Between those, files only grow, so after a crash the
 * recorded sizes are still lower bounds.
 */
const RELATION_FILES = "x402m-relation-files.json";

/** Statements after which the record is written again (a crash right after one may leave it behind). */
export const CHANGES_FILES = /\b(create|alter|drop|truncate|vacuum|cluster|reindex|refresh)\b/i;

export interface RelationRecord {
  /** For messages: "table public.kept", "index public.kept_pkey of table public.kept". */
  what: string;
  /** Its qualified name (`format('%I.%I')`), to find it again in the catalog. */
  name: string;
  bytes: number;
}

export interface RelationFiles {
  format: 1;
  /** The cluster the record is of (its system identifier): a record of another cluster is ignored. */
  cluster: string;
  /** The control file's hash right after a clean close, or null when written while open. */
  closedControl: string | null;
  /** By file, as `pg_relation_filepath` gives it (relative to the directory). */
  relations: Record<string, RelationRecord>;
}

/** What the catalog is read through: PGlite itself, not the wrapper whose DDL would record again. */
interface Catalog {
  query<Row>(sql: string): Promise<{ rows: Row[] }>;
}

/** A relation whose file is now missing or shorter than recorded. */
export interface Shrunk {
  file: string;
  record: RelationRecord;
  /** Bytes now, or null when the file is gone. */
  bytes: number | null;
}

/** The record in `dir`, or null when there is none or it is not of this cluster. */
export function readRelationFiles(dir: string): RelationFiles | null {
  const file = path.join(dir, RELATION_FILES);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  let record: RelationFiles;
  try {
    record = JSON.parse(text);
  } catch {
    // Ours and rewritten at the next close: not worth refusing the data for.
    log("warn", "the record of the relation files is unreadable: not checked this time", { file });
    return null;
  }
  if (record.format !== 1 || record.cluster !== readControlFile(dir).cluster) {
    log("warn", "the record of the relation files is of another cluster: not checked this time", { file });
    return null;
  }
  return record;
}

export function writeRelationFiles(dir: string, record: RelationFiles): void {
  const file = path.join(dir, RELATION_FILES);
  // Whole or not at all: a record cut short by a crash would be ignored, not trusted.
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(record, null, 1)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

/**
 * The user relations with storage (tables, indexes, TOAST, sequences, materialized views) and their
 * files now. Unlogged and temporary ones are left out: a crash empties them by design.
 */
export async function listRelations(q: Catalog): Promise<Record<string, RelationRecord>> {
  const { rows } = await q.query<{
    oid: number;
    kind: string;
    name: string;
    file: string;
    bytes: bigint;
    indexed: number | null;
    toast: number;
  }>(
    `SELECT c.oid::int4 AS oid, c.relkind::text AS kind, format('%I.%I', n.nspname, c.relname) AS name,
            pg_relation_filepath(c.oid) AS file, pg_relation_size(c.oid) AS bytes,
            i.indrelid::int4 AS indexed, c.reltoastrelid::int4 AS toast
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_index i ON i.indexrelid = c.oid
      WHERE c.oid >= 16384 AND c.relpersistence = 'p' AND c.relkind IN ('r', 'i', 't', 'm', 'S')`,
  );
  const byOid = new Map(rows.map((r) => [r.oid, r]));
  const toastOwner = new Map(rows.filter((r) => r.toast !== 0).map((r) => [r.toast, r.name]));
  const describe = (row: (typeof rows)[number]): string => {
    switch (row.kind) {
      case "t":
        return `the TOAST of table ${toastOwner.get(row.oid) ?? row.name}`;
      case "i": {
        const table = row.indexed === null ? undefined : byOid.get(row.indexed);
        if (table?.kind === "t") return `the TOAST index of table ${toastOwner.get(table.oid) ?? table.name}`;
        return `index ${row.name}${table ? ` of table ${table.name}` : ""}`;
      }
      case "S":
        return `sequence ${row.name}`;
      case "m":
        return `materialized view ${row.name}`;
      default:
        return `table ${row.name}`;
    }
  };
  const relations: Record<string, RelationRecord> = {};
  for (const row of rows) {
    relations[row.file] = { what: describe(row), name: row.name, bytes: Number(row.bytes) };
  }
  return relations;
}

/** The recorded relations whose file is now missing or shorter than recorded. */
export function findShrunk(dir: string, record: RelationFiles): Shrunk[] {
  const shrunk: Shrunk[] = [];
  for (const [file, relation] of Object.entries(record.relations)) {
    const bytes = fileBytes(dir, file);
    if (bytes === null || bytes < relation.bytes) shrunk.push({ file, record: relation, bytes });
  }
  return shrunk;
}

/** The relation's size on disk, all its 1 GiB segments (`file`, `file.1`, ...), or null when missing. */
export function fileBytes(dir: string, file: string): number | null {
  const first = fs.statSync(path.join(dir, file), { throwIfNoEntry: false });
  if (!first) return null;
  let total = first.size;
  for (let segment = 1, size = first.size; size === SEGMENT_BYTES; segment++) {
    size = fs.statSync(path.join(dir, `${file}.${segment}`), { throwIfNoEntry: false })?.size ?? 0;
    total += size;
  }
  return total;
}

const SEGMENT_BYTES = 1024 ** 3;

/**
 * Of the shrunk relations of a record written while the database was open (so a crash came after it),
 * those that really lost data. The record may be behind the files: a statement it did not see may have
 * moved a relation to a new file (a function that truncates) or vacuumed it. So the crash recovery runs
 * on a copy, where the catalog says what each relation's file is now and how long it is once the WAL is
 * replayed: a loss is a relation still in the file found short and still shorter than recorded. The
 * directory itself is not touched; the copy (`<dir>.check`) is removed.
 */
export async function confirmOnCopy(dir: string, shrunk: readonly Shrunk[]): Promise<Shrunk[]> {
  const copy = `${dir}.check`;
  // Only ever ours, under the directory's lock: what an interrupted check left.
  fs.rmSync(copy, { recursive: true, force: true });
  try {
    fs.cpSync(dir, copy, { recursive: true });
    let pglite: PGlite;
    try {
      pglite = await createPglite({ dataDir: copy });
    } catch (error) {
      log("warn", "a copy of the database cannot be opened to tell a loss from a stale record", {
        dir,
        error,
      });
      return [...shrunk];
    }
    try {
      const lost: Shrunk[] = [];
      for (const entry of shrunk) {
        const { rows } = await pglite.query<{ file: string | null; bytes: number | null }>(
          "SELECT pg_relation_filepath(r) AS file, pg_relation_size(r)::float8 AS bytes FROM to_regclass($1) r",
          [entry.record.name],
        );
        const now = rows[0];
        if (now?.file === entry.file && (now.bytes ?? 0) < entry.record.bytes) lost.push(entry);
      }
      return lost;
    } finally {
      await pglite.close();
    }
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

/** The refusal for relations that lost data. */
export function lostDataError(dir: string, lost: readonly Shrunk[]): DatabaseDamagedError {
  const lines = lost.map(
    ({ file, record, bytes }) =>
      `${record.what} (file ${file}) ${bytes === null ? "is missing" : `holds ${bytes} bytes`}, ` +
      `${record.bytes} when last recorded`,
  );
  return new DatabaseDamagedError(
    `the PGlite database in ${dir} lost data: ${lines.join("; ")}; PostgreSQL would serve what is left ` +
      `as if nothing were missing. Nothing was changed: ${restoreAdvice(dir)}`,
  );
}
