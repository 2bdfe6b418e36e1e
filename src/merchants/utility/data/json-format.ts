/**
 * JSON (an array of objects) and NDJSON (one object per line) read into records and written back; numbers a
 * double cannot hold keep their digits (lossless-json.ts).
 */
import { BadInputError } from "../../../common/errors.ts";
import { parseLossless, stringifyLossless } from "./lossless-json.ts";
import { MAX_ROWS, type Row, tooMany } from "./table.ts";

function isRecord(value: unknown): value is Row {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON array of objects; the objects' values may be nested (they are kept as they are). */
export function parseJson(text: string): Row[] {
  let value: unknown;
  try {
    value = parseLossless(text);
  } catch (error) {
    throw new BadInputError(`the data is not valid JSON: ${(error as Error).message}`, "invalid_data");
  }
  if (!Array.isArray(value)) {
    throw new BadInputError('JSON data must be an array of objects, e.g. [{"a": 1}]', "invalid_data");
  }
  if (value.length > MAX_ROWS) throw tooMany(`${value.length} records`, `${MAX_ROWS} records`);
  value.forEach((item, i) => {
    if (!isRecord(item)) throw new BadInputError(`JSON element ${i} is not an object`, "invalid_data");
  });
  return value as Row[];
}

/** One JSON object per line; blank lines (and a final line break, or CRLF endings) are allowed. */
export function parseNdjson(text: string): Row[] {
  const rows: Row[] = [];
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = parseLossless(line);
    } catch (error) {
      throw new BadInputError(
        `NDJSON line ${i + 1} is not valid JSON: ${(error as Error).message}`,
        "invalid_data",
      );
    }
    if (!isRecord(value)) throw new BadInputError(`NDJSON line ${i + 1} is not an object`, "invalid_data");
    rows.push(value);
    if (rows.length > MAX_ROWS) throw tooMany(`more than ${MAX_ROWS} records`, `${MAX_ROWS} records`);
  }
  return rows;
}

/** Indented two spaces: the output is for reading as much as for machines. */
export function writeJson(rows: readonly Row[]): string {
  return `${stringifyLossless(rows, 2)}\n`;
}

export function writeNdjson(rows: readonly Row[]): string {
  return rows.map((row) => `${stringifyLossless(row)}\n`).join("");
}
