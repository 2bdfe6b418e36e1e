/**
 * `x402-merchants social ...`: the social-data API's archive (src/merchants/social/providers/archive/).
 *
 * - `social import FILE.jsonl` loads X data, one archive record per line (docs/social.md), into the
 *   merchants' database. The whole file is read and checked first: a bad line stops it, naming the line,
 *   before anything is written. The import is then one transaction: a record the archive refuses (a
 *   username another user has) stops it with one line saying which, and nothing of it is written; so does
 *   a crash. Records are upserts, so importing the same file again changes nothing.
 * - `social generate --tweets N [--seed S]` writes a synthetic archive as JSON lines to stdout: the
 *   demo's data, and a corpus of any size for `bench:social`.
 */
import fs from "node:fs";
import { openDatabase } from "../common/db/index.ts";
import { UsageError } from "../common/errors.ts";
import { dataLayout } from "../config/layout.ts";
import {
  type ArchiveRecord,
  archiveLines,
  generateCorpus,
  importArchive,
} from "../merchants/social/providers/archive/index.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

export async function runSocial(args: string[], flags: Flags): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "import") return runSocialImport(rest, flags);
  if (sub === "generate") return runSocialGenerate(rest, flags);
  throw new UsageError('social takes "import FILE.jsonl" or "generate --tweets N [--seed S]"');
}

async function runSocialImport(args: string[], flags: Flags): Promise<number> {
  const [file, ...extra] = args;
  if (file === undefined || extra.length > 0) throw new UsageError("social import takes one FILE.jsonl");
  if (!fs.existsSync(file)) throw new UsageError(`no file ${file}`);
  const config = configFrom(flags);
  // The first pass only checks: nothing is written unless every line is a record.
  let checked = 0;
  for await (const _ of records(file)) checked++;
  const db = await openDatabase({
    pgliteDir: dataLayout(config.dataDir).pglite.merchants,
    databaseUrl: config.databaseUrl,
  });
  try {
    const counts = await importArchive(db, records(file));
    process.stdout.write(
      `${JSON.stringify({ file, records: checked, store: db.store, imported: counts })}\n`,
    );
    return 0;
  } finally {
    await db.close();
  }
}

/** The file's records, in order; a line that is not one throws, naming it. Blank lines are skipped. */
function records(file: string): AsyncIterable<ArchiveRecord> {
  return archiveLines(lines(file));
}

/**
 * The file's lines, read in chunks. Not `readline`: its async iterator can end the process with a line
 * still awaited when the consumer writes to a database between lines (Node exits 13, nothing said).
 */
async function* lines(file: string): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of fs.createReadStream(file)) {
    const text = rest + decoder.decode(chunk as Buffer, { stream: true });
    const parts = text.split("\n");
    rest = parts.pop() ?? "";
    for (const part of parts) yield part.endsWith("\r") ? part.slice(0, -1) : part;
  }
  rest += decoder.decode();
  if (rest !== "") yield rest;
}

async function runSocialGenerate(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("social generate takes only --tweets N and --seed S");
  const tweets = wholeNumber(flags.tweets ?? "1000", "--tweets", 1, 100_000_000);
  const seed = wholeNumber(flags.seed ?? "1", "--seed", 0, 2 ** 31 - 1);
  const out = process.stdout;
  let chunk = "";
  for (const record of generateCorpus({ tweets, seed })) {
    chunk += `${JSON.stringify(record)}\n`;
    // Written in large pieces, and paced by the pipe: a reader slower than the generator is waited for.
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise((resolve) => out.once("drain", resolve));
      chunk = "";
    }
  }
  out.write(chunk);
  return 0;
}

function wholeNumber(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max)
    throw new UsageError(`${flag} takes a whole number from ${min} to ${max}, not "${value}"`);
  return n;
}
