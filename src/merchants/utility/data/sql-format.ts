/**
 * SQL INSERT dumps: written as one portable statement per record,
 *   INSERT INTO "data" ("id","name") VALUES (1,'Ada');
 * with identifiers in double quotes ("" inside) and strings in single quotes ('' inside). Read back by
 * sql-dump.ts, which also takes mysqldump and pg_dump output.
 */
import { BadInputError } from "../../../common/errors.ts";
import { cellText } from "./cell-text.ts";
import { ExactNumber } from "./exact-number.ts";
import { cell, type JsonValue, type Table } from "./table.ts";

export const DEFAULT_TABLE = "data";

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function literal(value: JsonValue): string {
  if (value === null) return "NULL";
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "number" || value instanceof ExactNumber) return String(value);
  // Strings, and nested arrays/objects as their JSON text (what json/jsonb columns accept).
  return `'${cellText(value).replaceAll("'", "''")}'`;
}

/** One INSERT per record, columns in the table's order, missing keys as NULL. */
export function writeSql(table: Table, tableName: string): string {
  if (table.columns.length === 0) return "";
  if (table.columns.includes("")) throw new BadInputError("SQL cannot name an empty column", "invalid_data");
  const head = `INSERT INTO ${quoteIdentifier(tableName)} (${table.columns.map(quoteIdentifier).join(",")}) VALUES (`;
  return table.rows
    .map((row) => `${head}${table.columns.map((c) => literal(cell(row, c))).join(",")});\n`)
    .join("");
}
