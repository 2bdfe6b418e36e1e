/**
 * A dump's values as JSON: INSERT's literals and COPY's fields, typed by their column's declared type when
 * the dump declares one and `inferTypes` asks for it.
 */
import { inferCell, nestedFromText } from "./cell-text.ts";
import { numberFromText } from "./exact-number.ts";
import { type ColumnType, typedValue } from "./sql-column-types.ts";
import { describe, type SqlCursor } from "./sql-cursor.ts";
import type { JsonValue } from "./table.ts";

/**
 * A numeric literal as a number; one a double cannot hold keeps its digits (an `ExactNumber`), or stays text
 * when it is not even JSON's number syntax (`+1e999`), so no digit is lost.
 */
export function numberOf(text: string): JsonValue {
  return numberFromText(text.replace(/^\+/, "")) ?? text;
}

/**
 * A COPY field: with `inferTypes`, a value of its column's declared type, else (no CREATE TABLE) read like a
 * TSV cell, except that only `\N` is NULL; without, its text.
 */
export function copyValue(
  field: string | null,
  inferTypes: boolean,
  type: ColumnType | undefined,
): JsonValue {
  if (field === null) return null;
  if (!inferTypes) return field;
  if (type) return typedValue(type, field);
  return field !== "" ? inferCell(field) : field;
}

/**
 * The literal at the cursor (number, 'string', NULL, TRUE or FALSE). With `inferTypes`, a string holding
 * JSON object or array text becomes that nested value (how this service's SQL output stores nested values).
 */
export function literal(cursor: SqlCursor, inferTypes: boolean, type: ColumnType | undefined): JsonValue {
  const t = cursor.peek();
  cursor.p++;
  if (t?.kind === "number") return numberOf(t.text);
  if (t?.kind === "string") {
    if (!inferTypes) return t.text;
    return type ? typedValue(type, t.text) : (nestedFromText(t.text) ?? t.text);
  }
  if (t?.kind === "ident" && !t.quoted) {
    const word = t.text.toUpperCase();
    if (word === "NULL") return null;
    if (word === "TRUE") return true;
    if (word === "FALSE") return false;
  }
  cursor.p--;
  return cursor.fail(`expected a literal (number, 'string', NULL, TRUE or FALSE), found ${describe(t)}`);
}
