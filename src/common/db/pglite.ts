import fs from "node:fs";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { type Database, INT8_OID, parseInt8, type Queryable, type QueryResult } from "./database.ts";
import { lockDirectory } from "./lockfile.ts";

/**
 * Embedded PostgreSQL (PGlite, WASM) with its files in `dir`. One connection: statements and transactions
 * of the process run one after another, which is also why no row lock can ever wait here. The directory
 * is locked for this process until `close()`.
 */
export async function openPglite(dir: string): Promise<Database> {
  fs.mkdirSync(dir, { recursive: true });
  const unlock = lockDirectory(dir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create({ dataDir: dir, parsers: { [INT8_OID]: parseInt8 } });
  } catch (error) {
    unlock();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    kind: "pglite",
    ...wrap(pglite),
    transaction: (fn) => pglite.transaction((tx) => fn(wrap(tx))),
    close() {
      closing ??= pglite.close().finally(unlock);
      return closing;
    },
  };
}

function wrap(target: PGlite | Transaction): Queryable {
  return {
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const result = await target.query<Row>(sql, params as unknown[]);
      return {
        rows: result.rows,
        rowCount: result.fields.length > 0 ? result.rows.length : (result.affectedRows ?? 0),
      };
    },
    async exec(sql: string): Promise<void> {
      await target.exec(sql);
    },
  };
}
