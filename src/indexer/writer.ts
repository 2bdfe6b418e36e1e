/**
 * Commits one batch: its payments, candidates and kept transfers, the merchants they reveal, the
 * block hashes a reorg check needs and the checkpoint (number, hash, time), in one DuckDB transaction.
 * A crash at any point leaves either the whole batch or none of it, and the checkpoint always says
 * exactly how far the rows go: a restart resumes after it and stores nothing twice.
 *
 * Rows go in through the DuckDB appender (far faster than INSERT statements). A payment is keyed by
 * (chain, tx_hash, log_index) of its Transfer log: when the analytics database already holds rows in the batch's
 * blocks (an import of the same range), the rows go through a temporary staging table and only the
 * missing ones are added; otherwise, the common case, they are appended directly. Funding history rows
 * (`history.ts`) lie below the batch, among rows earlier batches wrote, and take the same path.
 */
import { type DuckDBAppender, DuckDBTimestampValue } from "@duckdb/node-api";
import type { Analytics } from "../analytics/duckdb.ts";
import { bumpDataVersion } from "../analytics/migrations.ts";
import { paymentsWritten, SEALS_PER_COMMIT } from "../analytics/payment-days.ts";
import { BASE_RECORD, type ChainRecord } from "../chain/chains.ts";
import type { BalanceRow } from "./balances.ts";
import type { BridgeRow } from "./bridge-messages.ts";
import type { ChannelEventRow, ChannelRow } from "./channels.ts";
import type { CandidateRow, PaymentRow, TransferRow } from "./classify.ts";
import type { Cursor } from "./state.ts";

export interface Batch {
  from: number;
  to: number;
  /** Block `to`: the new checkpoint. */
  end: Cursor;
  payments: readonly PaymentRow[];
  candidates: readonly CandidateRow[];
  transfers: readonly TransferRow[];
  /**
   * Transfers fetched as funding history (`history.ts`): below the batch too, and possibly already
   * stored (by an earlier batch's rule or history), so always added through the key check.
   */
  history?: readonly TransferRow[];
  /** Balances the funding history read (`balances.ts`), below the batch or in it; possibly stored already. */
  balances?: readonly BalanceRow[];
  /** Blocks whose hashes to keep for reorg checks (the end block among them). */
  hashes: readonly Cursor[];
  /** Batch-settlement channels first seen in the batch, and every event of the escrow in it (`channels.ts`). */
  channels?: readonly ChannelRow[];
  channelEvents?: readonly ChannelEventRow[];
  /** The sides of CCTP messages logged in the batch's blocks (`bridge-messages.ts`). */
  bridges?: readonly BridgeRow[];
}

export interface CommitOptions {
  /** The first block of this database's indexing, recorded with the first commit. */
  startBlock: number;
  /** The checkpoint the batch follows (undefined for the first batch of an analytics database). */
  previous: Cursor | undefined;
  /** Hashes of this many blocks below the checkpoint are kept. */
  reorgDepth: number;
}

export interface CommitCounts {
  payments: number;
  candidates: number;
  transfers: number;
  /** Funding history rows added (not already stored). */
  history: number;
  /** Balance rows added (not already stored). */
  balances: number;
  /** Sides of CCTP messages added (not already stored: an import of the same blocks may hold them). */
  bridges: number;
}

/**
 * One checkpoint row per this many blocks (an hour of Base) is kept, plus the latest: the report only
 * needs the latest (completeness) and any of them (block times), and `--follow` commits every block.
 */
export const CHECKPOINT_SPACING = 1_800;

type Table = "payments" | "facilitator_candidates" | "transfers";
type Row = { tx: string; logIndex: number; block: number; time: number };

/** Each table's columns after the shared (chain, tx_hash, log_index, block_number, block_time). */
const COLUMNS: { [T in Table]: (a: DuckDBAppender, row: never, usdc: string) => void } = {
  payments: (a, p: PaymentRow, usdc) => {
    a.appendVarchar(p.facilitator);
    a.appendVarchar(p.payer);
    a.appendVarchar(p.payTo);
    a.appendBigInt(p.amount);
    a.appendVarchar(usdc);
    a.appendVarchar(p.scheme);
    a.appendVarchar(p.method);
    if (p.channel === undefined) a.appendNull();
    else a.appendVarchar(p.channel);
    for (const code of [p.codes?.app, p.codes?.wallet, p.codes?.services]) {
      if (code == null) a.appendNull();
      else a.appendVarchar(code);
    }
  },
  facilitator_candidates: (a, c: CandidateRow) => {
    a.appendVarchar(c.sender);
    a.appendVarchar(c.payer);
    a.appendVarchar(c.payTo);
    a.appendBigInt(c.amount);
    a.appendVarchar(c.reason);
  },
  transfers: (a, t: TransferRow) => {
    a.appendVarchar(t.from);
    a.appendVarchar(t.to);
    a.appendBigInt(t.amount);
  },
};

/**
 * The lowest block whose data a commit changes, for the report service's rendered windows
 * (src/analytics/changes.ts): the batch's own blocks and the funding history below them; 0 when a
 * merchant is new (every window lists every merchant) or the batch does not follow its checkpoint (a
 * window's completeness may then change too).
 */
function lowestChanged(batch: Batch, options: CommitOptions, newMerchants: boolean): number {
  if (newMerchants || options.previous?.block !== batch.from - 1) return 0;
  let from = batch.from;
  for (const row of batch.history ?? []) from = Math.min(from, row.block);
  for (const row of batch.balances ?? []) from = Math.min(from, row.block);
  return from;
}

/** Merchants newly paid on `chain` (its slug): a merchant, if it was none, and one of the chain's. */
async function addMerchants(analytics: Analytics, chain: string, fresh: readonly string[]): Promise<void> {
  for (let i = 0; i < fresh.length; i += 1_000) {
    const some = fresh.slice(i, i + 1_000);
    const values = (row: (k: number) => string) => some.map((_, k) => row(k + 1)).join(", ");
    await analytics.run(`INSERT OR IGNORE INTO merchants (address) VALUES ${values((k) => `($${k})`)}`, some);
    await analytics.run(
      `INSERT OR IGNORE INTO merchant_chains VALUES ${values((k) => `($${k}, '${chain}')`)}`,
      some,
    );
  }
}

/**
 * The sides of CCTP messages, keyed by (chain, tx_hash, log_index) like the import's lines: one imported into the
 * same blocks is the same fact and is kept as it is.
 */
async function addBridges(analytics: Analytics, chain: string, rows: readonly BridgeRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const before = await countRows(analytics, "bridge_messages");
  for (let i = 0; i < rows.length; i += 500) {
    const some = rows.slice(i, i + 500);
    const values = some.map((_, k) => {
      const p = (n: number) => `$${11 * k + n + 1}`;
      return `($1, ${p(1)}, ${p(2)}::INTEGER, ${p(3)}::BIGINT, to_timestamp(${p(4)}::BIGINT)::TIMESTAMP, ${p(5)}, ${p(6)}::INTEGER, ${p(7)}::INTEGER, ${p(8)}, ${p(9)}, ${p(10)}, ${p(11)}::BIGINT)`;
    });
    const fields = some.flatMap((b) => [
      b.tx,
      b.logIndex,
      b.block,
      b.time,
      b.side,
      b.sourceDomain,
      b.destinationDomain,
      b.nonce,
      b.sender,
      b.recipient,
      b.amount.toString(),
    ]);
    await analytics.run(`INSERT OR IGNORE INTO bridge_messages VALUES ${values.join(", ")}`, [
      chain,
      ...fields,
    ]);
  }
  return (await countRows(analytics, "bridge_messages")) - before;
}

async function countRows(analytics: Analytics, table: string): Promise<number> {
  return Number((await analytics.one<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`))?.n ?? 0n);
}

export class BatchWriter {
  /** Merchants known to be in the analytics database (loaded at the first commit): only new ones are inserted. */
  private merchants: Set<string> | undefined;

  /** The chain's slug, every row's first column, and its USDC, every payment's asset. */
  private readonly chain: string;
  private readonly usdc: string;

  constructor(
    private readonly analytics: Analytics,
    private readonly record: ChainRecord = BASE_RECORD,
  ) {
    this.chain = record.slug;
    this.usdc = record.usdc.address;
  }

  async commit(batch: Batch, options: CommitOptions): Promise<CommitCounts> {
    // The merchants paid on this chain before: a merchant of another chain is new here.
    this.merchants ??= new Set(
      (
        await this.analytics.all<{ address: string }>(
          "SELECT address FROM merchant_chains WHERE chain = $chain",
          { chain: this.chain },
        )
      ).map((m) => m.address),
    );
    const known = this.merchants;
    const fresh = [...new Set(batch.payments.map((p) => p.payTo))].filter((m) => !known.has(m));
    // In the store's turn: another chain's indexer on another connection may add the same merchant.
    const counts = await this.analytics.storeTurn(() =>
      this.analytics.transaction(async () => {
        const range = { lo: batch.from, hi: batch.to };
        const added: CommitCounts = {
          payments: await this.add("payments", batch.payments, range),
          candidates: await this.add("facilitator_candidates", batch.candidates, range),
          transfers: await this.add("transfers", batch.transfers, range),
          history: await this.addHistory(batch),
          balances: await this.addBalances(batch.balances ?? []),
          bridges: await addBridges(this.analytics, this.chain, batch.bridges ?? []),
        };
        await this.addChannels(batch);
        // Every wallet paid through x402 is a merchant with a report; its name stays NULL (the report
        // then names it after its listings' host).
        await addMerchants(this.analytics, this.chain, fresh);
        // The report's day groups: the days these payments touch, and past days not grouped yet.
        if (added.payments > 0) {
          await paymentsWritten(this.analytics, this.record, range, {
            until: batch.end.time,
            limit: SEALS_PER_COMMIT,
          });
        }
        await this.saveCheckpoint(batch, options);
        await bumpDataVersion(this.analytics, lowestChanged(batch, options, fresh.length > 0), this.chain);
        return added;
      }),
    );
    for (const m of fresh) known.add(m);
    return counts;
  }

  /**
   * Funding history rows not among the batch's own kept transfers, through the same key check as an
   * overlapping import: they lie in blocks earlier batches wrote, and another wallet's history or rule 1
   * may have stored the same transfer already.
   */
  private async addHistory(batch: Batch): Promise<number> {
    const rows = batch.history ?? [];
    if (rows.length === 0) return 0;
    const kept = new Set(batch.transfers.map((t) => `${t.tx}:${t.logIndex}`));
    const fresh = rows.filter((t) => !kept.has(`${t.tx}:${t.logIndex}`));
    let lo = Infinity;
    let hi = -Infinity;
    for (const t of fresh) {
      lo = Math.min(lo, t.block);
      hi = Math.max(hi, t.block);
    }
    return this.add("transfers", fresh, { lo, hi });
  }

  /** The escrow's events of the batch's blocks and its new channels (a channel read back twice is kept once). */
  private async addChannels(batch: Batch): Promise<void> {
    for (const c of batch.channels ?? []) {
      await this.analytics.run(
        "INSERT OR IGNORE INTO channels VALUES ($chain, $id, $payer, $pa, $receiver, $ra, $token, $delay, $salt, $block, $tx)",
        {
          chain: this.chain,
          id: c.channelId,
          payer: c.payer,
          pa: c.payerAuthorizer,
          receiver: c.receiver,
          ra: c.receiverAuthorizer,
          token: c.token,
          delay: c.withdrawDelay,
          salt: c.salt,
          block: c.block,
          tx: c.tx,
        },
      );
    }
    const events = batch.channelEvents ?? [];
    if (events.length === 0) return;
    const appender = await this.analytics.connection.createAppender("channel_events");
    try {
      for (const e of events) {
        appender.appendVarchar(this.chain);
        appender.appendVarchar(e.tx);
        appender.appendInteger(e.logIndex);
        appender.appendBigInt(BigInt(e.block));
        appender.appendTimestamp(timestamp(e.time));
        appender.appendVarchar(e.event);
        appender.appendVarchar(e.channelId);
        appender.appendVarchar(e.sender);
        appender.appendVarchar(e.receiver);
        appender.appendHugeInt(e.amount);
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  /**
   * Balances keyed by (chain, wallet, block): a wallet's balance at a block is one number, so a row
   * read again (after a resume, or imported) is the same and is kept once.
   */
  private async addBalances(rows: readonly BalanceRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const before = await countRows(this.analytics, "balances");
    for (let i = 0; i < rows.length; i += 1_000) {
      const some = rows.slice(i, i + 1_000);
      await this.analytics.run(
        `INSERT OR IGNORE INTO balances VALUES ${some.map((_, k) => `($1, $${3 * k + 2}, $${3 * k + 3}, $${3 * k + 4}::HUGEINT)`).join(", ")}`,
        [this.chain, ...some.flatMap((b) => [b.wallet, b.block, b.amount.toString()])],
      );
    }
    return (await countRows(this.analytics, "balances")) - before;
  }

  /** Adds rows of blocks `lo`..`hi`, skipping keys the analytics database already holds; returns rows added. */
  private async add(table: Table, rows: readonly Row[], blocks: { lo: number; hi: number }): Promise<number> {
    if (rows.length === 0) return 0;
    const range = { chain: this.chain, ...blocks };
    // Rows of a batch's own blocks can only exist if something else wrote them (an import); zone maps
    // make this probe cheap, and the common case then skips staging and the anti-join.
    const overlap = await this.analytics.one(
      `SELECT 1 FROM ${table} WHERE chain = $chain AND block_number BETWEEN $lo AND $hi LIMIT 1`,
      range,
    );
    if (!overlap) {
      await this.append(table, null, table, rows);
      return rows.length;
    }
    const stage = `stage_${table}`;
    await this.analytics.run(`CREATE TEMP TABLE IF NOT EXISTS ${stage} AS SELECT * FROM ${table} LIMIT 0`);
    await this.analytics.run(`DELETE FROM ${stage}`);
    await this.append(stage, "temp", table, rows);
    const before = await countRows(this.analytics, table);
    await this.analytics.run(
      `INSERT INTO ${table} SELECT * FROM ${stage} s WHERE NOT EXISTS (
         SELECT 1 FROM ${table} t WHERE t.chain = s.chain AND t.tx_hash = s.tx_hash AND t.log_index = s.log_index
           AND t.block_number BETWEEN $lo AND $hi)`,
      blocks,
    );
    return (await countRows(this.analytics, table)) - before;
  }

  private async append(
    target: string,
    catalog: string | null,
    table: Table,
    rows: readonly Row[],
  ): Promise<void> {
    const appender = await this.analytics.connection.createAppender(target, null, catalog);
    const columns = COLUMNS[table] as (a: DuckDBAppender, row: Row, usdc: string) => void;
    try {
      for (const row of rows) {
        appender.appendVarchar(this.chain);
        appender.appendVarchar(row.tx);
        appender.appendInteger(row.logIndex);
        appender.appendBigInt(BigInt(row.block));
        appender.appendTimestamp(timestamp(row.time));
        columns(appender, row, this.usdc);
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  private async saveCheckpoint(batch: Batch, options: CommitOptions): Promise<void> {
    const { end } = batch;
    await this.analytics.run(
      `INSERT INTO indexer_state VALUES ($chain, $start, $block, $hash, to_timestamp($time)::TIMESTAMP, now()::TIMESTAMP)
       ON CONFLICT (chain) DO UPDATE SET block_number = excluded.block_number, block_hash = excluded.block_hash,
         block_time = excluded.block_time, updated_at = excluded.updated_at`,
      { chain: this.chain, block: end.block, hash: end.hash, time: end.time, start: options.startBlock },
    );
    const previous = options.previous;
    if (
      previous &&
      previous.block < end.block &&
      Math.floor(previous.block / CHECKPOINT_SPACING) === Math.floor(end.block / CHECKPOINT_SPACING)
    ) {
      await this.analytics.run("DELETE FROM checkpoints WHERE chain = $chain AND block_number = $block", {
        chain: this.chain,
        block: previous.block,
      });
    }
    await this.analytics.run(
      "INSERT OR REPLACE INTO checkpoints VALUES ($chain, $block, to_timestamp($time)::TIMESTAMP)",
      { chain: this.chain, block: end.block, time: end.time },
    );

    if (batch.hashes.length > 0) {
      const appender = await this.analytics.connection.createAppender("indexer_blocks");
      try {
        for (const h of batch.hashes) {
          appender.appendVarchar(this.chain);
          appender.appendBigInt(BigInt(h.block));
          appender.appendVarchar(h.hash);
          appender.appendTimestamp(timestamp(h.time));
          appender.endRow();
        }
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
    }
    // Hashes older than the reorg depth are no use any more; the checkpoint's own is always kept.
    await this.analytics.run("DELETE FROM indexer_blocks WHERE chain = $chain AND block_number < $keep", {
      chain: this.chain,
      keep: end.block - options.reorgDepth,
    });
  }
}

function timestamp(unixSeconds: number): DuckDBTimestampValue {
  return new DuckDBTimestampValue(BigInt(unixSeconds) * 1_000_000n);
}
