/**
 * One wallet's share of the state: the transaction every write runs in, the purge of its expired data and
 * its quota. Writes of one wallet are serialised by a transaction-scoped advisory lock, so the quota check
 * after a write sees every concurrent write of that wallet: two writes cannot both pass the last bytes.
 */
import type { Database, Queryable } from "../../../common/db/index.ts";
import { AppError, BadInputError } from "../../../common/errors.ts";
import { QUOTA_BYTES } from "./limits.ts";

/** What the engine may be given besides the database: tests shrink the quota and fix the clock. */
export interface StateOptions {
  /** Bytes per wallet, collections and scratchpads together. Default 50 MB (docs/platform.md, "The utility API's endpoints"). */
  quotaBytes?: number;
  now?: () => Date;
}

/** One call's view: the database, the paying wallet (lower-case), its quota and the call's instant. */
export interface WalletScope {
  db: Database;
  payer: string;
  quotaBytes: number;
  now: Date;
}

/** The tables (schema.ts) are migrated when the host starts, before any call. */
export function walletScope(db: Database, payer: string, options: StateOptions = {}): WalletScope {
  return {
    db,
    payer: payer.toLowerCase(),
    quotaBytes: options.quotaBytes ?? QUOTA_BYTES,
    now: options.now?.() ?? new Date(),
  };
}

/** The SQL condition "not expired at $n" for a table alias. */
export const visible = (alias: string, param: number) =>
  `(${alias}.expires_at IS NULL OR ${alias}.expires_at > $${param})`;

/**
 * Runs `fn` in one transaction holding the wallet's lock, after dropping the wallet's expired data (which
 * frees its quota and its names at once), and checks the quota before committing: past it, 507
 * `quota_exceeded` and the transaction rolls back, so nothing is written. `grows: false` (deletes) skips it.
 */
export async function writeForWallet<T>(
  scope: WalletScope,
  fn: (tx: Queryable) => Promise<T>,
  { grows = true }: { grows?: boolean } = {},
): Promise<T> {
  return scope.db.transaction(async (tx) => {
    // hashtextextended gives a bigint key; a collision between two wallets only serialises them.
    await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`utility_state:${scope.payer}`]);
    await purgeExpired(tx, scope.now, scope.payer);
    const result = await fn(tx);
    // A delete only frees bytes: it must succeed even for a wallet above a (lowered) quota.
    if (!grows) return result;
    const used = await bytesUsed(tx, scope);
    if (used > BigInt(scope.quotaBytes)) {
      throw new AppError(
        507,
        "quota_exceeded",
        `this write would use ${used} bytes of this wallet's ${scope.quotaBytes}-byte quota (store and scratchpads together): nothing was written; delete data or let it expire`,
      );
    }
    return result;
  });
}

/** The wallet's bytes: its visible collections and scratchpads, as stored. */
export async function bytesUsed(q: Queryable, scope: WalletScope): Promise<bigint> {
  const { rows } = await q.query<{ bytes: bigint }>(
    `SELECT (SELECT coalesce(sum(c.bytes), 0) FROM utility_state_collections c
              WHERE c.payer = $1 AND ${visible("c", 2)})
          + (SELECT coalesce(sum(s.bytes), 0) FROM utility_state_scratchpads s
              WHERE s.payer = $1 AND ${visible("s", 2)}) AS bytes`,
    [scope.payer, scope.now],
  );
  return BigInt(rows[0]?.bytes ?? 0);
}

/** The quota figures both listings (/api/store, /api/scratchpad) answer with. */
export async function quotaUsage(
  scope: WalletScope,
): Promise<{ bytes_used: number; quota_bytes: number; bytes_free: number }> {
  const used = Number(await bytesUsed(scope.db, scope));
  return {
    bytes_used: used,
    quota_bytes: scope.quotaBytes,
    bytes_free: Math.max(0, scope.quotaBytes - used),
  };
}

/** Deletes expired collections (their rows cascade) and scratchpads: of one wallet, or of all. */
export async function purgeExpired(q: Queryable, now: Date, payer?: string): Promise<void> {
  const own = payer === undefined ? "" : "AND payer = $2";
  const params = payer === undefined ? [now] : [now, payer];
  await q.query(`DELETE FROM utility_state_collections WHERE expires_at <= $1 ${own}`, params);
  await q.query(`DELETE FROM utility_state_scratchpads WHERE expires_at <= $1 ${own}`, params);
}

/** The expiry a call asked for: a date (not in the past), seconds from now, or none (undefined). */
export function expiryOf(
  scope: WalletScope,
  input: { expires_at?: string | null | undefined; ttl_seconds?: number | undefined },
): Date | null | undefined {
  if (input.expires_at !== undefined && input.ttl_seconds !== undefined) {
    throw new BadInputError("give either `expires_at` or `ttl_seconds`, not both", "invalid_input");
  }
  if (input.ttl_seconds !== undefined) return new Date(scope.now.getTime() + input.ttl_seconds * 1000);
  if (input.expires_at === undefined) return undefined;
  if (input.expires_at === null) return null;
  const date = new Date(input.expires_at);
  if (date.getTime() <= scope.now.getTime()) {
    throw new BadInputError("`expires_at` is in the past: the data would vanish at once", "invalid_input");
  }
  return date;
}
