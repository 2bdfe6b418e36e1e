import { BadInputError } from "../../../common/errors.ts";
import type { ExactNumber } from "./exact-number.ts";

/** A JSON value as `JSON.parse` gives it, with numbers a double cannot hold kept as `ExactNumber`. */
export type JsonValue =
  | null
  | boolean
  | number
  | ExactNumber
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };
/** One record: a flat object whose values may still be nested JSON (see `nested` in convert-engine.ts). */
export type Row = Record<string, JsonValue>;

/**
 * The common shape every format is read into and written from: named columns in first-seen order and
 * records. Tabular formats (CSV, TSV, SQL) need one column list; `columns` is the union of every record's
 * keys, in the order they first appear, so the same input always gives the same column order.
 */
export interface Table {
  columns: string[];
  rows: Row[];
}

/** Most records one conversion reads: keeps memory and time bounded with the 5 MB input limit. */
export const MAX_ROWS = 100_000;
/** Most columns one conversion reads. */
export const MAX_COLUMNS = 1_000;

/** The union of the records' keys in first-seen order, with the row and column caps checked. */
export function tableOf(rows: Row[]): Table {
  if (rows.length > MAX_ROWS) throw tooMany(`${rows.length} records`, `${MAX_ROWS} records`);
  const seen = new Set<string>();
  for (const row of rows) {
    for (const key of Object.keys(row)) seen.add(key);
    if (seen.size > MAX_COLUMNS) throw tooMany(`more than ${MAX_COLUMNS} columns`, `${MAX_COLUMNS} columns`);
  }
  return { columns: [...seen], rows };
}

/** A record's value in a column, missing keys read as null (tabular formats have no "absent"). */
export function cell(row: Row, column: string): JsonValue {
  return Object.hasOwn(row, column) ? (row[column] as JsonValue) : null;
}

export function tooMany(what: string, limit: string): BadInputError {
  return new BadInputError(`the data has ${what}; the limit is ${limit}`, "too_large");
}
