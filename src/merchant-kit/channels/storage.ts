/**
 * The server's state of its payment channels (x402 `batch-settlement`), in the merchant's own PostgreSQL or
 * PGlite store: the `ChannelStorage` the SDK's batch-settlement server (`@x402/evm/batch-settlement/server`)
 * reads and changes, one row per channel in `merchant_channels`. Never a file: every process of a merchant
 * shares the rows, and a channel's state is written in the same transactions as the rest of the merchant's.
 *
 * The spec asks the server to serialise each channel's requests; the SDK does it by a reservation it writes
 * into the channel's record (`pendingRequest`) through `updateChannel`, which must therefore be atomic per
 * channel across every process. Here each change is one conditional statement on the channel's row, the
 * row serialising them (issue 66, item 2): the callback's result is written only if the row is still the
 * version the callback was given (its `xmin`, which every write of the row changes, whoever makes it), and
 * is otherwise read again and the callback run again on what is there, as the SDK's own Redis storage does.
 * So a voucher's charge is one `UPDATE` that sets the new cumulative amount only if the stored one is what
 * the voucher builds on, and no advisory lock or transaction of several statements is held meanwhile. The
 * version the last read or write left is kept, so that a change right after one (the reservation after the
 * voucher's check, the charge after the reservation) is sent without reading the row first. On PGlite a
 * voucher's reservation is not written at all but held in the process (see `change`), so there the charge
 * is a voucher's only write; on a server, which other processes share, the reservation is in the row.
 *
 * Vouchers' writes made together (outside a writing call's transaction) go in one statement (group commit,
 * common/db/grouped.ts; `writeVouchers`), each row still changed only at its own version: a statement costs
 * PGlite the same CPU for one row or sixteen. Each voucher goes on only once that statement has committed, so
 * none is answered before its charge is durable, and a statement that fails fails every voucher in it.
 */

import type { ChannelConfig } from "@x402/evm";
import type { Channel, ChannelStorage } from "@x402/evm/batch-settlement/server";
import { type GroupedWriter, groupedWriter, isRetryAlone } from "../../common/db/grouped.ts";
import type { Database, Queryable } from "../../common/db/index.ts";
import { type ChannelRequest, channelRequest } from "./context.ts";
import { channelIdOf } from "./voucher.ts";

/** A channel's row as the database gives it back (int8 as bigint, numeric as string). */
interface ChannelRow {
  channel_id: string;
  config: Channel["channelConfig"];
  charged: string;
  signed_max: string;
  signature: string;
  balance: string;
  total_claimed: string;
  withdraw_requested_at: bigint;
  refund_nonce: bigint;
  onchain_synced_ms: bigint | null;
  last_request_ms: bigint;
  pending_id: string | null;
  pending_max: string | null;
  pending_expires_ms: bigint | null;
  unclaimed_since_ms: bigint | null;
  /** The row's `xmin` as text: changed by every write of the row. */
  version: string;
}

/** What the claim schedule needs of a channel with charges not yet claimed. */
export interface OwedChannel {
  channelId: string;
  /** Charged and not yet claimed, in the token's atomic units. */
  owed: bigint;
  /** Since when (unix ms) it has had charges not yet claimed. */
  since: number;
  /** The payer has started a timed withdrawal (mirrored from the escrow): claim before it completes. */
  withdrawing: boolean;
}

const COLUMNS = `channel_id, config, charged::text AS charged, signed_max::text AS signed_max, signature,
  balance::text AS balance, total_claimed::text AS total_claimed, withdraw_requested_at, refund_nonce,
  onchain_synced_ms, last_request_ms, pending_id, pending_max::text AS pending_max, pending_expires_ms,
  unclaimed_since_ms, xmin::text AS version`;

/** Rows kept by their last known version, at most this many (the oldest go first). */
const MAX_KNOWN = 10_000;

/** What a process knows of one database's channels, shared by every store on it. */
interface Known {
  /** The rows last read or written outside a transaction, by channel: a guess, checked by every write. */
  rows: Map<string, ChannelRow | undefined>;
  /** PGlite: the reservations held in this process's memory, with the version of the row they build on. */
  held: Map<string, { channel: Channel; version: string }>;
  /**
   * Vouchers' writes outside a transaction (charges; on a server, reservations too), those made together
   * written in one statement (`writeVouchers`): the version each row was left at, or undefined where it had
   * changed. One per database, whichever store of the process writes.
   */
  vouchers: GroupedWriter<VoucherWrite, string | undefined>;
}

const knownByDb = new WeakMap<Database, Known>();

function knownOf(db: Database): Known {
  let known = knownByDb.get(db);
  if (!known) {
    known = {
      rows: new Map(),
      held: new Map(),
      // A row refused for its own values (a duplicate ledger key) fails its voucher alone, as it would alone.
      vouchers: groupedWriter((batch) => writeVouchers(db, batch), { itemError: isRetryAlone }),
    };
    knownByDb.set(db, known);
  }
  return known;
}

/** One receiver's channels (the merchant's `payTo`: the wallet its channels pay). */
export class ChannelStore implements ChannelStorage {
  readonly receiver: string;

  constructor(
    private readonly db: Database,
    receiver: string,
    private readonly now: () => number = Date.now,
    /**
     * The network whose channels `list` and `owed` return, where the wallet is paid on several (a schedule per
     * network claims on its chain); unset, every channel of the wallet.
     */
    private readonly network?: string,
  ) {
    this.receiver = receiver.toLowerCase();
  }

  async get(channelId: string): Promise<Channel | undefined> {
    const id = channelId.toLowerCase();
    const tx = channelRequest()?.tx;
    // PGlite: this process is the only one on the database (it locks the directory), and every write of a
    // channel goes through this file, which keeps the row it leaves (or forgets it): the kept row is the row,
    // and a voucher's check needs no read (a quarter of its statements). A server's rows other processes change.
    if (!tx && this.db.kind === "pglite" && this.known.rows.has(id))
      return this.current(id, this.known.rows.get(id));
    // Within a writing call, in its transaction: on PGlite the database itself waits for that to end.
    const row = await readRow(tx ?? this.db, id);
    // What a transaction reads may be its own write, which a rollback takes back: never kept.
    if (!tx) this.keep(id, row);
    return this.current(id, row);
  }

  /** The channel as the row and a reservation held in memory on it (PGlite) say. */
  private current(id: string, row: ChannelRow | undefined): Channel | undefined {
    const held = this.known.held.get(id);
    if (held && row && held.version === row.version) return structuredClone(held.channel);
    return row && channelOf(row);
  }

  async list(): Promise<Channel[]> {
    const { rows } = await this.db.query<ChannelRow>(
      `SELECT ${COLUMNS} FROM merchant_channels WHERE receiver = $1 ORDER BY channel_id`,
      [this.receiver],
    );
    return rows.filter((r) => this.onNetwork(r.channel_id, r.config)).map(channelOf);
  }

  /**
   * Whether a channel is on the network this store is kept for (`network`, where a wallet is paid on several):
   * a channel's id is the hash of its config on its chain, so it says which.
   */
  private onNetwork(channelId: string, config: unknown): boolean {
    if (!this.network) return true;
    try {
      return channelIdOf(config as ChannelConfig, this.network) === channelId.toLowerCase();
    } catch {
      return false;
    }
  }

  /**
   * Atomic per channel across every process sharing the database (the SDK's contract): see the file's
   * comment. Within a writing call (context.ts's `tx`) it runs inside that call's transaction, so the charge
   * commits with the call's writes (and the row, once written, stays locked until then). A failure is noted
   * on the request, whose answer the kit then withholds (payments/paid-handler.ts), before it reaches the
   * SDK, which logs it and goes on.
   */
  async updateChannel(
    channelId: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): Promise<{ channel: Channel | undefined; status: "updated" | "unchanged" | "deleted" }> {
    const id = channelId.toLowerCase();
    const request = channelRequest();
    const tx = request?.tx;
    // A writing call's change must not wait behind others of this process: on PGlite they wait for its
    // transaction, which holds the one connection.
    if (tx) return this.change(id, update, request, tx);
    return this.inTurn(id, () => this.change(id, update, request, undefined));
  }

  private async change(
    id: string,
    update: (current: Channel | undefined) => Channel | undefined,
    request: ReturnType<typeof channelRequest>,
    tx: Queryable | undefined,
  ): Promise<{ channel: Channel | undefined; status: "updated" | "unchanged" | "deleted" }> {
    const q = tx ?? this.db;
    try {
      // The version last seen, if any; then, whenever it turns out stale, the row as it is now.
      let seen: { row: ChannelRow | undefined; fresh: boolean } | undefined = this.known.rows.has(id)
        ? { row: this.known.rows.get(id), fresh: false }
        : undefined;
      for (;;) {
        if (!seen) {
          seen = { row: await readRow(q, id), fresh: true };
          if (!tx) this.keep(id, seen.row);
        }
        const { row } = seen;
        const current = this.current(id, row);
        const next = update(current);
        if (next === current || !next) {
          // A verdict (busy, stale) or a deletion decided on a kept version may be out of date: read again.
          if (!seen.fresh) {
            seen = undefined;
            continue;
          }
          if (next === current) {
            if (!tx) this.keep(id, row);
            return { channel: current, status: "unchanged" };
          }
          if (row && !(await deleteIf(q, id, row.version))) {
            seen = undefined;
            continue;
          }
          this.forget(id);
          return { channel: undefined, status: row ? "deleted" : "unchanged" };
        }
        if (!tx && this.db.kind === "pglite" && row && this.known.rows.get(id)?.version === row.version) {
          // PGlite: this process is the only one on the database (it locks the directory), so what only
          // reserves the channel for a request is held here, not written: the charge that ends it is then
          // the voucher's one statement, and a crash takes the reservation with it, as it did the request.
          const stored = channelOf(row);
          if (next.pendingRequest && reservesOnly(stored, next)) {
            this.known.held.set(id, { channel: structuredClone(next), version: row.version });
            return { channel: next, status: "updated" };
          }
          // A reservation held here given back (the call failed): nothing was written, nothing to write.
          const held = this.known.held.get(id);
          if (
            held?.version === row.version &&
            !next.pendingRequest &&
            !stored.pendingRequest &&
            reservesOnly(stored, next)
          ) {
            this.known.held.delete(id);
            return { channel: next, status: "updated" };
          }
        }
        // The voucher's charge (its cumulative amount grows) carries the call's ledger row: one statement.
        const ledger =
          request?.ledger &&
          !request.ledger.written &&
          row &&
          BigInt(next.chargedCumulativeAmount) > BigInt(row.charged)
            ? request.ledger
            : undefined;
        const written = await writeIf(
          q,
          // Outside a writing call's transaction, a voucher's write goes with those made together.
          tx ? undefined : this.known.vouchers,
          id,
          row,
          next,
          unclaimedSince(row, next, this.now()),
          ledger,
        );
        if (!written) {
          this.known.rows.delete(id);
          seen = undefined;
          continue;
        }
        if (ledger) ledger.written = true;
        this.known.held.delete(id);
        if (tx) this.known.rows.delete(id);
        else this.keep(id, written);
        return { channel: next, status: "updated" };
      }
    } catch (error) {
      this.known.rows.delete(id);
      if (request) request.unsaved ??= error;
      throw error;
    }
  }

  /**
   * Runs this process's changes of one channel one after another: racing each other, all but one would
   * find the row changed and be sent again, n² statements for n at once.
   */
  private inTurn<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.turns.get(id) ?? Promise.resolve()).then(fn);
    const done = run.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(id, done);
    void done.then(() => {
      if (this.turns.get(id) === done) this.turns.delete(id);
    });
    return run;
  }

  private readonly turns = new Map<string, Promise<void>>();

  private get known(): Known {
    return knownOf(this.db);
  }

  private keep(id: string, row: ChannelRow | undefined): void {
    const { rows } = this.known;
    rows.delete(id);
    if (rows.size >= MAX_KNOWN) rows.delete(rows.keys().next().value as string);
    rows.set(id, row);
  }

  private forget(id: string): void {
    this.known.rows.delete(id);
    this.known.held.delete(id);
  }

  /** Gives back the reservation `pendingId` holds on the channel, if it still holds it (context.ts's `release`). */
  async releasePending(channelId: string, pendingId: string): Promise<void> {
    const id = channelId.toLowerCase();
    if (this.known.held.get(id)?.channel.pendingRequest?.pendingId === pendingId) this.known.held.delete(id);
    this.known.rows.delete(id);
    await this.db.query(
      `UPDATE merchant_channels SET pending_id = NULL, pending_max = NULL, pending_expires_ms = NULL
       WHERE channel_id = $1 AND pending_id = $2`,
      [channelId.toLowerCase(), pendingId],
    );
  }

  /** The receiver's channels with charges not yet claimed. */
  async owed(): Promise<OwedChannel[]> {
    const { rows } = await this.db.query<{
      channel_id: string;
      owed: string;
      since: bigint | null;
      withdraw_requested_at: bigint;
      config: unknown;
    }>(
      `SELECT channel_id, (charged - total_claimed)::text AS owed, unclaimed_since_ms AS since, withdraw_requested_at,
              config
       FROM merchant_channels WHERE receiver = $1 AND charged > total_claimed ORDER BY channel_id`,
      [this.receiver],
    );
    return rows
      .filter((r) => this.onNetwork(r.channel_id, r.config))
      .map((r) => ({
        channelId: r.channel_id,
        owed: BigInt(r.owed),
        since: Number(r.since ?? 0n),
        withdrawing: r.withdraw_requested_at > 0n,
      }));
  }
}

/**
 * Gives back every channel reservation in the database: on PGlite, at a process's start, when no other
 * process can hold one (PGlite opens a data directory in one process at a time), so a reservation there is
 * a crashed process's, whose request never answered and whose charge never committed. Without this, the
 * channel would answer "busy" until the reservation expires. A PostgreSQL server is shared by processes
 * that may be running: there, a crashed process's reservation expires (the route's time budget and a
 * minute, channels/routes: `channelTimeoutSeconds`).
 */
export async function releaseCrashedReservations(db: Database): Promise<number> {
  if (db.kind !== "pglite") return 0;
  const { rowCount } = await db.query(
    `UPDATE merchant_channels SET pending_id = NULL, pending_max = NULL, pending_expires_ms = NULL
     WHERE pending_id IS NOT NULL`,
  );
  // The rows this process kept are not the rows any more (`ChannelStore.get` trusts them on PGlite).
  knownByDb.delete(db);
  return rowCount;
}

/**
 * Whether `next` differs from the stored channel only in what a voucher's reservation sets: the request
 * that holds it, and the voucher it brought (its amount, signature and time), which the charge writes.
 */
function reservesOnly(stored: Channel, next: Channel): boolean {
  const strip = ({ pendingRequest, signedMaxClaimable, signature, lastRequestTimestamp, ...rest }: Channel) =>
    rest;
  return canonical(strip(stored)) === canonical(strip(next));
}

/**
 * Whether `next` differs from the stored channel only in what a voucher sets, reserving the channel or charging
 * it: `reservesOnly`'s fields and the cumulative charge.
 */
function voucherOnly(stored: Channel, next: Channel): boolean {
  return reservesOnly({ ...stored, chargedCumulativeAmount: next.chargedCumulativeAmount }, next);
}

/** JSON with every object's keys in order (the stored config comes back from jsonb in another order). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function channelOf(row: ChannelRow): Channel {
  return {
    channelId: row.channel_id,
    channelConfig: row.config,
    chargedCumulativeAmount: row.charged,
    signedMaxClaimable: row.signed_max,
    signature: row.signature,
    balance: row.balance,
    totalClaimed: row.total_claimed,
    withdrawRequestedAt: Number(row.withdraw_requested_at),
    refundNonce: Number(row.refund_nonce),
    ...(row.onchain_synced_ms !== null && { onchainSyncedAt: Number(row.onchain_synced_ms) }),
    lastRequestTimestamp: Number(row.last_request_ms),
    ...(row.pending_id !== null && {
      pendingRequest: {
        pendingId: row.pending_id,
        signedMaxClaimable: row.pending_max ?? "0",
        expiresAt: Number(row.pending_expires_ms ?? 0n),
      },
    }),
  };
}

/** Since when the channel owes claims after this write: kept while it owed before, now when it starts to. */
function unclaimedSince(row: ChannelRow | undefined, next: Channel, now: number): number | null {
  if (BigInt(next.chargedCumulativeAmount) <= BigInt(next.totalClaimed)) return null;
  const owedBefore = row !== undefined && BigInt(row.charged) > BigInt(row.total_claimed);
  return owedBefore && row.unclaimed_since_ms !== null ? Number(row.unclaimed_since_ms) : now;
}

async function readRow(q: Queryable, id: string): Promise<ChannelRow | undefined> {
  const { rows } = await q.query<ChannelRow>(
    `SELECT ${COLUMNS} FROM merchant_channels WHERE channel_id = $1`,
    [id],
  );
  return rows[0];
}

async function deleteIf(q: Queryable, id: string, version: string): Promise<boolean> {
  const { rowCount } = await q.query(
    "DELETE FROM merchant_channels WHERE channel_id = $1 AND xmin = $2::xid",
    [id, version],
  );
  return rowCount > 0;
}

/**
 * Writes `c` as the channel's row in one statement, only if the row is still at `version` (absent when
 * `version` is undefined); the row as written, or undefined when it had changed (nothing written). With
 * `ledger`, a charge of an existing row: the call's ledger row is written `settled` in the same statement, and
 * only if the charge is.
 */
async function writeIf(
  q: Queryable,
  vouchers: GroupedWriter<VoucherWrite, string | undefined> | undefined,
  id: string,
  stored: ChannelRow | undefined,
  c: Channel,
  unclaimedSinceMs: number | null,
  ledger?: NonNullable<ChannelRequest["ledger"]>,
): Promise<ChannelRow | undefined> {
  const version = stored?.version;
  if (stored && voucherOnly(channelOf(stored), c))
    return writeVoucher(q, vouchers, stored, c, unclaimedSinceMs, ledger);
  const pending = c.pendingRequest;
  const values = [
    id,
    c.channelConfig.receiver.toLowerCase(),
    c.channelConfig.payer.toLowerCase(),
    JSON.stringify(c.channelConfig),
    c.chargedCumulativeAmount,
    c.signedMaxClaimable,
    c.signature,
    c.balance,
    c.totalClaimed,
    BigInt(c.withdrawRequestedAt),
    BigInt(c.refundNonce),
    c.onchainSyncedAt === undefined ? null : BigInt(Math.floor(c.onchainSyncedAt)),
    BigInt(Math.floor(c.lastRequestTimestamp)),
    pending?.pendingId ?? null,
    pending?.signedMaxClaimable ?? null,
    pending ? BigInt(Math.floor(pending.expiresAt)) : null,
    unclaimedSinceMs === null ? null : BigInt(unclaimedSinceMs),
  ];
  const { rows } =
    version === undefined
      ? await q.query<ChannelRow>(
          `INSERT INTO merchant_channels (channel_id, receiver, payer, config, charged, signed_max, signature,
             balance, total_claimed, withdraw_requested_at, refund_nonce, onchain_synced_ms, last_request_ms,
             pending_id, pending_max, pending_expires_ms, unclaimed_since_ms)
           VALUES ($1, $2, $3, $4::jsonb, $5::numeric, $6::numeric, $7, $8::numeric, $9::numeric, $10, $11, $12,
             $13, $14, $15::numeric, $16, $17)
           ON CONFLICT (channel_id) DO NOTHING
           RETURNING ${COLUMNS}`,
          values,
        )
      : ledger
        ? await q.query<ChannelRow>(
            `WITH charged AS (${UPDATE_IF} RETURNING ${COLUMNS}), recorded AS (
               INSERT INTO merchant_payments (payer, nonce, resource, valid_before, amount, state, finished_at)
               SELECT $19, $20, $21, to_timestamp($22), $23::numeric, 'settled', clock_timestamp() FROM charged
             )
             SELECT * FROM charged`,
            [
              ...values,
              version,
              ledger.payer,
              ledger.nonce,
              ledger.resource,
              ledger.validBefore,
              ledger.amount.toString(),
            ],
          )
        : await q.query<ChannelRow>(`${UPDATE_IF} RETURNING ${COLUMNS}`, [...values, version]);
  return rows[0];
}

/** What a voucher's reservation or charge writes (`writeVoucher`): the columns a voucher changes, at a version. */
interface VoucherWrite {
  channelId: string;
  charged: string;
  signedMax: string;
  signature: string;
  lastRequestMs: bigint;
  pendingId: string | null;
  pendingMax: string | null;
  pendingExpiresMs: bigint | null;
  unclaimedSinceMs: bigint | null;
  version: string;
  ledger?: NonNullable<ChannelRequest["ledger"]>;
}

/**
 * A voucher's reservation or charge of the row `stored` (`voucherOnly`): only the columns a voucher changes are
 * sent and given back, not the channel's terms (its config as JSON, parsed by the database and again here) nor
 * its balances, which the row keeps as `stored` has them, since the write applies only at its version. With
 * `ledger`, the call's ledger row in the same statement, as `writeIf` writes it. Through `vouchers` (outside a
 * transaction), in one statement with the other vouchers' writes made together (`writeVouchers`); else on `q`.
 */
async function writeVoucher(
  q: Queryable,
  vouchers: GroupedWriter<VoucherWrite, string | undefined> | undefined,
  stored: ChannelRow,
  c: Channel,
  unclaimedSinceMs: number | null,
  ledger?: NonNullable<ChannelRequest["ledger"]>,
): Promise<ChannelRow | undefined> {
  const pending = c.pendingRequest;
  const row: Omit<ChannelRow, "version"> = {
    ...stored,
    charged: c.chargedCumulativeAmount,
    signed_max: c.signedMaxClaimable,
    signature: c.signature,
    last_request_ms: BigInt(Math.floor(c.lastRequestTimestamp)),
    pending_id: pending?.pendingId ?? null,
    pending_max: pending?.signedMaxClaimable ?? null,
    pending_expires_ms: pending ? BigInt(Math.floor(pending.expiresAt)) : null,
    unclaimed_since_ms: unclaimedSinceMs === null ? null : BigInt(unclaimedSinceMs),
  };
  const write: VoucherWrite = {
    channelId: stored.channel_id,
    charged: row.charged,
    signedMax: row.signed_max,
    signature: row.signature,
    lastRequestMs: row.last_request_ms,
    pendingId: row.pending_id,
    pendingMax: row.pending_max,
    pendingExpiresMs: row.pending_expires_ms,
    unclaimedSinceMs: row.unclaimed_since_ms,
    version: stored.version,
    ...(ledger && { ledger }),
  };
  const version = vouchers ? await vouchers.write(write) : await writeVoucherAlone(q, write);
  return version === undefined ? undefined : { ...row, version };
}

/** One voucher's write in a statement of its own: the row's new version, or undefined where it had changed. */
async function writeVoucherAlone(q: Queryable, w: VoucherWrite): Promise<string | undefined> {
  const values = [
    w.channelId,
    w.charged,
    w.signedMax,
    w.signature,
    w.lastRequestMs,
    w.pendingId,
    w.pendingMax,
    w.pendingExpiresMs,
    w.unclaimedSinceMs,
    w.version,
  ];
  const update = `UPDATE merchant_channels SET charged = $2::numeric, signed_max = $3::numeric, signature = $4,
      last_request_ms = $5, pending_id = $6, pending_max = $7::numeric, pending_expires_ms = $8,
      unclaimed_since_ms = $9, updated_at = now()
    WHERE channel_id = $1 AND xmin = $10::xid
    RETURNING xmin::text AS version`;
  const { ledger } = w;
  const { rows } = ledger
    ? await q.query<{ version: string }>(
        `WITH charged AS (${update}), recorded AS (
           INSERT INTO merchant_payments (payer, nonce, resource, valid_before, amount, state, finished_at)
           SELECT $11, $12, $13, to_timestamp($14), $15::numeric, 'settled', clock_timestamp() FROM charged
         )
         SELECT * FROM charged`,
        [
          ...values,
          ledger.payer,
          ledger.nonce,
          ledger.resource,
          ledger.validBefore,
          ledger.amount.toString(),
        ],
      )
    : await q.query<{ version: string }>(update, values);
  return rows[0]?.version;
}

/**
 * Vouchers' writes made together, each as `writeVoucherAlone` would write it, in one statement: each row
 * changed only at its own version (one that had changed is left and its voucher read again, as alone), each
 * charge's ledger row written only with it. Measured on PGlite (bench/grouped-shapes.ts), a charge costs the
 * process 0.38 ms alone, 0.18 in a statement of four, 0.07 in one of sixteen, and a transaction of the same
 * statements no less than alone (0.37-0.39 ms), or more with a savepoint each (0.49-0.54 ms): PGlite's cost is
 * the statement, not the commit (docs/benchmarks-log.md, 2026-11-28, night, "group commit").
 */
async function writeVouchers(db: Database, batch: readonly VoucherWrite[]): Promise<(string | undefined)[]> {
  if (batch.length === 1) return [await writeVoucherAlone(db, batch[0] as VoucherWrite)];
  const text = (of: (w: VoucherWrite) => bigint | string | null) =>
    batch.map((w) => {
      const v = of(w);
      return v === null ? null : v.toString();
    });
  const { rows } = await db.query<{ i: bigint; version: string }>(
    `WITH t AS (
       SELECT * FROM unnest($1::text[], $2::numeric[], $3::numeric[], $4::text[], $5::int8[], $6::text[],
         $7::numeric[], $8::int8[], $9::int8[], $10::xid[], $11::text[], $12::text[], $13::text[], $14::float8[],
         $15::numeric[])
         WITH ORDINALITY AS t(channel_id, charged, signed_max, signature, last_request_ms, pending_id, pending_max,
           pending_expires_ms, unclaimed_since_ms, version, payer, nonce, resource, valid_before, amount, i)
     ), charged AS (
       UPDATE merchant_channels m SET charged = t.charged, signed_max = t.signed_max, signature = t.signature,
         last_request_ms = t.last_request_ms, pending_id = t.pending_id, pending_max = t.pending_max,
         pending_expires_ms = t.pending_expires_ms, unclaimed_since_ms = t.unclaimed_since_ms, updated_at = now()
       FROM t WHERE m.channel_id = t.channel_id AND m.xmin = t.version
       RETURNING t.i, m.xmin::text AS version, t.payer, t.nonce, t.resource, t.valid_before, t.amount
     ), recorded AS (
       INSERT INTO merchant_payments (payer, nonce, resource, valid_before, amount, state, finished_at)
       SELECT payer, nonce, resource, to_timestamp(valid_before), amount, 'settled', clock_timestamp()
       FROM charged WHERE nonce IS NOT NULL
     )
     SELECT i, version FROM charged`,
    [
      text((w) => w.channelId),
      text((w) => w.charged),
      text((w) => w.signedMax),
      text((w) => w.signature),
      text((w) => w.lastRequestMs),
      text((w) => w.pendingId),
      text((w) => w.pendingMax),
      text((w) => w.pendingExpiresMs),
      text((w) => w.unclaimedSinceMs),
      text((w) => w.version),
      text((w) => w.ledger?.payer ?? null),
      text((w) => w.ledger?.nonce ?? null),
      text((w) => w.ledger?.resource ?? null),
      batch.map((w) => w.ledger?.validBefore ?? null),
      text((w) => w.ledger?.amount ?? null),
    ],
  );
  // Two writes of one channel in a group (two stores of the process): the row takes one, the other is stale.
  const versions: (string | undefined)[] = batch.map(() => undefined);
  for (const r of rows) versions[Number(r.i) - 1] = r.version;
  return versions;
}

/** The row's change, only if it is still at the version `$18`. */
const UPDATE_IF = `UPDATE merchant_channels SET receiver = $2, payer = $3, config = $4::jsonb, charged = $5::numeric,
  signed_max = $6::numeric, signature = $7, balance = $8::numeric, total_claimed = $9::numeric,
  withdraw_requested_at = $10, refund_nonce = $11, onchain_synced_ms = $12, last_request_ms = $13,
  pending_id = $14, pending_max = $15::numeric, pending_expires_ms = $16, unclaimed_since_ms = $17,
  updated_at = now()
WHERE channel_id = $1 AND xmin = $18::xid`;
