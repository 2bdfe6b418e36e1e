/**
 * Rows in and out as CSV (RFC 4180, via papaparse). A row is a JSON object; CSV has one header line of
 * column names and text cells, so the mapping is chosen to round-trip what the store exports:
 * - out: the columns are every key in order of first appearance; strings as they are, numbers and
 *   booleans in their JSON spelling, objects and arrays as JSON text, null and missing keys as empty cells;
 * - in (typed, the default): an empty cell leaves the key out; `true`/`false` become booleans; a number
 *   whose JSON spelling is exactly the cell (`42`, `-1.5`, not `007` or `1.50`) becomes a number; a cell
 *   that starts with `{` or `[` and parses as JSON becomes that value; everything else stays a string.
 *   Untyped, every non-empty cell is a string.
 * So export then import gives the same rows, except that null values are left out and strings that look
 * like numbers, booleans or JSON come back typed (import with `typed: false` to keep them strings).
 */
import Papa from "papaparse";
import { BadInputError } from "../../../common/errors.ts";

export type Row = Record<string, unknown>;

export function parseCsvRows(text: string, { typed = true }: { typed?: boolean } = {}): Row[] {
  const parsed = Papa.parse<string[]>(text, { header: false, skipEmptyLines: "greedy" });
  const quoteError = parsed.errors.find((e) => e.type === "Quotes");
  if (quoteError) {
    throw new BadInputError(`csv: ${quoteError.message} (row ${(quoteError.row ?? 0) + 1})`, "invalid_csv");
  }
  const [header, ...lines] = parsed.data;
  if (!header) throw new BadInputError("csv: no header line", "invalid_csv");
  const seen = new Set<string>();
  for (const name of header) {
    if (name === "") throw new BadInputError("csv: an empty column name in the header", "invalid_csv");
    if (seen.has(name)) throw new BadInputError(`csv: column "${name}" appears twice`, "invalid_csv");
    seen.add(name);
  }
  return lines.map((cells, i) => {
    if (cells.length !== header.length) {
      throw new BadInputError(
        `csv: line ${i + 2} has ${cells.length} fields, the header ${header.length}`,
        "invalid_csv",
      );
    }
    const row: Row = {};
    cells.forEach((cell, j) => {
      if (cell === "") return;
      row[header[j] as string] = typed ? typedCell(cell) : cell;
    });
    return row;
  });
}

function typedCell(cell: string): unknown {
  if (cell === "true") return true;
  if (cell === "false") return false;
  if (/^-?\d/.test(cell)) {
    const n = Number(cell);
    if (Number.isFinite(n) && JSON.stringify(n) === cell) return n;
    return cell;
  }
  if (cell.startsWith("{") || cell.startsWith("[")) {
    try {
      return JSON.parse(cell);
    } catch {
      return cell;
    }
  }
  return cell;
}

export function rowsToCsv(rows: readonly Row[]): string {
  const columns: string[] = [];
  const known = new Set<string>();
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      if (!known.has(key)) {
        known.add(key);
        columns.push(key);
      }
    }
  }
  const data = rows.map((row) => columns.map((key) => cellOf(row[key])));
  return Papa.unparse({ fields: columns, data }, { newline: "\r\n" });
}

function cellOf(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return JSON.stringify(value);
  return JSON.stringify(value);
}
