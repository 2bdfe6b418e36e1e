/**
 * Any-to-any conversion between JSON, NDJSON, CSV, TSV and SQL INSERT dumps, through one table of records
 * (table.ts). What survives which trip:
 * - JSON <-> NDJSON: the records exactly as given (nested values, key order, missing keys).
 * - numbers a double cannot hold (ids past 2^53, long decimals) keep their digits in every format
 *   (exact-number.ts, lossless-json.ts).
 * - to CSV/TSV/SQL: columns are the union of keys in first-seen order; a missing key is an empty cell or
 *   NULL; nested arrays/objects are written as their JSON text in one cell or string literal.
 * - from CSV/TSV with `inferTypes` (the default): empty cell -> null, true/false -> booleans, canonical
 *   numbers -> numbers, JSON object/array text -> the nested value; so JSON -> CSV -> JSON is lossless for
 *   rectangular records whose strings are not themselves "", "true", "false", a canonical number or JSON
 *   object/array text (`isAmbiguousString`). With `inferTypes: false` every cell is a string.
 * - from SQL (INSERTs, or mysqldump/pg_dump output: sql-dump.ts): numbers, booleans, NULL and strings keep
 *   their type. With `inferTypes`, a column whose CREATE TABLE the dump holds gets values of its declared
 *   type, as the database renders them in JSON (sql-column-types.ts: COPY's `t` is true, a `text[]` an
 *   array, a `text` column's "123" stays a string); without one, COPY data is read like TSV cells and a
 *   string of JSON object/array text is read back as the nested value, so JSON -> SQL -> JSON (this
 *   service's SQL declares no table) is lossless for rectangular records whose strings are not JSON
 *   object/array text.
 */
import { BadInputError } from "../../../common/errors.ts";
import { parseDelimited, writeDelimited } from "./delimited-format.ts";
import { parseJson, parseNdjson, writeJson, writeNdjson } from "./json-format.ts";
import { parseSql } from "./sql-dump.ts";
import { DEFAULT_TABLE, writeSql } from "./sql-format.ts";
import { cell, type Row, type Table, tableOf } from "./table.ts";

export const FORMATS = ["json", "ndjson", "csv", "tsv", "sql"] as const;
export type Format = (typeof FORMATS)[number];

/** Largest input, in UTF-8 bytes. */
export const MAX_INPUT_BYTES = 5 * 1024 * 1024;
/** Largest output, in UTF-8 bytes: CSV -> indented JSON repeats every column name on every record. */
export const MAX_OUTPUT_BYTES = 20 * 1024 * 1024;

export interface ConvertOptions {
  from: Format;
  to: Format;
  /** Name of the table in SQL output. Default "data". */
  table?: string;
  /** Read CSV/TSV cells and SQL strings as typed values (see above). Default true. */
  inferTypes?: boolean;
  /** The table to read from an SQL dump with rows of several (sql-dump.ts). */
  sourceTable?: string | undefined;
}

export interface ConvertResult {
  data: string;
  rows: number;
  columns: string[];
}

/** Reads any format into records, with the column list a tabular writer needs. */
export function readTable(data: string, from: Format, inferTypes: boolean, sourceTable?: string): Table {
  switch (from) {
    case "json":
      return tableOf(parseJson(data));
    case "ndjson":
      return tableOf(parseNdjson(data));
    case "csv":
      return parseDelimited(data, ",", inferTypes);
    case "tsv":
      return parseDelimited(data, "\t", inferTypes);
    case "sql":
      return parseSql(data, { inferTypes, sourceTable });
  }
}

/** Records in document order with every column present (null where missing), for JSON written from a table. */
function fullRecords(table: Table, keepAsGiven: boolean): Row[] {
  if (keepAsGiven) return table.rows;
  return table.rows.map((row) => Object.fromEntries(table.columns.map((c) => [c, cell(row, c)])));
}

export function writeTable(table: Table, to: Format, from: Format, tableName: string): string {
  // JSON and NDJSON pass records through untouched; from a tabular source every record gets every column.
  const asGiven = from === "json" || from === "ndjson";
  switch (to) {
    case "json":
      return writeJson(fullRecords(table, asGiven));
    case "ndjson":
      return writeNdjson(fullRecords(table, asGiven));
    case "csv":
      return writeDelimited(table, ",");
    case "tsv":
      return writeDelimited(table, "\t");
    case "sql":
      return writeSql(table, tableName);
  }
}

/**
 * Converts `data` from one format to another.
 * @example convert('[{"a":1,"b":"x, y"}]', { from: "json", to: "csv" }).data === 'a,b\r\n1,"x, y"\r\n'
 */
export function convert(data: string, options: ConvertOptions): ConvertResult {
  const bytes = Buffer.byteLength(data, "utf8");
  if (bytes > MAX_INPUT_BYTES) {
    throw new BadInputError(`the data is ${bytes} bytes; the limit is ${MAX_INPUT_BYTES}`, "too_large");
  }
  let table: Table;
  let out: string;
  try {
    table = readTable(data, options.from, options.inferTypes ?? true, options.sourceTable);
    out = writeTable(table, options.to, options.from, options.table ?? DEFAULT_TABLE);
  } catch (error) {
    // JSON nested thousands of levels deep exhausts the stack in JSON.parse/stringify: the caller's data, not a fault.
    if (error instanceof RangeError && /call stack/i.test(error.message))
      throw new BadInputError("the data is nested too deeply", "too_deep");
    throw error;
  }
  const outBytes = Buffer.byteLength(out, "utf8");
  if (outBytes > MAX_OUTPUT_BYTES) {
    throw new BadInputError(
      `the result would be ${outBytes} bytes; the limit is ${MAX_OUTPUT_BYTES}`,
      "too_large",
    );
  }
  return { data: out, rows: table.rows.length, columns: table.columns };
}
