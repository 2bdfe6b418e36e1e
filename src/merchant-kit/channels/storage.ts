/**
 * The server's state of its payment channels (x402 `batch-settlement`), in the merchant's own PostgreSQL or
 * PGlite store: the `ChannelStorage` the SDK's batch-settlement server (`@x402/evm/batch-settlement/server`)
 * reads and changes, one row per channel in `merchant_channels`. Never a file: every process of a merchant
 * shares the rows, and a channel's state is written in the same transactions as the rest of the merchant's.
 *
 * The spec asks the server to serialise each channel's requests; the SDK does it by a reservation it writes
 * into the channel's record (`pendingRequest`) through `updateChannel`, which must therefore be atomic per
 * channel across every process. Here it is one transaction: the channel's advisory lock (which also covers a
 * channel that has no row yet), its row read `FOR UPDATE`, the SDK's callback, and the callback's result
 * written before the commit.
 */
import type { Channel, ChannelStorage } from "@x402/evm/batch-settlement/server";
import type { Database, Queryable } from "../../common/db/index.ts";
import { channelRequest } from "./context.ts";

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
  unclaimed_since_ms`;

/** One receiver's channels (the merchant's `payTo`: the wallet its channels pay). */
export class ChannelStore implements ChannelStorage {
  readonly receiver: string;

  constructor(
    private readonly db: Database,
    receiver: string,
    private readonly now: () => number = Date.now,
  ) {
    this.receiver = receiver.toLowerCase();
  }

  async get(channelId: string): Promise<Channel | undefined> {
    // Within a writing call, in its transaction: on PGlite the database itself waits for that to end.
    const { rows } = await (channelRequest()?.tx ?? this.db).query<ChannelRow>(
      `SELECT ${COLUMNS} FROM merchant_channels WHERE channel_id = $1`,
      [channelId.toLowerCase()],
    );
    return rows[0] && channelOf(rows[0]);
  }

  async list(): Promise<Channel[]> {
    const { rows } = await this.db.query<ChannelRow>(
      `SELECT ${COLUMNS} FROM merchant_channels WHERE receiver = $1 ORDER BY channel_id`,
      [this.receiver],
    );
    return rows.map(channelOf);
  }

  /**
   * Atomic per channel across every process sharing the database (the SDK's contract): see the file's
   * comment. Within a writing call (context.ts's `tx`) it runs inside that call's transaction, as a
   * savepoint, so the charge commits with the call's writes. A failure is noted on the request, whose answer
   * the kit then withholds (payments/paid-handler.ts), before it reaches the SDK, which logs it and goes on.
   */
  async updateChannel(
    channelId: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): Promise<{ channel: Channel | undefined; status: "updated" | "unchanged" | "deleted" }> {
    const id = channelId.toLowerCase();
    const request = channelRequest();
    try {
      return await (request?.tx ?? this.db).transaction(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`x402m_channel:${id}`]);
        const { rows } = await tx.query<ChannelRow>(
          `SELECT ${COLUMNS} FROM merchant_channels WHERE channel_id = $1 FOR UPDATE`,
          [id],
        );
        const row = rows[0];
        const current = row && channelOf(row);
        const next = update(current);
        if (next === current) return { channel: current, status: "unchanged" as const };
        if (!next) {
          if (row) await tx.query("DELETE FROM merchant_channels WHERE channel_id = $1", [id]);
          return { channel: undefined, status: row ? ("deleted" as const) : ("unchanged" as const) };
        }
        await write(tx, id, next, unclaimedSince(row, next, this.now()));
        return { channel: next, status: "updated" as const };
      });
    } catch (error) {
      if (request) request.unsaved ??= error;
      throw error;
    }
  }

  /** Gives back the reservation `pendingId` holds on the channel, if it still holds it (context.ts's `release`). */
  async releasePending(channelId: string, pendingId: string): Promise<void> {
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
    }>(
      `SELECT channel_id, (charged - total_claimed)::text AS owed, unclaimed_since_ms AS since, withdraw_requested_at
       FROM merchant_channels WHERE receiver = $1 AND charged > total_claimed ORDER BY channel_id`,
      [this.receiver],
    );
    return rows.map((r) => ({
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
  return rowCount;
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

function write(q: Queryable, id: string, c: Channel, unclaimedSinceMs: number | null) {
  const pending = c.pendingRequest;
  return q.query(
    `INSERT INTO merchant_channels (channel_id, receiver, payer, config, charged, signed_max, signature,
       balance, total_claimed, withdraw_requested_at, refund_nonce, onchain_synced_ms, last_request_ms,
       pending_id, pending_max, pending_expires_ms, unclaimed_since_ms)
     VALUES ($1, $2, $3, $4::jsonb, $5::numeric, $6::numeric, $7, $8::numeric, $9::numeric, $10, $11, $12, $13,
       $14, $15::numeric, $16, $17)
     ON CONFLICT (channel_id) DO UPDATE SET receiver = $2, payer = $3, config = $4::jsonb, charged = $5::numeric,
       signed_max = $6::numeric, signature = $7, balance = $8::numeric, total_claimed = $9::numeric,
       withdraw_requested_at = $10, refund_nonce = $11, onchain_synced_ms = $12, last_request_ms = $13,
       pending_id = $14, pending_max = $15::numeric, pending_expires_ms = $16, unclaimed_since_ms = $17,
       updated_at = now()`,
    [
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
    ],
  );
}
