/**
 * Reads an SQL dump into records: this service's own INSERTs, and what mysqldump and pg_dump print.
 * Read: INSERT INTO t [(columns)] VALUES (...), (...); and COPY t (columns) FROM stdin; blocks. CREATE TABLE
 * gives the column names of a later INSERT without a list. Skipped, being set-up rather than data: SET,
 * LOCK/UNLOCK TABLES, CREATE, DROP, ALTER, COMMENT ON, GRANT, REVOKE, USE, SELECT pg_catalog.*, BEGIN/COMMIT.
 * Anything else (UPDATE, expressions, casts, functions in VALUES) is refused, never guessed. A column whose
 * CREATE TABLE declares its type gets values of that type (`sql-column-types.ts`), as the database renders it.
 *
 * One table per conversion: a dump with rows of several tables needs `sourceTable` to choose one, else it
 * is refused with the tables' names (converting the first silently would drop data unnoticed).
 */
import { readCopy } from "./sql-copy.ts";
import { CreatedTables } from "./sql-create-table.ts";
import { describe, SqlCursor } from "./sql-cursor.ts";
import { DumpRows } from "./sql-dump-rows.ts";
import { readInsert } from "./sql-insert.ts";
import { statementKind } from "./sql-statements.ts";
import { isWord, tokenize } from "./sql-tokens.ts";
import type { Table } from "./table.ts";

export interface SqlOptions {
  inferTypes: boolean;
  /** Which table of a dump with several to read: its name, schema-qualified or not. */
  sourceTable?: string | undefined;
}

/**
 * Records of the dump's one table (or `sourceTable`); columns are the union in first-seen order. SQL strings
 * stay strings, except that with `inferTypes` one holding JSON object or array text becomes that nested value
 * (how this service's SQL output stores nested values).
 */
export function parseSql(sql: string, options: SqlOptions): Table & { table: string | undefined } {
  const { inferTypes, sourceTable } = options;
  const cursor = new SqlCursor(sql, tokenize(sql));
  const created = new CreatedTables();
  const rows = new DumpRows(sourceTable);
  while (!cursor.atEnd()) {
    switch (statementKind(cursor.tokens, cursor.p)) {
      case "empty":
        cursor.p++;
        continue;
      case "transaction":
        cursor.p++;
        if (isWord(cursor.peek(), "TRANSACTION") || isWord(cursor.peek(), "WORK")) cursor.p++;
        break;
      case "start":
        cursor.p++;
        cursor.expectWord("TRANSACTION");
        break;
      case "create_table":
        cursor.p += 2;
        created.read(cursor);
        cursor.skipStatement();
        break;
      case "set_up":
        cursor.skipStatement();
        break;
      case "copy":
        readCopy(cursor, created, rows, inferTypes);
        continue; // the data token ends the statement
      case "insert":
        readInsert(cursor, created, rows, inferTypes);
        break;
      case "other":
        cursor.fail(
          `expected INSERT or COPY (or a set-up statement of a dump), found ${describe(cursor.peek())}`,
        );
    }
    if (!cursor.atEnd()) cursor.expectPunct(";");
  }
  return rows.table();
}
