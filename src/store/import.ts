import fs from "node:fs";
import readline from "node:readline";
import { BASE_USDC } from "../chain/base.ts";
import type { Store } from "./duckdb.ts";
import { bumpDataVersion } from "./migrations.ts";
import { RAW_FIELDS, type RecordType, reasonExpression } from "./rules.ts";

/** The file cannot be imported; `line` is 1-based when the fault is in one line. Nothing was kept. */
export class ImportError extends Error {
  override name = "ImportError";
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(line === undefined ? message : `line ${line}: ${message}`);
  }
}

export type ImportCounts = Record<RecordType, { read: number; added: number }>;

/**
 * Imports an NDJSON file of payments, transfers, listings, merchants and checkpoints, all or nothing.
 *
 * DuckDB parses the file (in parallel, far faster than JSON.parse) into a staging table with every
 * field as VARCHAR; the rules in `rules.ts` are checked in SQL; only a file with no bad line is merged,
 * in one transaction. Payments and transfers are keyed by (chain, tx_hash, log_index): a row already
 * in the store is kept as it is, so importing the same file twice adds nothing.
 *
 * @example
 *   const counts = await importNdjson(store, "week.ndjson");
 */
export async function importNdjson(store: Store, file: string): Promise<ImportCounts> {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    if (!fs.statSync(file).isFile()) throw new Error("not a file");
  } catch (error) {
    throw new ImportError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    await stage(store, file);
    const duplicated = await check(store, file);
    return await store.transaction(() => merge(store, duplicated));
  } finally {
    for (const t of ["import_raw", "import_merchants"]) await store.run(`DROP TABLE IF EXISTS temp.${t}`);
  }
}

/** Parses the file and validates every record in the same parallel pass: `reason` is NULL on a good record. */
async function stage(store: Store, file: string): Promise<void> {
  const columns = RAW_FIELDS.map((f) => `'${f}': 'VARCHAR'`).join(", ");
  const literal = `'${file.replaceAll("'", "''")}'`;
  try {
    // Insertion order is preserved, so rowid + 1 is the record's ordinal among the non-blank lines.
    await store.run(
      `CREATE TEMP TABLE import_raw AS SELECT ${reasonExpression()} AS reason, *
       FROM read_json(${literal}, format = 'newline_delimited', columns = {${columns}})`,
    );
  } catch (error) {
    // DuckDB's own line numbers skip blank lines; find the exact line and JSON.parse's reason instead.
    const bad = await firstUnparsableLine(file);
    if (bad) throw new ImportError(bad.reason, bad.line);
    throw new ImportError(`not valid NDJSON: ${(error as Error).message.split("\n")[0]}`);
  }
}

const time = (f: string) =>
  `CASE WHEN regexp_full_match("${f}", '\\d+') THEN to_timestamp("${f}"::BIGINT)::TIMESTAMP ELSE "${f}"::TIMESTAMPTZ::TIMESTAMP END`;

/** The typed rows of the staged on-chain records, in the column order of their store tables. */
const TYPED = {
  payments: `SELECT rowid + 1 AS record, 'base' AS chain, lower(tx_hash) AS tx_hash, log_index::INTEGER AS log_index,
      block_number::BIGINT AS block_number, ${time("block_time")} AS block_time, lower(facilitator) AS facilitator,
      lower(payer) AS payer, lower(pay_to) AS pay_to, amount::BIGINT AS amount, coalesce(lower(asset), '${BASE_USDC}') AS asset
    FROM import_raw WHERE type = 'payment'`,
  transfers: `SELECT rowid + 1 AS record, 'base' AS chain, lower(tx_hash) AS tx_hash, log_index::INTEGER AS log_index,
      block_number::BIGINT AS block_number, ${time("block_time")} AS block_time,
      lower("from") AS from_address, lower("to") AS to_address, amount::BIGINT AS amount
    FROM import_raw WHERE type = 'transfer'`,
} as const;
type OnChain = keyof typeof TYPED;

/** Stops at the first bad record; returns the on-chain tables whose records repeat a key within the file. */
async function check(store: Store, file: string): Promise<Set<OnChain>> {
  const bad = await store.one<{ record: bigint; reason: string }>(
    "SELECT rowid + 1 AS record, reason FROM import_raw WHERE reason IS NOT NULL ORDER BY rowid LIMIT 1",
  );
  if (bad) throw new ImportError(bad.reason, await lineOfRecord(file, Number(bad.record)));

  const duplicated = new Set<OnChain>();
  const counts = await store.one<Record<string, bigint>>(`SELECT
    count(*) FILTER (type = 'payment') AS payments_n,
    count(DISTINCT hash(lower(tx_hash), log_index::INTEGER)) FILTER (type = 'payment') AS payments_k,
    count(*) FILTER (type = 'transfer') AS transfers_n,
    count(DISTINCT hash(lower(tx_hash), log_index::INTEGER)) FILTER (type = 'transfer') AS transfers_k
    FROM import_raw`);
  for (const [table, label] of [
    ["payments", "payment"],
    ["transfers", "transfer"],
  ] as const) {
    if (counts?.[`${table}_n`] === counts?.[`${table}_k`]) continue;
    duplicated.add(table);
    const conflict = await conflictingDuplicate(store, table);
    if (conflict) {
      throw new ImportError(
        `${label} ${conflict.tx_hash} log ${conflict.log_index} appears earlier in the file with different fields`,
        await lineOfRecord(file, Number(conflict.record)),
      );
    }
  }
  return duplicated;
}

/**
 * The same (tx_hash, log_index) twice in one file is fine when the lines agree (they are one row) and
 * an error when they differ. Counting distinct key hashes first is cheap; this exact search runs only
 * when that count shows repeats (or a hash collision).
 */
async function conflictingDuplicate(
  store: Store,
  table: OnChain,
): Promise<{ record: bigint; tx_hash: string; log_index: number } | undefined> {
  const fields =
    table === "payments"
      ? "block_number, block_time, facilitator, payer, pay_to, amount, asset"
      : "block_number, block_time, from_address, to_address, amount";
  return store.one(`
    SELECT list(record ORDER BY record)[2] AS record, tx_hash, log_index FROM (${TYPED[table]})
    GROUP BY tx_hash, log_index HAVING count(DISTINCT (${fields})) > 1 ORDER BY record LIMIT 1`);
}

async function merge(store: Store, duplicated: Set<OnChain>): Promise<ImportCounts> {
  const counts = {} as ImportCounts;
  const read = await store.all<{ type: RecordType; n: bigint }>(
    "SELECT type, count(*) AS n FROM import_raw GROUP BY type",
  );
  for (const t of ["payment", "transfer", "listing", "merchant", "checkpoint"] as const) {
    counts[t] = { read: Number(read.find((r) => r.type === t)?.n ?? 0n), added: 0 };
  }

  for (const [table, type] of [
    ["payments", "payment"],
    ["transfers", "transfer"],
  ] as const) {
    if (counts[type].read === 0) continue;
    const before = await countRows(store, table);
    const staged = `SELECT ${duplicated.has(table) ? "DISTINCT" : ""} COLUMNS(* EXCLUDE (record)) FROM (${TYPED[table]})`;
    // Existing rows of the same blocks are the only ones that can collide; when there are none (a
    // fresh range, the common case) the rows go in without the anti-join.
    const range = await store.one<{ lo: bigint; hi: bigint }>(
      `SELECT min(block_number::BIGINT) AS lo, max(block_number::BIGINT) AS hi FROM import_raw WHERE type = '${type}'`,
    );
    const overlap = await store.one(`SELECT 1 FROM ${table} WHERE block_number BETWEEN $lo AND $hi LIMIT 1`, {
      lo: range?.lo ?? 0n,
      hi: range?.hi ?? 0n,
    });
    await store.run(
      overlap
        ? `INSERT INTO ${table} SELECT * FROM (${staged}) s WHERE NOT EXISTS (
            SELECT 1 FROM ${table} t WHERE t.chain = s.chain AND t.tx_hash = s.tx_hash AND t.log_index = s.log_index
              AND t.block_number BETWEEN $lo AND $hi)`
        : `INSERT INTO ${table} ${staged}`,
      overlap ? { lo: range?.lo ?? 0n, hi: range?.hi ?? 0n } : undefined,
    );
    counts[type].added = (await countRows(store, table)) - before;
  }

  // Last line wins for listings, merchants and checkpoints: they describe current state.
  const beforeListings = await countRows(store, "listings");
  await store.run(`INSERT OR REPLACE INTO listings
    SELECT lower(pay_to), resource, coalesce(upper(method), ''), price_usd::DOUBLE, description
    FROM import_raw WHERE type = 'listing'
    QUALIFY row_number() OVER (PARTITION BY lower(pay_to), resource, coalesce(upper(method), '') ORDER BY rowid DESC) = 1`);
  counts.listing.added = (await countRows(store, "listings")) - beforeListings;

  // A merchant line changes only the fields it carries.
  await store.run(`CREATE TEMP TABLE import_merchants AS
    SELECT lower(address) AS address, name, claimed::BOOLEAN AS claimed, frozen::BOOLEAN AS frozen
    FROM import_raw WHERE type = 'merchant'
    QUALIFY row_number() OVER (PARTITION BY lower(address) ORDER BY rowid DESC) = 1`);
  await store.run(`UPDATE merchants m SET
      name = coalesce(i.name, m.name), claimed = coalesce(i.claimed, m.claimed), frozen = coalesce(i.frozen, m.frozen)
    FROM import_merchants i WHERE i.address = m.address`);
  const beforeMerchants = await countRows(store, "merchants");
  await store.run(`INSERT INTO merchants
    SELECT address, name, coalesce(claimed, false), coalesce(frozen, false) FROM import_merchants
    WHERE address NOT IN (SELECT address FROM merchants)`);
  counts.merchant.added = (await countRows(store, "merchants")) - beforeMerchants;
  // Every wallet that is paid or lists an endpoint is a merchant the service reports on.
  await store.run(`INSERT INTO merchants (address)
    SELECT DISTINCT lower(pay_to) AS address FROM import_raw WHERE type IN ('payment', 'listing')
    AND lower(pay_to) NOT IN (SELECT address FROM merchants)`);

  const beforeCheckpoints = await countRows(store, "checkpoints");
  await store.run(`INSERT OR REPLACE INTO checkpoints
    SELECT 'base', block_number::BIGINT, ${time("block_time")}
    FROM import_raw WHERE type = 'checkpoint'
    QUALIFY row_number() OVER (PARTITION BY block_number::BIGINT ORDER BY rowid DESC) = 1`);
  counts.checkpoint.added = (await countRows(store, "checkpoints")) - beforeCheckpoints;

  await bumpDataVersion(store);
  return counts;
}

async function countRows(store: Store, table: string): Promise<number> {
  const row = await store.one<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`);
  return Number(row?.n ?? 0n);
}

/** DuckDB skips blank lines, so record k is the k-th line that holds more than white space. */
async function lineOfRecord(file: string, record: number): Promise<number | undefined> {
  let line = 0;
  let seen = 0;
  for await (const text of lines(file)) {
    line++;
    if (text.trim() !== "" && ++seen === record) return line;
  }
  return undefined;
}

async function firstUnparsableLine(file: string): Promise<{ line: number; reason: string } | undefined> {
  let line = 0;
  for await (const text of lines(file)) {
    line++;
    if (text.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return { line, reason: `not valid JSON (${(error as Error).message})` };
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { line, reason: "expected a JSON object" };
    }
  }
  return undefined;
}

function lines(file: string): AsyncIterable<string> {
  return readline.createInterface({
    input: fs.createReadStream(file, { encoding: "utf8" }),
    crlfDelay: Infinity,
  });
}
