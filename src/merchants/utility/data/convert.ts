import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/endpoint.ts";
import { PRICES } from "../prices.ts";
import { convert as convertData, FORMATS, MAX_INPUT_BYTES } from "./convert-engine.ts";
import { DEFAULT_TABLE } from "./sql-format.ts";
import { MAX_COLUMNS, MAX_ROWS } from "./table.ts";

const n = (x: number) => x.toLocaleString("en-US");
/** The caps a conversion reads within, stated in the description and the schema alike. */
const CAPS = `at most ${MAX_INPUT_BYTES / 1024 / 1024} MiB, ${n(MAX_ROWS)} records and ${n(MAX_COLUMNS)} columns`;

const Format = z.enum(FORMATS);

/** `data`, `from`, `to` are the spec's names (4.4); `table` and `infer_types` are this service's options. */
const ConvertInput = z.object({
  data: z
    .string()
    .refine((s) => Buffer.byteLength(s, "utf8") <= MAX_INPUT_BYTES, {
      message: `at most ${MAX_INPUT_BYTES} bytes (5 MiB)`,
    })
    .describe(
      `The data to convert, as text. json: an array of objects; ndjson: one object per line; csv/tsv: a header line, then records (RFC 4180 quoting); sql: INSERT INTO statements (one or many rows each) or a mysqldump/pg_dump file (INSERTs or COPY ... FROM stdin blocks; SET, LOCK, CREATE TABLE and other set-up statements and comments are skipped; an INSERT without a column list takes them from its CREATE TABLE). Limits: ${CAPS}.`,
    ),
  from: Format.describe("Format of `data`."),
  to: Format.describe("Format of the result."),
  table: z
    .string()
    .min(1)
    .max(63)
    .default(DEFAULT_TABLE)
    .describe('Table name of SQL output (quoted as an identifier). Default "data".'),
  source_table: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'SQL input only: which table to read from a dump holding rows of several ("users" or "public.users"). A dump with rows of more than one table and no source_table is refused with their names.',
    ),
  infer_types: z
    .boolean()
    .default(true)
    .describe(
      "Read CSV/TSV cells as typed values: empty -> null, true/false, canonical numbers (not 007 or 1.50), JSON object/array text -> nested value; SQL values of a column whose CREATE TABLE the dump holds take its declared type (as the database renders them: boolean, numeric, json, arrays; text stays text); other SQL strings holding JSON object/array text -> nested value. false: every CSV/TSV cell is a string. JSON, NDJSON and SQL numbers, booleans and NULL always keep their type (integers past 2^53 and long decimals keep their exact digits); COPY data cells are read like TSV cells, \\N as NULL; nested values are written into CSV/TSV/SQL as JSON text.",
    ),
});

const ConvertOutput = z.object({
  from: Format,
  to: Format,
  rows: z.number().int().describe("Records converted."),
  columns: z.array(z.string()).describe("Column names in first-seen order."),
  data: z.string().describe("The converted data."),
});

export const convert = defineEndpoint({
  method: "POST",
  path: "/api/data/convert",
  price: PRICES["/api/data/convert"],
  description: `Converts data between JSON, NDJSON, CSV, TSV and SQL (INSERTs; reads mysqldump and pg_dump files, one table at a time), any to any, with RFC 4180 CSV quoting, exact big integers and lossless round trips; ${CAPS} (more is a 400 too_large, never charged).`,
  input: ConvertInput,
  output: ConvertOutput,
  example: {
    input: { data: '[{"id":1,"name":"Ada, Countess"},{"id":2,"name":"Grace"}]', from: "json", to: "csv" },
    output: {
      from: "json",
      to: "csv",
      rows: 2,
      columns: ["id", "name"],
      data: 'id,name\r\n1,"Ada, Countess"\r\n2,Grace\r\n',
    },
  },
  timeoutMs: 20_000,
  // 5 MiB of data can take up to twice as many bytes once escaped inside a JSON body.
  maxBodyBytes: 2 * MAX_INPUT_BYTES + 64 * 1024,
  errors: {
    400: "Data that does not parse as its `from` format (invalid_data: the message says where), more than the row, column or byte limits (too_large), or nested too deeply (too_deep), found once the payment is verified.",
  },
  handler: async ({ data, from, to, table, source_table, infer_types }) => ({
    from,
    to,
    ...convertData(data, { from, to, table, inferTypes: infer_types, sourceTable: source_table }),
  }),
});
