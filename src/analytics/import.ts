import { isUtf8 } from "node:buffer";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { pipeline } from "node:stream/promises";
import { BlockClock } from "../chain/block-clock.ts";
import type { AnyChainRecord } from "../chain/chains.ts";
import { AppError } from "../common/errors.ts";
import type { Analytics } from "./duckdb.ts";
import { chainMismatch, chainRecord, sqlStampedBreach, sqlUsdcOf, stampedReason } from "./import-chain.ts";
import { CHANNEL_STAGING, channelProblem, mergeChannels, stageChannels } from "./import-channels.ts";
import { settleEscrowTransfers } from "./import-escrow.ts";
import {
  PAYMENT_ADDRESS_FIELDS,
  PAYMENT_ROW_RULES,
  RAW_FIELDS,
  RECORD_TYPES,
  type RecordType,
  reasonExpression,
  SQL_ESCROW_WALLETS,
  sqlDiffer,
  sqlDifferences,
  sqlIsAddress,
  sqlStoreForm,
  sqlTime as time,
} from "./import-rules.ts";
import { bumpDataVersion } from "./migrations.ts";
import { paymentsWritten } from "./payment-days.ts";
import { sqlHost } from "./sql-host.ts";

/**
 * The file cannot be imported, in one line: `FILE:LINE: reason` (`FILE: reason` when the fault is not in
 * one line), as compilers and grep write it. `line` is 1-based and counts every line of the file, blank
 * ones too, as a text editor does. Nothing was kept.
 */
export class ImportError extends AppError {
  constructor(
    readonly reason: string,
    readonly file: string,
    readonly line?: number,
  ) {
    super(400, "import_refused", `${file}${line === undefined ? "" : `:${line}`}: ${reason}`);
  }
}

export type ImportCounts = Record<RecordType, { read: number; added: number }>;

/**
 * Imports an NDJSON file of payments, transfers, listings, merchants, checkpoints, balances, hub labels
 * and batch-settlement channels (their events make their claims and moves: `import-channels.ts`), all or nothing.
 *
 * DuckDB parses the file (in parallel, far faster than JSON.parse); the rules in `import-rules.ts` are
 * checked in SQL; only a file with no bad line is kept, in one transaction. Payments and transfers are
 * keyed by (chain, tx_hash, log_index): a line that repeats a row of the analytics database adds nothing, so
 * importing the same file twice adds nothing, and one that contradicts it is a bad line (`storedContradiction`). Block times must follow Base's clock (`BlockClock`, as the indexer's) among
 * the file's blocks and the blocks already stored: one time per block, 2 s more per block, and since Denim
 * a second more every five blocks.
 *
 * Two ways, one result. The bulk way, for the common case of new blocks, stages only the records that
 * are not payments and inserts the payments straight from the file, checked by the same rules as they
 * go (a staged copy of ten million payments costs more than everything else). When it meets anything
 * else (a bad line, a key seen twice, blocks the analytics database already holds, a key it holds in other blocks,
 * a staged record it holds otherwise, a channel problem), it rolls back and the exact way
 * runs: every record staged with its ordinal, so errors name their line and repeats are merged. The
 * ordinal is `row_number() OVER ()` over the file, the one order DuckDB guarantees for a parallel read:
 * the rowid of a table filled from it is not (on a 400,000-line file it named a line up to 180,000 away,
 * another one on each run, and let an earlier listing line win over a later one).
 *
 * @example
 *   const counts = await importNdjson(analytics, "week.ndjson");
 */
export async function importNdjson(analytics: Analytics, file: string): Promise<ImportCounts> {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    if (!fs.statSync(file).isFile()) throw new Error("not a file");
  } catch (error) {
    throw new ImportError(`cannot read it (${(error as Error).message})`, file);
  }
  // An export that failed often leaves an empty file; importing it would report success and add nothing.
  if (blank(file)) throw new ImportError("it holds no records (the file is empty)", file);
  const input = await readable(analytics, file);
  try {
    const counts = await bulkImport(analytics, input);
    if (counts) return counts;
    await stage(analytics, input);
    const { duplicated, chain } = await check(analytics, input);
    return await analytics.transaction(() => merge(analytics, duplicated, chain));
  } finally {
    for (const t of ["import_raw", "import_merchants", ...CHANNEL_STAGING])
      await analytics.run(`DROP TABLE IF EXISTS temp.${t}`);
    input.remove();
  }
}

/** Whether the file holds only white space (read only when it is small: a big file holds something). */
function blank(file: string): boolean {
  const size = fs.statSync(file).size;
  return (
    size <= 4096 &&
    fs
      .readFileSync(file, "utf8")
      .trim()
      .replace(/^\uFEFF/, "") === ""
  );
}

/** The file named in messages, and the path its lines are read from (the same unless it has a BOM). */
interface Input {
  file: string;
  path: string;
  remove(): void;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The file as DuckDB can read it. A UTF-8 byte-order mark at its start (Windows tools write one) is valid
 * input, but DuckDB's NDJSON reader refuses it; such a file is read from a copy without those three
 * bytes, in the data directory (a copy costs a second of disk per few hundred MB, only for such files).
 * The mark is not a line, so every line keeps its number.
 */
async function readable(analytics: Analytics, file: string): Promise<Input> {
  const head = Buffer.alloc(UTF8_BOM.length);
  const fd = fs.openSync(file, "r");
  let read: number;
  try {
    read = fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (read < head.length || !head.equals(UTF8_BOM)) return { file, path: file, remove: () => {} };
  const dir = fs.mkdtempSync(path.join(analytics.dataDir, "import-"));
  const copy = path.join(dir, "without-bom.ndjson");
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    await pipeline(fs.createReadStream(file, { start: UTF8_BOM.length }), fs.createWriteStream(copy));
  } catch (error) {
    remove();
    throw new ImportError(`cannot copy it without its byte-order mark (${(error as Error).message})`, file);
  }
  return { file, path: copy, remove };
}

/** The longest line a record may be, in bytes: DuckDB's default `maximum_object_size`, said here to name it. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * The path DuckDB is given for the file: absolute, so that no leading `~` or `s3://` reads as anything but a
 * local path, and with glob characters escaped (`[*]`), since DuckDB reads a path as a glob: `week*.ndjson`
 * would read `week2.ndjson` beside it too, and `[a]b.ndjson` would read `ab.ndjson` instead.
 */
const literalPath = (file: string) => path.resolve(file).replace(/[*?[]/g, (c) => `[${c}]`);

/** The file as DuckDB reads it: every field as VARCHAR, so that DuckDB never guesses a type. */
function source(input: Input): string {
  const columns = RAW_FIELDS.map((f) => `'${f}': 'VARCHAR'`).join(", ");
  return `read_json('${literalPath(input.path).replaceAll("'", "''")}', format = 'newline_delimited',
    maximum_object_size = ${MAX_LINE_BYTES}, columns = {${columns}})`;
}

/** Every record of the file, numbered: `record` is k for the k-th line that holds more than white space. */
const numbered = (input: Input) => `(SELECT row_number() OVER () AS record, * FROM ${source(input)})`;

/** The records besides payments that carry a block time, which must follow the clock. */
const STAGED_BLOCKS = "('transfer', 'checkpoint', 'channel_event')";

/** Thrown inside the bulk way's transaction to roll it back and take the exact way. */
class NeedsExactImport extends Error {}

/**
 * The bulk way (see `importNdjson`); undefined when the file needs the exact way, with nothing kept.
 * The payments' rules are one condition here: a payment that breaks one stops the insert (`error`),
 * and the exact way then finds the first bad line and its reason.
 */
async function bulkImport(analytics: Analytics, input: Input): Promise<ImportCounts | undefined> {
  const raw = source(input);
  try {
    return await analytics.transaction(async () => {
      // Read before the insert: the new rows must not be their own anchor.
      const anchors = await storedAnchors(analytics);
      await analytics.run(
        `CREATE TEMP TABLE import_raw AS SELECT ${reasonExpression()} AS reason, *
         FROM ${numbered(input)} WHERE "type" IS DISTINCT FROM 'payment'`,
      );
      const staged = await analytics.one<{ bad: bigint; n: bigint; k: bigint; bn: bigint; bk: bigint }>(
        `SELECT count(reason) AS bad, count(*) FILTER (type = 'transfer') AS n,
           count(DISTINCT (${sqlStoreForm("tx_hash")}, try_cast(log_index AS INTEGER))) FILTER (type = 'transfer') AS k,
           count(*) FILTER (type = 'balance') AS bn,
           count(DISTINCT (${sqlStoreForm("wallet")}, try_cast(block_number AS BIGINT))) FILTER (type = 'balance') AS bk
         FROM import_raw`,
      );
      if (staged?.bad !== 0n || staged.n !== staged.k || staged.bn !== staged.bk)
        throw new NeedsExactImport();
      // Blocks the analytics database already holds (of any chain) take the exact way, which leaves their
      // payments as they are. The new rows are then the file's blocks; in an empty analytics database, the whole
      // table.
      let fresh = "";
      let range: { lo: bigint; hi: bigint } | undefined;
      const storedPayments = await analytics.one<{ hi: bigint | null }>(
        "SELECT max(block_number) AS hi FROM payments",
      );
      if (storedPayments?.hi != null) {
        const r = await analytics.one<{ lo: bigint | null; hi: bigint | null }>(
          `SELECT min(try_cast(block_number AS BIGINT)) AS lo, max(try_cast(block_number AS BIGINT)) AS hi
           FROM ${raw} WHERE "type" = 'payment'`,
        );
        range = { lo: r?.lo ?? 1n, hi: r?.hi ?? 0n };
        if (await overlaps(analytics, "payments", range.lo, range.hi)) throw new NeedsExactImport();
        fresh = "WHERE block_number BETWEEN $lo AND $hi";
      }
      const before = await countRows(analytics, "payments");
      await analytics.run(
        `INSERT INTO payments SELECT COLUMNS(* EXCLUDE (record)) FROM (${typed(
          "payments",
          // One CASE: DuckDB may reorder the conjuncts of a WHERE, and the rules hold only for payments.
          `(SELECT * FROM ${raw} WHERE CASE WHEN "type" IS DISTINCT FROM 'payment' THEN false
            WHEN ${PAYMENT_ROW_RULES} THEN true ELSE error('a payment breaks a rule') END)`,
        )})`,
      );
      const added = (await countRows(analytics, "payments")) - before;
      const distinct = PAYMENT_ADDRESS_FIELDS.map(
        (f) => `SELECT DISTINCT chain, ${f} AS v FROM payments ${fresh}`,
      );
      // A payment of the escrow's too (its rule is a payer's or payee's, the exact way tells which).
      const badAddress = await analytics.one(
        `SELECT 1 FROM (${distinct.join(" UNION ")})
         WHERE NOT coalesce(${sqlIsAddress("v", "chain")}, false) OR v IN ${SQL_ESCROW_WALLETS} LIMIT 1`,
        range,
      );
      // A key twice (or a hash collision): the exact way decides whether the lines agree. Sorting the
      // keys' hashes is twice as fast as counting distinct ones.
      const repeated = await analytics.one(
        `SELECT 1 FROM (SELECT h, lag(h) OVER (ORDER BY h) AS previous FROM (
           SELECT hash(tx_hash, log_index) AS h FROM payments ${fresh})) WHERE h = previous LIMIT 1`,
        range,
      );
      // A key the analytics database holds in another block: the exact way says what differs. New blocks
      // cannot hold a stored row (the overlap above), so only a row outside them can share a new row's key.
      const restated =
        fresh &&
        (await analytics.one(
          `SELECT 1 FROM payments s SEMI JOIN (SELECT chain, tx_hash, log_index FROM payments ${fresh}) n
             USING (chain, tx_hash, log_index)
           WHERE s.block_number NOT BETWEEN $lo AND $hi LIMIT 1`,
          range,
        ));
      if (badAddress || repeated || restated) throw new NeedsExactImport();
      // One chain a file (import-chain.ts): any other, and the exact way names the line.
      const slugs = await analytics.all<{ chain: string }>(
        `SELECT DISTINCT chain FROM (SELECT chain FROM payments ${fresh}
           UNION ALL SELECT lower(chain) FROM import_raw WHERE chain IS NOT NULL)`,
        range,
      );
      if (slugs.length > 1) throw new NeedsExactImport();
      const chain = chainRecord(slugs[0]?.chain);
      // The staged records against the store and each other: any problem, and the exact way names the line.
      if (await storedContradiction(analytics, chain)) throw new NeedsExactImport();
      await stageChannels(analytics);
      if (await channelProblem(analytics, chain)) throw new NeedsExactImport();
      // A payment line on a stored event's log (channelProblem sees the staged records, the file's payments
      // are not among them): the events are the build side, few beside the payments.
      const onEventLog = await analytics.one(
        `SELECT 1 FROM (SELECT chain, tx_hash, log_index FROM payments ${fresh}) p
         SEMI JOIN channel_events e ON e.chain = p.chain AND e.tx_hash = p.tx_hash AND e.log_index = p.log_index LIMIT 1`,
        range,
      );
      if (onEventLog) throw new NeedsExactImport();
      if (await offTheClock(analytics, chain, anchors.get(chain.slug), fresh, range))
        throw new NeedsExactImport();
      const counts = await merge(
        analytics,
        new Set(),
        chain,
        added > 0 ? (range ?? (await blockSpan(analytics))) : undefined,
      );
      if (added > 0) await sealImported(analytics, range ?? (await blockSpan(analytics)), chain);
      // Every paid wallet is a merchant the service reports on (merge added those of the staged records).
      await analytics.run(
        `INSERT INTO merchants (address) SELECT DISTINCT pay_to FROM payments ${fresh}
         ${fresh ? "AND" : "WHERE"} pay_to NOT IN (SELECT address FROM merchants)`,
        range,
      );
      await analytics.run(
        `INSERT OR IGNORE INTO merchant_chains SELECT DISTINCT pay_to, chain FROM payments ${fresh}`,
        range,
      );
      counts.payment = { read: added, added };
      return counts;
    });
  } catch {
    // A broken payment, a line DuckDB cannot parse, a repeat or an overlap: the exact way says what.
    return undefined;
  } finally {
    await analytics.run("DROP TABLE IF EXISTS temp.import_raw");
  }
}

/**
 * The bulk way's block times against the chain's clock: a stamped chain's order among the new and staged blocks,
 * else any time off the clock of a stored block (of a new one where none is stored). True: the exact way names
 * the line.
 */
async function offTheClock(
  analytics: Analytics,
  chain: AnyChainRecord,
  stored: Anchor | undefined,
  fresh: string,
  range: { lo: bigint; hi: bigint } | undefined,
): Promise<boolean> {
  if (chain.clock.kind === "stamped") {
    const breach = await analytics.one(
      sqlStampedBreach(
        `SELECT 0 AS record, block_number AS block, epoch_us(block_time) AS us FROM payments ${fresh}
         UNION ALL SELECT record, block_number::BIGINT, epoch_us(${time("block_time")}) FROM import_raw
         WHERE type IN ${STAGED_BLOCKS}`,
        chain,
      ),
      range,
    );
    if (breach) return true;
  }
  // Any block time off the clock of a stored block (else of any new one): the exact way names the line.
  const anchor =
    chain.clock.kind === "stamped"
      ? undefined
      : (stored ??
        (await analytics.one<Anchor>(
          `SELECT block_number AS block, epoch_us(block_time) AS us FROM payments ${fresh} LIMIT 1`,
          range,
        )) ??
        (await analytics.one<Anchor>(
          `SELECT block_number::BIGINT AS block, epoch_us(${time("block_time")}) AS us FROM import_raw
       WHERE type IN ${STAGED_BLOCKS} LIMIT 1`,
        )));
  if (anchor) {
    const clock = clockOf(anchor);
    const offPayment = await analytics.one(
      `SELECT 1 FROM payments ${fresh} ${fresh ? "AND" : "WHERE"} ${offClock(clock, "block_number", "block_time")} LIMIT 1`,
      range,
    );
    const offStaged = await analytics.one(
      `SELECT 1 FROM import_raw WHERE type IN ${STAGED_BLOCKS}
       AND ${offClock(clock, "block_number::BIGINT", time("block_time"))} LIMIT 1`,
    );
    if (offPayment || offStaged) return true;
  }
  return false;
}

/** The report's day groups after an import added payments of blocks `lo`..`hi`, up to the latest checkpoint's day. */
async function sealImported(
  analytics: Analytics,
  blocks: { lo: bigint; hi: bigint },
  chain: AnyChainRecord,
): Promise<void> {
  const latest = await analytics.one<{ t: bigint | null }>(
    "SELECT epoch(max(block_time))::BIGINT AS t FROM checkpoints WHERE chain = $chain",
    { chain: chain.slug },
  );
  await paymentsWritten(analytics, chain, blocks, {
    until: latest?.t == null ? undefined : Number(latest.t),
  });
}

/** The blocks of the payments table (just filled by the bulk way in an empty analytics database). */
async function blockSpan(analytics: Analytics): Promise<{ lo: bigint; hi: bigint }> {
  const r = await analytics.one<{ lo: bigint | null; hi: bigint | null }>(
    "SELECT min(block_number) AS lo, max(block_number) AS hi FROM payments",
  );
  return { lo: r?.lo ?? 0n, hi: r?.hi ?? -1n };
}

/** Whether `table` holds a row of blocks `lo`..`hi`: of `chain`, or of any chain when none is named. */
async function overlaps(
  analytics: Analytics,
  table: OnChain,
  lo: bigint,
  hi: bigint,
  chain?: AnyChainRecord,
): Promise<boolean> {
  const of = chain ? ` AND chain = '${chain.slug}'` : "";
  const row = await analytics.one(
    `SELECT 1 FROM ${table} WHERE block_number BETWEEN $lo AND $hi${of} LIMIT 1`,
    { lo, hi },
  );
  return row !== undefined;
}

/** Parses the file and validates every record in the same parallel pass: `reason` is NULL on a good record. */
async function stage(analytics: Analytics, input: Input): Promise<void> {
  try {
    await analytics.run(
      `CREATE TEMP TABLE import_raw AS SELECT ${reasonExpression()} AS reason, * FROM ${numbered(input)}`,
    );
  } catch (error) {
    // DuckDB's own line numbers skip blank lines; find the exact line and JSON.parse's reason instead.
    const bad = await firstUnparsableLine(input.path);
    if (bad) throw new ImportError(bad.reason, input.file, bad.line);
    // What JSON.parse takes and DuckDB does not (a key twice in one object): DuckDB's line is the record's.
    const first = ((error as Error).message.split("\n")[0] ?? "")
      .replaceAll(literalPath(input.path), input.file)
      .replaceAll(input.path, input.file);
    const located = /^(.*?) in file ".*", in line (\d+): (.*)$/.exec(first);
    if (located) {
      const line = await lineOfRecord(input.path, Number(located[2]));
      throw new ImportError(`not valid NDJSON (${located[1]}: ${located[3]})`, input.file, line);
    }
    throw new ImportError(`not valid NDJSON: ${first}`, input.file);
  }
}

/** A block and its time in microseconds since 1970 (exact, as DuckDB's epoch_us gives it). */
type Anchor = {
  block: bigint;
  us: bigint;
};

const clockOf = (anchor: Anchor) => BlockClock.anchored(Number(anchor.block), Number(anchor.us) / 1e6);

/** SQL: a block's time (a TIMESTAMP expression) is not the one the clock gives it. */
const offClock = (clock: BlockClock, block: string, timestamp: string) =>
  `epoch_us(${timestamp}) <> ${clock.sqlTimeOf(block)} * 1000000`;

/**
 * A block the analytics database holds of each chain, with its time: the anchor of the clock every imported
 * block of that chain must follow. The lowest one, so that the anchor named in a message does not change
 * between runs.
 */
async function storedAnchors(analytics: Analytics): Promise<Map<string, Anchor>> {
  // The time converted once a chain, not for every row.
  const lowest = (table: string) =>
    `SELECT chain, min(block_number) AS block, arg_min(block_time, block_number) AS t FROM ${table} GROUP BY chain`;
  const rows = await analytics.all<Anchor & { chain: string }>(
    `SELECT chain, min(block) AS block, epoch_us(arg_min(t, block)) AS us FROM (
       ${["payments", "transfers", "checkpoints", "channel_events"].map(lowest).join(" UNION ALL ")}
     ) GROUP BY chain`,
  );
  return new Map(rows.map(({ chain, ...anchor }) => [chain, anchor]));
}

/**
 * The typed rows of on-chain records, in the column order of their tables, after `record`: the
 * record's ordinal when they are staged, NULL when they come straight from the file.
 */
function typed(table: "payments" | "transfers", from = "import_raw"): string {
  const record = from === "import_raw" ? "record" : "NULL";
  return table === "payments"
    ? `SELECT ${record} AS record, lower("chain") AS chain, ${sqlStoreForm("tx_hash")} AS tx_hash, log_index::INTEGER AS log_index,
      block_number::BIGINT AS block_number, ${time("block_time")} AS block_time, ${sqlStoreForm("facilitator")} AS facilitator,
      ${sqlStoreForm("payer")} AS payer, ${sqlStoreForm("pay_to")} AS pay_to, amount::BIGINT AS amount, coalesce(${sqlStoreForm("asset")}, ${sqlUsdcOf('lower("chain")')}) AS asset,
      lower(scheme) AS scheme, lower(transfer_method) AS transfer_method, NULL::VARCHAR AS channel,
      builder_app, builder_wallet, builder_services
    FROM ${from} WHERE type = 'payment'`
    : `SELECT ${record} AS record, lower("chain") AS chain, ${sqlStoreForm("tx_hash")} AS tx_hash, log_index::INTEGER AS log_index,
      block_number::BIGINT AS block_number, ${time("block_time")} AS block_time,
      ${sqlStoreForm('"from"')} AS from_address, ${sqlStoreForm('"to"')} AS to_address, amount::BIGINT AS amount
    FROM ${from} WHERE type = 'transfer'`;
}
type OnChain = "payments" | "transfers";

/**
 * Stops at the first bad record, then at the first line of another chain than the store's (else the file's
 * first), then at the first block time off the chain's clock (Base's rule; a stamped chain's order); returns
 * the file's chain and the on-chain tables whose records repeat a key within the file.
 */
async function check(
  analytics: Analytics,
  input: Input,
): Promise<{ duplicated: Set<OnChain>; chain: AnyChainRecord }> {
  const refuse = async (reason: string, record: bigint) =>
    new ImportError(reason, input.file, await lineOfRecord(input.path, Number(record)));
  const bad = await analytics.one<{ record: bigint; reason: string }>(
    "SELECT record, reason FROM import_raw WHERE reason IS NOT NULL ORDER BY record LIMIT 1",
  );
  if (bad) throw await refuse(bad.reason, bad.record);

  const firstChain = await analytics.one<{ record: bigint; chain: string }>(
    "SELECT record, lower(chain) AS chain FROM import_raw WHERE chain IS NOT NULL ORDER BY record LIMIT 1",
  );
  const slug = firstChain?.chain;
  if (firstChain && slug !== undefined) {
    const other = await analytics.one<{ record: bigint; chain: string }>(
      `SELECT record, lower(chain) AS chain FROM import_raw WHERE lower(chain) <> $slug ORDER BY record LIMIT 1`,
      { slug },
    );
    if (other) {
      const where = `line ${await lineOfRecord(input.path, Number(firstChain.record))}`;
      throw await refuse(chainMismatch(other.chain, slug, where), other.record);
    }
  }
  const chain = chainRecord(slug);

  const blocks = `SELECT record, block_number::BIGINT AS block, epoch_us(${time("block_time")}) AS us
    FROM import_raw WHERE type IN ('payment', 'transfer', 'checkpoint', 'channel_event')`;
  if (chain.clock.kind === "stamped") {
    const breach = await analytics.one<{
      record: bigint;
      block: bigint;
      us: bigint;
      ref: bigint;
      before: bigint | null;
    }>(sqlStampedBreach(blocks, chain));
    if (breach) throw await refuse(stampedReason(chain, breach), breach.record);
  }
  const stored =
    chain.clock.kind === "stamped" ? undefined : (await storedAnchors(analytics)).get(chain.slug);
  const first =
    stored || chain.clock.kind === "stamped"
      ? undefined
      : await analytics.one<Anchor & { record: bigint }>(`${blocks} ORDER BY record LIMIT 1`);
  const anchor = stored ?? first;
  if (anchor) {
    const clock = clockOf(anchor);
    const off = await analytics.one<Anchor & { record: bigint }>(
      `SELECT * FROM (${blocks}) WHERE us <> ${clock.sqlTimeOf("block")} * 1000000 ORDER BY record LIMIT 1`,
    );
    if (off) {
      const where = first
        ? `on line ${await lineOfRecord(input.path, Number(first.record))}`
        : "in the analytics database";
      const breach = clock.breach(Number(off.block), Number(off.us) / 1e6);
      throw await refuse(`${breach} (block ${anchor.block} is ${where})`, off.record);
    }
  }

  const duplicated = new Set<OnChain>();
  const counts = await analytics.one<Record<string, bigint>>(`SELECT
    count(*) FILTER (type = 'payment') AS payments_n,
    count(DISTINCT hash(${sqlStoreForm("tx_hash")}, log_index::INTEGER)) FILTER (type = 'payment') AS payments_k,
    count(*) FILTER (type = 'transfer') AS transfers_n,
    count(DISTINCT hash(${sqlStoreForm("tx_hash")}, log_index::INTEGER)) FILTER (type = 'transfer') AS transfers_k
    FROM import_raw`);
  for (const [table, label] of [
    ["payments", "payment"],
    ["transfers", "transfer"],
  ] as const) {
    if (counts?.[`${table}_n`] === counts?.[`${table}_k`]) continue;
    duplicated.add(table);
    const conflict = await conflictingDuplicate(analytics, table);
    if (conflict) {
      const earlier = await lineOfRecord(input.path, Number(conflict.earlier));
      throw await refuse(
        `${label} ${conflict.tx_hash} log ${conflict.log_index} appears earlier in the file (line ${earlier}) with different fields: ${conflict.differs.join("; ")}`,
        conflict.record,
      );
    }
  }
  const balance = await analytics.one<{ record: bigint; wallet: string; block: bigint }>(`
    SELECT list(record ORDER BY record)[2] AS record, ${sqlStoreForm("wallet")} AS wallet, block_number::BIGINT AS block
    FROM import_raw WHERE type = 'balance' GROUP BY ${sqlStoreForm("wallet")}, block_number::BIGINT
    HAVING count(DISTINCT amount::HUGEINT) > 1 ORDER BY record LIMIT 1`);
  if (balance) {
    throw await refuse(
      `balance of ${balance.wallet} at block ${balance.block} appears earlier in the file with another amount`,
      balance.record,
    );
  }
  await stageChannels(analytics);
  // First: a payment line on a claim's log says so, not only that its fields are not the claim's.
  const channel = await channelProblem(analytics, chain);
  if (channel) throw await refuse(channel.reason, channel.record);
  const contradiction = await storedContradiction(analytics, chain);
  if (contradiction) throw await refuse(contradiction.reason, contradiction.record);
  return { duplicated, chain };
}

/**
 * The fields of a payment or transfer besides its key (chain, tx_hash, log_index): a repeat must agree on all. Not
 * a payment's `channel`, which no line carries: the store derives it from the channel's events (import-escrow.ts).
 */
const FIELDS: Record<OnChain, readonly string[]> = {
  payments: [
    "block_number",
    "block_time",
    "facilitator",
    "payer",
    "pay_to",
    "amount",
    "asset",
    "scheme",
    "transfer_method",
    "builder_app",
    "builder_wallet",
    "builder_services",
  ],
  transfers: ["block_number", "block_time", "from_address", "to_address", "amount"],
};

/**
 * The same (tx_hash, log_index) twice in one file is fine when the lines agree (they are one row) and
 * an error when they differ: the first line that differs from its key's first, and what differs. Counting
 * distinct key hashes first is cheap; this exact search runs only when that count shows repeats (or a hash
 * collision), and compares only the keys that repeat.
 */
async function conflictingDuplicate(
  analytics: Analytics,
  table: OnChain,
): Promise<
  { record: bigint; earlier: bigint; tx_hash: string; log_index: number; differs: string[] } | undefined
> {
  return analytics.one(`
    WITH t AS (${typed(table)}),
      repeated AS (SELECT tx_hash, log_index FROM t GROUP BY tx_hash, log_index HAVING count(*) > 1),
      r AS (SELECT t.*, row_number() OVER (PARTITION BY tx_hash, log_index ORDER BY record) AS k
        FROM t SEMI JOIN repeated USING (tx_hash, log_index))
    SELECT here.record, there.record AS earlier, here.tx_hash, here.log_index,
      ${sqlDifferences(FIELDS[table], "there", "here")} AS differs
    FROM r here JOIN r there ON there.tx_hash = here.tx_hash AND there.log_index = here.log_index AND there.k = 1
    WHERE here.k > 1 AND (${sqlDiffer(FIELDS[table], "there", "here")})
    ORDER BY here.record LIMIT 1`);
}

/**
 * The first line that says otherwise than the analytics database about a record of the chain: a payment or
 * transfer whose key (chain, tx_hash, log_index) is stored, in any block, with other fields, or a balance of
 * a wallet and block stored with another amount. A chain's record does not change, so one of the two is wrong,
 * and keeping the stored one without a word (as a repeat that agrees is kept) would hide it; undefined when
 * there is none.
 *
 * A stored row of a line's key is compared whole in the lines' blocks, which the zone maps find; outside them
 * (its block then differs from the line's) only the keys are read, as the whole table's rows would be, and a
 * row found there is read whole for the message alone.
 */
async function storedContradiction(
  analytics: Analytics,
  chain: AnyChainRecord,
): Promise<{ record: bigint; reason: string } | undefined> {
  const staged = await analytics.one<{ payments: bigint; transfers: bigint; balances: bigint }>(
    `SELECT count(*) FILTER (type = 'payment') AS payments, count(*) FILTER (type = 'transfer') AS transfers,
       count(*) FILTER (type = 'balance') AS balances FROM import_raw`,
  );
  const found: { record: bigint; reason: string }[] = [];
  for (const [table, label] of [
    ["payments", "payment"],
    ["transfers", "transfer"],
  ] as const) {
    if (!staged?.[table]) continue;
    const compare = (there: string) => `
      WITH here AS (${typed(table)})
      SELECT here.record, '${label} ' || here.tx_hash || ' log ' || here.log_index ||
        ' is in the analytics database with different fields: ' ||
        array_to_string(${sqlDifferences(FIELDS[table], "there", "here")}, '; ') AS reason
      FROM here JOIN (${there}) there ON there.tx_hash = here.tx_hash AND there.log_index = here.log_index
      WHERE there.chain = '${chain.slug}' AND (${sqlDiffer(FIELDS[table], "there", "here")})${
        // The escrow's and its collectors' transfers are stored as the channels' moves they are
        // (import-escrow.ts): dropped, or named by the payer's channels, so the line is not the row to compare.
        table === "transfers"
          ? ` AND NOT (here.from_address IN ${SQL_ESCROW_WALLETS} OR here.to_address IN ${SQL_ESCROW_WALLETS})`
          : ""
      }
      ORDER BY here.record LIMIT 1`;
    const span = await analytics.one<{ lo: bigint; hi: bigint }>(
      `SELECT min(block_number::BIGINT) AS lo, max(block_number::BIGINT) AS hi FROM import_raw
       WHERE type = '${label}'`,
    );
    const blocks = { lo: span?.lo ?? 0n, hi: span?.hi ?? -1n };
    const inside = await analytics.one<{ record: bigint; reason: string }>(
      compare(`SELECT * FROM ${table} WHERE block_number BETWEEN $lo AND $hi`),
      blocks,
    );
    if (inside) found.push(inside);
    // The stored keys outside the lines' blocks, the lines the build side of the semi join.
    const outside = await analytics.one<{ tx_hash: string; log_index: number }>(
      `SELECT s.tx_hash, s.log_index FROM ${table} s
         SEMI JOIN (SELECT ${sqlStoreForm("tx_hash")} AS tx_hash, log_index::INTEGER AS log_index FROM import_raw
           WHERE type = '${label}') here ON s.tx_hash = here.tx_hash AND s.log_index = here.log_index
       WHERE s.chain = '${chain.slug}' AND s.block_number NOT BETWEEN $lo AND $hi LIMIT 1`,
      blocks,
    );
    if (outside) {
      const row = await analytics.one<{ record: bigint; reason: string }>(
        compare(`SELECT * FROM ${table} WHERE tx_hash = $tx AND log_index = $log`),
        { tx: outside.tx_hash, log: outside.log_index },
      );
      if (row) found.push(row);
    }
  }
  if (staged?.balances) {
    const row = await analytics.one<{ record: bigint; reason: string }>(`
      SELECT here.record, 'balance of ' || there.wallet || ' at block ' || there.block_number ||
        ' is in the analytics database with another amount: ' || there.amount || ' there, ' ||
        here.amount::HUGEINT || ' here' AS reason
      FROM import_raw here JOIN balances there ON there.chain = '${chain.slug}' AND there.wallet = ${sqlStoreForm("here.wallet")}
        AND there.block_number = here.block_number::BIGINT
      WHERE here.type = 'balance' AND there.amount <> here.amount::HUGEINT
      ORDER BY here.record LIMIT 1`);
    if (row) found.push(row);
  }
  return found.sort((x, y) => (x.record < y.record ? -1 : 1))[0];
}

/** `written`: the blocks of the payments the bulk way inserted before (they are not staged). */
async function merge(
  analytics: Analytics,
  duplicated: Set<OnChain>,
  chain: AnyChainRecord,
  written?: { lo: bigint; hi: bigint },
): Promise<ImportCounts> {
  const slug = chain.slug;
  const counts = {} as ImportCounts;
  let paymentBlocks: { lo: bigint; hi: bigint } | undefined;
  const read = await analytics.all<{ type: RecordType; n: bigint }>(
    "SELECT type, count(*) AS n FROM import_raw GROUP BY type",
  );
  for (const t of RECORD_TYPES) {
    counts[t] = { read: Number(read.find((r) => r.type === t)?.n ?? 0n), added: 0 };
  }

  for (const [table, type] of [
    ["payments", "payment"],
    ["transfers", "transfer"],
  ] as const) {
    if (counts[type].read === 0) continue;
    const before = await countRows(analytics, table);
    const staged = `SELECT ${duplicated.has(table) ? "DISTINCT" : ""} COLUMNS(* EXCLUDE (record)) FROM (${typed(table)})`;
    // Existing rows of the same blocks are the only ones that can collide; when there are none (a
    // fresh range, the common case) the rows go in without the anti-join.
    const range = await analytics.one<{ lo: bigint; hi: bigint }>(
      `SELECT min(block_number::BIGINT) AS lo, max(block_number::BIGINT) AS hi FROM import_raw WHERE type = '${type}'`,
    );
    const overlap = await overlaps(analytics, table, range?.lo ?? 0n, range?.hi ?? 0n, chain);
    await analytics.run(
      overlap
        ? `INSERT INTO ${table} SELECT * FROM (${staged}) s WHERE NOT EXISTS (
            SELECT 1 FROM ${table} t WHERE t.chain = s.chain AND t.tx_hash = s.tx_hash AND t.log_index = s.log_index
              AND t.block_number BETWEEN $lo AND $hi)`
        : `INSERT INTO ${table} ${staged}`,
      overlap ? { lo: range?.lo ?? 0n, hi: range?.hi ?? 0n } : undefined,
    );
    counts[type].added = (await countRows(analytics, table)) - before;
    if (table === "payments" && counts[type].added > 0 && range) paymentBlocks = range;
  }

  // Last line wins for listings, merchants, checkpoints and hub labels: they describe current state.
  const beforeListings = await countRows(analytics, "listings");
  await analytics.run(`INSERT OR REPLACE INTO listings
    SELECT ${sqlStoreForm("pay_to")}, resource, coalesce(upper(method), ''), price_usd::DOUBLE, description,
      ${sqlHost("resource")}
    FROM import_raw WHERE type = 'listing'
    QUALIFY row_number() OVER (PARTITION BY ${sqlStoreForm("pay_to")}, resource, coalesce(upper(method), '') ORDER BY record DESC) = 1`);
  counts.listing.added = (await countRows(analytics, "listings")) - beforeListings;

  // A merchant line changes only the fields it carries; "frozen" is the deprecated alias of "held" (the
  // rules refuse a line where they disagree).
  await analytics.run(`CREATE TEMP TABLE import_merchants AS
    SELECT ${sqlStoreForm("address")} AS address, name, claimed::BOOLEAN AS claimed, coalesce(held, frozen)::BOOLEAN AS held
    FROM import_raw WHERE type = 'merchant'
    QUALIFY row_number() OVER (PARTITION BY ${sqlStoreForm("address")} ORDER BY record DESC) = 1`);
  await analytics.run(`UPDATE merchants m SET
      name = coalesce(i.name, m.name), claimed = coalesce(i.claimed, m.claimed), held = coalesce(i.held, m.held)
    FROM import_merchants i WHERE i.address = m.address`);
  const beforeMerchants = await countRows(analytics, "merchants");
  await analytics.run(`INSERT INTO merchants
    SELECT address, name, coalesce(claimed, false), coalesce(held, false) FROM import_merchants
    WHERE address NOT IN (SELECT address FROM merchants)`);
  counts.merchant.added = (await countRows(analytics, "merchants")) - beforeMerchants;
  // Every wallet that is paid or lists an endpoint is a merchant the service reports on.
  await analytics.run(`INSERT INTO merchants (address)
    SELECT DISTINCT ${sqlStoreForm("pay_to")} AS address FROM import_raw WHERE type IN ('payment', 'listing')
    AND ${sqlStoreForm("pay_to")} NOT IN (SELECT address FROM merchants)`);
  await analytics.run(`INSERT OR IGNORE INTO merchant_chains
    SELECT DISTINCT ${sqlStoreForm("pay_to")}, '${slug}' FROM import_raw WHERE type = 'payment'`);

  const beforeCheckpoints = await countRows(analytics, "checkpoints");
  await analytics.run(`INSERT OR REPLACE INTO checkpoints
    SELECT '${slug}', block_number::BIGINT, ${time("block_time")}
    FROM import_raw WHERE type = 'checkpoint'
    QUALIFY row_number() OVER (PARTITION BY block_number::BIGINT ORDER BY record DESC) = 1`);
  counts.checkpoint.added = (await countRows(analytics, "checkpoints")) - beforeCheckpoints;

  // A balance is a fact of the chain, one per wallet and block: a stored one is kept as it is, as a
  // stored payment is, and a line repeating one (the file's, or the store's) adds nothing.
  const beforeBalances = await countRows(analytics, "balances");
  await analytics.run(`INSERT OR IGNORE INTO balances
    SELECT DISTINCT '${slug}', ${sqlStoreForm("wallet")}, block_number::BIGINT, amount::HUGEINT
    FROM import_raw WHERE type = 'balance'`);
  counts.balance.added = (await countRows(analytics, "balances")) - beforeBalances;

  // A known exchange or bridge wallet (beside the repository's src/chain/base-hubs.json): the clusters
  // take it as a hub, so a label changes what reports say, and the data version below counts it.
  const beforeHubs = await countRows(analytics, "hub_labels");
  await analytics.run(`INSERT OR REPLACE INTO hub_labels
    SELECT '${slug}', ${sqlStoreForm("address")}, label, lower(kind), source
    FROM import_raw WHERE type = 'hub'
    QUALIFY row_number() OVER (PARTITION BY ${sqlStoreForm("address")} ORDER BY record DESC) = 1`);
  counts.hub.added = (await countRows(analytics, "hub_labels")) - beforeHubs;

  // A side of a CCTP message, as its chain logged it: a fact of the chain, one per log, kept as it is once stored.
  const beforeBridge = await countRows(analytics, "bridge_messages");
  await analytics.run(`INSERT OR IGNORE INTO bridge_messages
    SELECT DISTINCT '${slug}', lower(tx_hash), log_index::INTEGER, block_number::BIGINT, ${time("block_time")}, side,
      source_domain::INTEGER, destination_domain::INTEGER, lower(nonce), lower(sender), lower(recipient), amount::BIGINT
    FROM import_raw WHERE type = 'bridge_message'`);
  counts.bridge_message.added = (await countRows(analytics, "bridge_messages")) - beforeBridge;

  const channels = await mergeChannels(analytics, chain);
  counts.channel.added = channels.channels;
  counts.channel_event.added = channels.events;
  paymentBlocks = spanOf(paymentBlocks, channels.paymentBlocks);
  // The escrow's own transfers are the channels' moves (import-escrow.ts), over every block the file wrote.
  const staged = await analytics.one<{ lo: bigint | null; hi: bigint | null }>(
    `SELECT min(block_number::BIGINT) AS lo, max(block_number::BIGINT) AS hi FROM import_raw
     WHERE type IN ('payment', 'transfer', 'channel_event')`,
  );
  const wrote = spanOf(
    written,
    staged?.lo != null && staged.hi != null ? { lo: staged.lo, hi: staged.hi } : undefined,
  );
  // Solana has no x402 escrow (its channels' lines are refused by the rules).
  if (wrote && chain.kind !== "solana") {
    const dropped = await settleEscrowTransfers(analytics, chain, wrote);
    counts.transfer.added = Math.max(0, counts.transfer.added - dropped);
  }
  if (paymentBlocks) await sealImported(analytics, paymentBlocks, chain);

  // Listings and merchants' names are every chain's: such a file changes every chain's reports. So do bridge
  // messages: a burn on one chain is where a mint on another came from.
  const everyChain = counts.listing.read > 0 || counts.merchant.read > 0 || counts.bridge_message.read > 0;
  await bumpDataVersion(analytics, 0, everyChain ? undefined : chain.slug);
  return counts;
}

/** The blocks of two spans, either of which may be missing. */
function spanOf(a?: { lo: bigint; hi: bigint }, b?: { lo: bigint; hi: bigint }) {
  if (!a || !b) return a ?? b;
  const ends = [a.lo, a.hi, b.lo, b.hi].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return { lo: ends[0] as bigint, hi: ends[3] as bigint };
}

async function countRows(analytics: Analytics, table: string): Promise<number> {
  const row = await analytics.one<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`);
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
  for await (const bytes of rawLines(file, MAX_LINE_BYTES)) {
    line++;
    if (typeof bytes === "number") {
      const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
      return {
        line,
        reason: `the line is ${mib(bytes)}, more than a record may be (${mib(MAX_LINE_BYTES)})`,
      };
    }
    // Read as UTF-8, a Latin-1 byte becomes U+FFFD and still parses; DuckDB refuses it with a count of its own.
    if (!isUtf8(bytes)) return { line, reason: "not UTF-8 text (save the file as UTF-8)" };
    const text = bytes.toString("utf8");
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

/**
 * The file's lines as bytes, without their line ends (\n or \r\n); a line longer than `max` bytes as its
 * length alone, never held whole (a file of one huge line is read in linear time and constant memory).
 */
async function* rawLines(file: string, max: number): AsyncIterable<Buffer | number> {
  let parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of fs.createReadStream(file)) {
    let buffer = chunk as Buffer;
    for (let end = buffer.indexOf(0x0a); end !== -1; end = buffer.indexOf(0x0a)) {
      size += end;
      yield size > max ? size : trimCarriageReturn(Buffer.concat([...parts, buffer.subarray(0, end)]));
      parts = [];
      size = 0;
      buffer = buffer.subarray(end + 1);
    }
    size += buffer.length;
    if (size > max) parts = [];
    else parts.push(buffer);
  }
  if (size > 0) yield size > max ? size : trimCarriageReturn(Buffer.concat(parts));
}

const trimCarriageReturn = (line: Buffer) => (line.at(-1) === 0x0d ? line.subarray(0, -1) : line);

function lines(file: string): AsyncIterable<string> {
  return readline.createInterface({
    input: fs.createReadStream(file, { encoding: "utf8" }),
    crlfDelay: Infinity,
  });
}
