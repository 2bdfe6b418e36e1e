/**
 * Reads pg_dump's `COPY t (columns) FROM stdin;` and its data lines (one "copy" token, sql-tokens.ts) into
 * records. The data token ends the statement: no semicolon follows it.
 */
import { copyFields } from "./copy-text.ts";
import type { CreatedTables } from "./sql-create-table.ts";
import type { SqlCursor } from "./sql-cursor.ts";
import { type DumpRows, recordOf } from "./sql-dump-rows.ts";
import { sqlError, type Token } from "./sql-tokens.ts";
import { copyValue } from "./sql-values.ts";

export function readCopy(
  cursor: SqlCursor,
  created: CreatedTables,
  rows: DumpRows,
  inferTypes: boolean,
): void {
  const first = cursor.peek() as Token;
  cursor.p++;
  const name = cursor.tableName();
  const columns = created.columnsFor(cursor, "COPY", name, first);
  const types = created.typesFor(name, columns);
  cursor.expectWord("FROM");
  cursor.expectWord("STDIN");
  cursor.expectPunct(";");
  const data = cursor.peek();
  if (data?.kind !== "copy") cursor.fail("expected COPY data lines");
  cursor.p++;
  data.lines.forEach((line, k) => {
    const fields = copyFields(line);
    if (fields.length !== columns.length) {
      throw sqlError(
        cursor.sql,
        `COPY row has ${fields.length} fields; the column list has ${columns.length}`,
        data.at + data.lines.slice(0, k).reduce((n, l) => n + l.length + 1, 0),
      );
    }
    rows.add(
      name,
      recordOf(
        columns,
        fields.map((f, j) => copyValue(f, inferTypes, types[j])),
      ),
    );
  });
}
