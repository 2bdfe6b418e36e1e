/**
 * Is the analytics store whole? Two answers: a cheap one at every open, and a thorough one on demand
 * (`x402-merchants check`).
 *
 * What DuckDB verifies by itself (measured on 1.5.6, a store of 300,000 payments): the checksum of each block
 * it reads, when it reads it. Opening reads the headers and the catalog; `count(*)` and min/max of a column are
 * answered from metadata without reading a data block; an index (the primary keys) is read only when a write
 * or a lookup uses it. So a store whose data blocks are damaged opens, counts its rows, serves its cached
 * reports and takes new writes, until some query needs a damaged block. Its checksum is also weak: it XORs
 * one product per 64-bit word, so two equal words changed alike cancel out (writing 64 equal bytes over
 * zeros goes unnoticed).
 */

import { MIGRATIONS } from "./migrations.ts";
import type { Sql } from "./sql.ts";
import { AnalyticsDamagedError, AnalyticsVersionError, duckdbErrorType } from "./store-errors.ts";
import { verifyStoreFile, walDamage } from "./store-file.ts";

/**
 * At most this much of the store file is verified at every open: every block of a store up to this size (about
 * 450,000 payments), an even sample of this many bytes of a larger one. What an open costs with the check, in
 * process CPU (medians of 6, a shared 2-core machine): 22 MiB of 300,000 payments, 69 ms before, 109 ms with
 * every block verified; 128 MiB of 2 million payments, 70 ms before, 122 ms with a sample of 128 of its 514 blocks.
 */
export const OPEN_VERIFY_BYTES = 32 * 1024 * 1024;

/**
 * The small tables that decide what is served (versions, windows, where indexing stands): read whole at an open
 * whose file was only sampled, so that DuckDB checks their blocks.
 */
const OPEN_READ_TABLES = ["meta", "schema_migrations", "checkpoints", "indexer_state", "report_windows"];
/** The schema version from which all of them exist. */
const OPEN_READ_SCHEMA = 2;

const LATEST_SCHEMA = Math.max(...MIGRATIONS.map((m) => m.version));

/**
 * The check of every open, run once DuckDB has the file (no other process can be writing it) and before
 * anything is written: the file's headers and length and the checksums of its blocks (all of them, or a
 * sample past `OPEN_VERIFY_BYTES`, the small tables then read whole through DuckDB), the head of its
 * write-ahead log, and a schema no newer than this program's. Throws `AnalyticsDamagedError` or
 * `AnalyticsVersionError`.
 */
export async function verifyAtOpen(analytics: Sql, maxBytes = OPEN_VERIFY_BYTES): Promise<void> {
  const { file } = analytics;
  const verdict = verifyStoreFile(file, { maxBytes });
  if (verdict.damage.length > 0) throw new AnalyticsDamagedError(file, verdict.damage.join("; "));
  const wal = walDamage(`${file}.wal`);
  if (wal) throw new AnalyticsDamagedError(file, wal);
  const schema = await schemaVersion(analytics);
  if (schema > LATEST_SCHEMA) {
    throw new AnalyticsVersionError(
      `the analytics store ${file} has schema version ${schema}, written by a newer x402-merchants (this one knows versions up to ${LATEST_SCHEMA}): run that version, or give this one another data directory (--data DIR)`,
    );
  }
  if ((verdict.skipped || verdict.blocksVerified < verdict.blocksInUse) && schema >= OPEN_READ_SCHEMA) {
    await analytics.all(OPEN_READ_TABLES.map((t) => `(${readWholeSql(t)})`).join(" UNION ALL "));
  }
}

async function tableNames(analytics: Sql): Promise<Set<string>> {
  const rows = await analytics.all<{ name: string }>(
    "SELECT table_name AS name FROM duckdb_tables() WHERE database_name = current_database() AND NOT temporary",
  );
  return new Set(rows.map((r) => r.name));
}

/**
 * SQL reading every column of every row of `table` (the row as one value, hashed), so that DuckDB reads and
 * checks every block of its data; one row: the table's name and its row count.
 */
function readWholeSql(table: string): string {
  const name = table.replaceAll('"', '""');
  return `SELECT '${table.replaceAll("'", "''")}' AS name, count(*) AS n, bit_xor(hash(t)) AS h FROM "${name}" AS t`;
}

async function readWhole(analytics: Sql, table: string): Promise<bigint> {
  const row = await analytics.one<{ n: bigint }>(readWholeSql(table));
  return row?.n ?? 0n;
}

/** The latest migration applied; 0 in a new store (no table yet: DuckDB's catalog says so, by its error's type). */
async function schemaVersion(analytics: Sql): Promise<number> {
  try {
    const row = await analytics.one<{ v: number | null }>("SELECT max(version) AS v FROM schema_migrations");
    return row?.v ?? 0;
  } catch (error) {
    if (duckdbErrorType(error) === "Catalog") return 0;
    throw error;
  }
}

/**
 * What a failed line of the thorough check means: the bytes are damaged; the store is another version's; or it
 * reads whole but its data breaks an invariant the writers keep.
 */
export type Problem = "damage" | "version" | "data";

/** One line of the thorough check: what was checked, and what it found. */
export interface CheckLine {
  ok: boolean;
  subject: string;
  text: string;
  /** Set when not ok. */
  problem?: Problem;
}

const fine = (subject: string, text: string): CheckLine => ({ ok: true, subject, text });
const failed = (problem: Problem, subject: string, text: string): CheckLine => ({
  ok: false,
  subject,
  text,
  problem,
});

/**
 * The thorough check's look at the file itself: its headers, length and the checksum of every block in use,
 * and the head of its write-ahead log. Run it while holding the store (opened read-only): a writer in another
 * process could be halfway through a checkpoint.
 */
export function checkFile(file: string): CheckLine[] {
  const verdict = verifyStoreFile(file);
  const wal = walDamage(`${file}.wal`);
  return [
    verdict.skipped
      ? fine("file", `not verified block by block: ${verdict.skipped} is not a layout this program reads`)
      : verdict.damage.length > 0
        ? failed("damage", "file", verdict.damage.join("; "))
        : fine(
            "file",
            `${mib(verdict.size)}; its headers and all ${verdict.blocksVerified} blocks in use pass their checksums`,
          ),
    wal
      ? failed("damage", "write-ahead log", wal)
      : fine("write-ahead log", "none, or one that starts as DuckDB writes it"),
  ];
}

/**
 * The thorough check of what an opened store holds (it writes nothing): every table read whole through DuckDB,
 * so that every block of table data is read and its checksum checked, then the schema and the project's
 * invariants. Damage that stops a read is a line, not an exception: the rest is still checked. Any other
 * failure (out of memory, a bug) is thrown: a check that did not run is not a finding.
 */
export async function checkContents(analytics: Sql): Promise<CheckLine[]> {
  const lines: CheckLine[] = [];
  const tables = [...(await tableNames(analytics))].sort();
  const rows = new Map<string, bigint>();
  for (const table of tables) {
    try {
      rows.set(table, await readWhole(analytics, table));
    } catch (error) {
      lines.push(failed("damage", table, `cannot be read: ${damageOf(error)}`));
    }
  }
  const counts = [...rows].map(([t, n]) => `${t} ${n.toLocaleString("en-US")}`);
  const summary = `${rows.size} of ${tables.length} read whole (rows: ${counts.join(", ")})`;
  lines.push(rows.size === tables.length ? fine("tables", summary) : failed("damage", "tables", summary));
  if (rows.has("schema_migrations")) lines.push(await checkSchema(analytics));
  for (const invariant of INVARIANTS) {
    if (!invariant.tables.every((t) => rows.has(t))) continue;
    try {
      const found = await analytics.one<{ n: bigint | number; example: string | null }>(invariant.sql);
      const n = BigInt(found?.n ?? 0);
      lines.push(
        n === 0n
          ? fine(invariant.subject, invariant.holds)
          : failed("data", invariant.subject, invariant.broken(n, found?.example ?? null)),
      );
    } catch (error) {
      lines.push(failed("damage", invariant.subject, `cannot be checked: ${damageOf(error)}`));
    }
  }
  return lines;
}

/** The migrations applied: 1 to k, each once; k behind this program's is fine (the next open migrates). */
async function checkSchema(analytics: Sql): Promise<CheckLine> {
  const row = await analytics.one<{ n: bigint; low: number | null; high: number | null; distinct: bigint }>(
    "SELECT count(*) AS n, min(version) AS low, max(version) AS high, count(DISTINCT version) AS distinct FROM schema_migrations",
  );
  const { n = 0n, low = null, high = null, distinct = 0n } = row ?? {};
  if (high === null) return failed("data", "schema", "no migration recorded");
  if (high > LATEST_SCHEMA) {
    return failed(
      "version",
      "schema",
      `version ${high}, written by a newer x402-merchants (this one knows versions up to ${LATEST_SCHEMA})`,
    );
  }
  if (low !== 1 || n !== distinct || BigInt(high) !== distinct) {
    return failed(
      "data",
      "schema",
      `migrations ${low} to ${high} recorded ${n} times in all: some missing or repeated`,
    );
  }
  return fine(
    "schema",
    high === LATEST_SCHEMA
      ? `version ${high}, this program's`
      : `version ${high}; the next command that opens it migrates it to ${LATEST_SCHEMA}`,
  );
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
/** What damage stopped a read; any other failure is thrown on. */
function damageOf(error: unknown): string {
  if (error instanceof AnalyticsDamagedError) return error.damage;
  throw error;
}

interface Invariant {
  subject: string;
  /** Tables it reads: it is skipped unless all were read whole. */
  tables: string[];
  /** One row: `n`, how many things break it (0 when it holds), and `example`, one of them. */
  sql: string;
  holds: string;
  broken: (n: bigint, example: string | null) => string;
}

const eg = (example: string | null) => (example ? `, e.g. ${example}` : "");

const ONCHAIN_TABLES = ["payments", "transfers", "facilitator_candidates", "channel_events"];

/** Times stated for a block anywhere: one block has one time. */
const BLOCK_TIMES = ONCHAIN_TABLES.concat("checkpoints", "indexer_blocks", "indexer_state")
  .map((t) => `SELECT chain, block_number, block_time FROM ${t}`)
  .join(" UNION ");

const INVARIANTS: readonly Invariant[] = [
  {
    subject: "data version",
    tables: ["meta"],
    sql: `SELECT (count(*) FILTER (WHERE key = 'data_version' AND TRY_CAST(value AS UBIGINT) IS NOT NULL) <> 1)::INT AS n,
            NULL AS example FROM meta`,
    holds: "meta.data_version is a count",
    broken: () =>
      "meta.data_version is missing or not a count: cached reports cannot tell whether they are current",
  },
  ...ONCHAIN_TABLES.map(
    (table): Invariant => ({
      subject: `${table} keys`,
      tables: [table],
      sql: `SELECT count(*) AS n, any_value(tx_hash || ' log ' || log_index) AS example FROM (
              SELECT tx_hash, log_index FROM ${table} GROUP BY chain, tx_hash, log_index HAVING count(*) > 1)`,
      holds: "no (chain, tx_hash, log_index) twice",
      broken: (n, example) => `${n} keys (chain, tx_hash, log_index) stored more than once${eg(example)}`,
    }),
  ),
  ...ONCHAIN_TABLES.map(
    (table): Invariant => ({
      subject: `${table} values`,
      tables: [table],
      sql: `SELECT count(*) AS n, any_value(tx_hash || ' log ' || log_index) AS example FROM ${table}
            WHERE amount < 0 OR log_index < 0 OR block_number < 0`,
      holds: "no negative amount, log index or block number",
      broken: (n, example) => `${n} rows with a negative amount, log index or block number${eg(example)}`,
    }),
  ),
  {
    subject: "block times",
    tables: [...ONCHAIN_TABLES, "checkpoints", "indexer_blocks", "indexer_state"],
    sql: `SELECT count(*) AS n, any_value('block ' || block_number) AS example FROM (
            SELECT chain, block_number FROM (${BLOCK_TIMES}) GROUP BY ALL HAVING count(DISTINCT block_time) > 1)`,
    holds:
      "one time per block across payments, transfers, candidates, channel events, checkpoints and the indexer's blocks",
    broken: (n, example) => `${n} blocks stated with more than one time${eg(example)}`,
  },
  {
    subject: "checkpoints",
    tables: ["checkpoints"],
    sql: `SELECT count(*) AS n, any_value('block ' || block_number) AS example FROM (
            SELECT block_number, block_time < lag(block_time) OVER (PARTITION BY chain ORDER BY block_number) AS back
            FROM checkpoints) WHERE back`,
    holds: "their times never go back as blocks go up",
    broken: (n, example) => `${n} checkpoints earlier in time than the checkpoint below them${eg(example)}`,
  },
  {
    subject: "indexer state",
    tables: ["indexer_state", "checkpoints", "indexer_blocks"],
    sql: `SELECT count(*) AS n, any_value(s.chain || ' block ' || s.block_number) AS example FROM indexer_state s
          WHERE s.start_block > s.block_number
             OR NOT EXISTS (SELECT 1 FROM checkpoints c
                            WHERE c.chain = s.chain AND c.block_number = s.block_number AND c.block_time = s.block_time)
             OR NOT EXISTS (SELECT 1 FROM indexer_blocks b
                            WHERE b.chain = s.chain AND b.block_number = s.block_number AND b.block_hash = s.block_hash)`,
    holds: "where indexing stands is a checkpoint, with its block's hash kept",
    broken: (n, example) =>
      `${n} chains whose indexer state is not a checkpoint with its hash kept (or starts above it)${eg(example)}`,
  },
  {
    subject: "cached reports",
    tables: ["reports", "report_windows", "meta", "data_writes", "data_write_folds"],
    sql: `SELECT count(*) AS n, any_value(what) AS example FROM (
            SELECT 'report of ' || address || ' in window ' || end_block || ' without its window' AS what FROM reports r
            WHERE NOT EXISTS (SELECT 1 FROM report_windows w WHERE w.chain = r.chain AND w.end_block = r.end_block)
            UNION ALL
            SELECT 'report of ' || address || ' in window ' || end_block || ' stored twice' FROM reports
            GROUP BY chain, end_block, address HAVING count(*) > 1
            UNION ALL
            -- A leaderboard page is a range of places: a gap or a repeat would hide or double a merchant.
            SELECT 'window ' || end_block || ' whose leaderboard places are not 1 to ' || count(*) FROM reports
            GROUP BY chain, end_block
            HAVING count(board_place) <> count(*) OR min(board_place) <> 1 OR max(board_place) <> count(*)
              OR count(DISTINCT board_place) <> count(*)
            UNION ALL
            SELECT 'window ' || end_block || ' built at data version ' || data_version || ', above the store''s' FROM report_windows
            WHERE data_version > coalesce((SELECT TRY_CAST(value AS BIGINT) FROM meta WHERE key = 'data_version'), 0)
                                 + (SELECT coalesce(sum(writes), 0) FROM data_write_folds)
                                 + (SELECT count(*) FROM data_writes))`,
    holds: "each in a window built at a data version the store has reached, its leaderboard places 1 to n",
    broken: (n, example) => `${n} broken${eg(example)}`,
  },
  {
    // The feed is stored beside the reports and must agree with them: an explorer adds up its rows.
    subject: "flag feed",
    tables: ["report_flags", "reports"],
    sql: `WITH reported AS (
            SELECT r.chain, r.end_block, r.address AS pay_to, k.kind,
                   json_extract_string(r.flags, '$.' || k.kind || '.tx')::HUGEINT AS tx,
                   round(json_extract_string(r.flags, '$.' || k.kind || '.usd')::DECIMAL(38, 2) * 100)::HUGEINT AS cents
            FROM reports r, unnest(json_keys(r.flags)) AS k(kind)),
          fed AS (SELECT chain, end_block, pay_to, kind, sum(tx) AS tx, sum(cents) AS cents FROM report_flags GROUP BY ALL)
          SELECT count(*) AS n, any_value(what) AS example FROM (
            SELECT 'flagged ' || f.wallet || ' at ' || f.pay_to || ' in window ' || f.end_block || ' without its report' AS what
            FROM report_flags f
            WHERE NOT EXISTS (SELECT 1 FROM reports r WHERE r.chain = f.chain AND r.end_block = f.end_block AND r.address = f.pay_to)
            UNION ALL
            SELECT kind || ' at ' || pay_to || ' in window ' || end_block || ': ' || coalesce(f.tx, 0) || ' payments and '
                   || coalesce(f.cents, 0) || ' cents in the feed, ' || coalesce(r.tx, 0) || ' and ' || coalesce(r.cents, 0) || ' in the report'
            FROM reported r FULL JOIN fed f USING (chain, end_block, pay_to, kind)
            WHERE coalesce(f.tx, 0) <> coalesce(r.tx, 0) OR coalesce(f.cents, 0) <> coalesce(r.cents, 0))`,
    holds: "each flagged wallet's row under a stored report, their payments and cents the report's flags",
    broken: (n, example) => `${n} broken${eg(example)}`,
  },
];
