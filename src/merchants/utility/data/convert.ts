/**
 * `/api/data/convert`. The conversion runs in a child process (`JobProcess`, `convert-worker.ts`), not on
 * the request loop: its worst inputs (a 5 MiB SQL dump, a CSV of 1,000 columns) took 1-1.7 CPU-s there,
 * during which every host of the process, `/healthz` included, stood still (issue 69). There it is held to
 * the work budget its price buys (2 CPU-s and 200 MB per $0.001: 10 CPU-s and 1,000 MB at $0.005,
 * src/merchants/work-budget.ts): the process's whole CPU time, a wall-clock deadline, and a heap cap. Past
 * any of them it is killed and the call refused, 422 `too_complex` naming the limit, not charged.
 */
import { z } from "zod";
import { AppError, BadInputError } from "../../../common/errors.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { budgetAt, DEFAULT_WORK_BUDGET, type WorkBudget } from "../../work-budget.ts";
import { JobProcess } from "../job-process.ts";
import { JOB_CPU, JOB_DEADLINE, JOB_MEMORY, JobFailedError } from "../job-runner.ts";
import { onFirstUse } from "../lazy.ts";
import { PRICES } from "../prices.ts";
import { type ConvertResult, FORMATS, MAX_INPUT_BYTES } from "./convert-engine.ts";
import type { ConvertJob } from "./convert-worker.ts";
import { DEFAULT_TABLE } from "./sql-format.ts";
import { MAX_COLUMNS, MAX_ROWS } from "./table.ts";

const n = (x: number) => x.toLocaleString("en-US");
/** The caps a conversion reads within, stated in the description and the schema alike. */
const CAPS = `at most ${MAX_INPUT_BYTES / 1024 / 1024} MiB, ${n(MAX_ROWS)} records and ${n(MAX_COLUMNS)} columns`;

const Format = z.enum(FORMATS);

/** `data`, `from`, `to` are the documented names (docs/platform.md); `table` and `infer_types` are this service's options. */
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

const PRICE = PRICES["/api/data/convert"];

/**
 * The route's whole time, the body's read and a wait behind another conversion included: past it, a 504.
 * Longer than the deadline below and the conversion process's start (1-4 s of wall time on a busy host).
 */
const TIMEOUT_MS = 30_000;

/**
 * An idle conversion process is stopped after 10 s: its heap (what the last 5 MiB left) is the host's memory
 * only while conversions come; a fresh start costs about 0.7 CPU-s, off the loop.
 */
const IDLE_MS = 10_000;

/** Past its budget the work had run: a refusal not charged, counted against its payer as a failure is. */
const AFTER_WORK = { afterWork: true };

/** A conversion's limits, from the work budget at its price. */
interface ConvertLimits {
  /** The call's CPU budget, all processes together. */
  budgetMs: number;
  /**
   * The conversion process's share of it: the rest is the host's, reading the JSON body (up to 10 MB),
   * handing the data over and the result back (structured clones of up to 5 and 20 MB), writing the answer,
   * and the process's overshoot before the next look at its clock.
   */
  cpuMs: number;
  /**
   * Its wall-clock deadline, 2.5 times its CPU: it does not guard the budget (the process's CPU does, where
   * Linux counts it) but ends a conversion the host starves, within the route's time so that the refusal
   * names it. At 15 s, a machine at load 14 on 2 cores refused the 1,000-column CSV after 4.9 CPU-s.
   */
  deadlineMs: number;
  /**
   * Its heap cap: 60% of the memory budget, as the page readers' (pages/work.ts: V8 collects without pause
   * as it nears its cap, and the process's code and young generation come on top).
   */
  heapMb: number;
}

function limitsOf(budget: WorkBudget): ConvertLimits {
  const { cpuMs, memoryMb } = budgetAt(PRICE, budget);
  const processMs = Math.round(cpuMs * 0.9);
  return {
    budgetMs: cpuMs,
    cpuMs: processMs,
    deadlineMs: Math.round(processMs * 2.5),
    heapMb: Math.round(memoryMb * 0.6),
  };
}

/** The conversion's own refusals (its data's, 400) as the engine raised them; a budget's as a 422. */
function refusal(error: unknown, limits: ConvertLimits): unknown {
  if (!(error instanceof JobFailedError)) return error;
  if (error.code === JOB_CPU)
    return new AppError(
      422,
      "too_complex",
      `converting the data needs more than this endpoint's CPU budget of ${limits.budgetMs} ms (${limits.cpuMs} ms in the conversion's process); the call is not charged`,
      AFTER_WORK,
    );
  if (error.code === JOB_DEADLINE)
    return new AppError(
      422,
      "too_complex",
      `converting the data took longer than this endpoint's deadline of ${limits.deadlineMs} ms; the call is not charged`,
      AFTER_WORK,
    );
  if (error.code === JOB_MEMORY)
    return new AppError(
      422,
      "too_complex",
      `converting the data needs more than this endpoint's memory cap of ${limits.heapMb} MB; the call is not charged`,
      AFTER_WORK,
    );
  if (error.status === 400) return new BadInputError(error.message, error.code);
  return error;
}

/** `/api/data/convert` under `budget` per $0.001 (the operator's X402M_WORK_CPU_MS and X402M_WORK_MEMORY_MB). */
export function convertEndpoint(budget: WorkBudget = DEFAULT_WORK_BUDGET) {
  const limits = limitsOf(budget);
  const worker = onFirstUse(
    () =>
      new JobProcess<ConvertJob, ConvertResult>(new URL("./convert-worker.ts", import.meta.url), {
        maxOldSpaceMb: limits.heapMb,
        idleMs: IDLE_MS,
      }),
  );
  return defineEndpoint({
    method: "POST",
    path: "/api/data/convert",
    price: PRICE,
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
    timeoutMs: TIMEOUT_MS,
    // 5 MiB of data can take up to twice as many bytes once escaped inside a JSON body.
    maxBodyBytes: 2 * MAX_INPUT_BYTES + 64 * 1024,
    errors: {
      400: "Data that does not parse as its `from` format (invalid_data: the message says where), more than the row, column or byte limits (too_large), or nested too deeply (too_deep), found once the payment is verified.",
      422: `Converting the data would take more than the call's CPU budget (${limits.budgetMs / 1000} CPU-s), its deadline or its memory cap (too_complex; the message names the limit); not charged.`,
    },
    handler: async ({ data, from, to, table, source_table, infer_types }, ctx) => {
      const job = { data, options: { from, to, table, inferTypes: infer_types, sourceTable: source_table } };
      try {
        const result = await worker().run(job, ctx.signal, {
          cpuMs: limits.cpuMs,
          deadlineMs: limits.deadlineMs,
        });
        return { from, to, ...result };
      } catch (error) {
        throw refusal(error, limits);
      }
    },
  });
}

/** The endpoint at the default work budget. */
export const convert = convertEndpoint();
