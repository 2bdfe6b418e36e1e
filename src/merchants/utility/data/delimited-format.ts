/**
 * CSV and TSV with RFC 4180 quoting (papaparse reads and writes the quoting): a field holding the
 * delimiter, a double quote, CR or LF, or starting or ending with a space, is written in double quotes with
 * inner quotes doubled. TSV uses the same quoting with a tab delimiter (as spreadsheets and papaparse do),
 * so tabs and line breaks inside cells survive. The first line is the header.
 */
import Papa from "papaparse";
import { BadInputError } from "../../../common/errors.ts";
import { cellText, inferCell } from "./cell-text.ts";
import { cell, MAX_COLUMNS, MAX_ROWS, type Row, type Table, tooMany } from "./table.ts";

export type Delimiter = "," | "\t";

/** CSV lines end with CRLF (RFC 4180); TSV with LF, as `text/tab-separated-values` files usually do. */
const LINE_BREAK: Record<Delimiter, string> = { ",": "\r\n", "\t": "\n" };
const NAME: Record<Delimiter, string> = { ",": "CSV", "\t": "TSV" };

/**
 * Reads CSV or TSV. With `inferTypes` cells become numbers, booleans, null or nested values by the rules
 * of `inferCell`; without, every cell is a string (the empty cell is ""). A row with a different number of
 * fields than the header, a duplicate header name or broken quoting is refused: nothing is guessed.
 */
export function parseDelimited(text: string, delimiter: Delimiter, inferTypes: boolean): Table {
  const name = NAME[delimiter];
  // A byte-order mark (spreadsheet exports) and one final line break are not data.
  let body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  body = body.replace(/(\r\n|\n|\r)$/, "");
  if (body === "") return { columns: [], rows: [] };
  const parsed = Papa.parse<string[]>(body, {
    delimiter,
    quoteChar: '"',
    header: false,
    skipEmptyLines: false,
  });
  const error = parsed.errors.find((e) => e.code !== "UndetectableDelimiter");
  if (error) {
    const where = error.row === undefined ? "" : ` in record ${error.row + 1}`;
    throw new BadInputError(`the ${name} is malformed${where}: ${error.message}`, "invalid_data");
  }
  const [header = [], ...records] = parsed.data;
  if (header.length > MAX_COLUMNS) throw tooMany(`${header.length} columns`, `${MAX_COLUMNS} columns`);
  if (records.length > MAX_ROWS) throw tooMany(`${records.length} records`, `${MAX_ROWS} records`);
  const seen = new Set<string>();
  for (const column of header) {
    if (seen.has(column))
      throw new BadInputError(`the ${name} header repeats the column "${column}"`, "invalid_data");
    seen.add(column);
  }
  const rows: Row[] = [];
  for (const [i, fields] of records.entries()) {
    // A blank line between records of a multi-column file (one empty field) is skipped; with one column
    // it is that column's empty cell.
    if (header.length > 1 && fields.length === 1 && fields[0] === "") continue;
    if (fields.length !== header.length) {
      throw new BadInputError(
        `${name} record ${i + 2} has ${fields.length} fields; the header has ${header.length}`,
        "invalid_data",
      );
    }
    // fromEntries defines own properties, so a column named "__proto__" is a column like any other.
    const row: Row = Object.fromEntries(
      header.map((column, j) => {
        const text = fields[j] ?? "";
        return [column, inferTypes ? inferCell(text) : text];
      }),
    );
    rows.push(row);
  }
  return { columns: header, rows };
}

/** Writes the header and one line per record (missing keys and null as empty cells), ending with a line break. */
export function writeDelimited(table: Table, delimiter: Delimiter): string {
  const { columns } = table;
  if (columns.length === 0) return "";
  const data = table.rows.map((row) => columns.map((column) => cellText(cell(row, column))));
  const newline = LINE_BREAK[delimiter];
  const text = Papa.unparse(
    { fields: columns, data },
    {
      delimiter,
      newline,
      header: true,
      // In a one-column file an empty cell would be an empty line: quote it so it reads back as a cell.
      quotes: (value: unknown) => columns.length === 1 && value === "",
    },
  );
  // Papa ends a header-only file with a line break and a file with records without one.
  return text.endsWith(newline) ? text : `${text}${newline}`;
}
