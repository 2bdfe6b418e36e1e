/** Reads `INSERT [IGNORE] INTO t [(columns)] VALUES (...), (...)` into records, up to its semicolon. */
import type { CreatedTables } from "./sql-create-table.ts";
import type { SqlCursor } from "./sql-cursor.ts";
import type { DumpRows } from "./sql-dump-rows.ts";
import { recordOf } from "./sql-dump-rows.ts";
import { isWord, type Token } from "./sql-tokens.ts";
import { literal } from "./sql-values.ts";

export function readInsert(
  cursor: SqlCursor,
  created: CreatedTables,
  rows: DumpRows,
  inferTypes: boolean,
): void {
  const first = cursor.peek() as Token;
  cursor.p++;
  if (isWord(cursor.peek(), "IGNORE")) cursor.p++; // mysqldump --insert-ignore
  cursor.expectWord("INTO");
  const name = cursor.tableName();
  const columns = created.columnsFor(cursor, "INSERT INTO", name, first);
  const types = created.typesFor(name, columns);
  cursor.expectWord("VALUES");
  for (;;) {
    cursor.expectPunct("(");
    const values = columns.map((_c, j) => {
      if (j > 0) cursor.expectPunct(",");
      return literal(cursor, inferTypes, types[j]);
    });
    cursor.expectPunct(")");
    rows.add(name, recordOf(columns, values));
    if (!cursor.isPunct(",")) break;
    cursor.p++;
  }
}
