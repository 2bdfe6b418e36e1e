/**
 * The SQL of `/api/store`: a wallet's collections of JSON rows. Every statement starts from the paying
 * wallet (`payer = $1`, or a collection id found that way), so no input can name another wallet's data.
 * Writes run in `writeForWallet` (wallet lock, expired data purged, quota checked before commit).
 */
import type { Queryable } from "../../../common/db/index.ts";
import { AppError, BadInputError, NotFoundError } from "../../../common/errors.ts";
import type { Row } from "./csv.ts";
import { MAX_COLLECTIONS, MAX_ROW_BYTES } from "./limits.ts";
import { visible, type WalletScope, writeForWallet } from "./wallet.ts";

export interface CollectionInfo {
  name: string;
  rows: number;
  bytes: number;
  created_at: string;
  expires_at: string | null;
}

export interface StoredRow {
  id: string;
  created_at: string;
  data: Row;
}

interface CollectionRecord {
  id: bigint;
  name: string;
  row_count: bigint;
  bytes: bigint;
  created_at: Date;
  expires_at: Date | null;
}

const infoOf = (c: CollectionRecord): CollectionInfo => ({
  name: c.name,
  rows: Number(c.row_count),
  bytes: Number(c.bytes),
  created_at: c.created_at.toISOString(),
  expires_at: c.expires_at?.toISOString() ?? null,
});

export async function listCollections(scope: WalletScope): Promise<CollectionInfo[]> {
  const { rows } = await scope.db.query<CollectionRecord>(
    `SELECT id, name, row_count, bytes, created_at, expires_at FROM utility_state_collections c
     WHERE payer = $1 AND ${visible("c", 2)} ORDER BY name`,
    [scope.payer, scope.now],
  );
  return rows.map(infoOf);
}

async function findCollection(q: Queryable, scope: WalletScope, name: string): Promise<CollectionRecord> {
  const { rows } = await q.query<CollectionRecord>(
    `SELECT id, name, row_count, bytes, created_at, expires_at FROM utility_state_collections c
     WHERE payer = $1 AND name = $2 AND ${visible("c", 3)}`,
    [scope.payer, name, scope.now],
  );
  const found = rows[0];
  if (!found) throw new NotFoundError(`no collection "${name}" for this wallet`, "collection_not_found");
  return found;
}

/**
 * Rows one INSERT statement takes. A whole write (1,000 rows of 16 KiB) as one 16 MB JSONB parameter grew
 * the serve process by 213 MB, which PGlite's WebAssembly memory never gives back (issue 69); a chunk at
 * a time, in the same transaction, keeps each statement's copies small.
 */
const INSERT_CHUNK_ROWS = 50;

/**
 * Inserts rows, creating the collection when it does not exist (an empty `rows` just creates it).
 * `expiresAt`: a date sets the collection's expiry, null removes it, undefined keeps it.
 */
export async function insertRows(
  scope: WalletScope,
  collection: string,
  rows: readonly Row[],
  expiresAt?: Date | null,
): Promise<{ collection: CollectionInfo; inserted: number; first_id: string | null }> {
  return writeForWallet(scope, async (tx) => {
    const target = await createCollection(tx, scope, collection);
    if (expiresAt !== undefined) {
      await tx.query("UPDATE utility_state_collections SET expires_at = $2 WHERE id = $1", [
        target,
        expiresAt,
      ]);
    }
    let inserted = 0;
    let bytes = 0n;
    let firstId: string | null = null;
    for (let start = 0; start < rows.length; start += INSERT_CHUNK_ROWS) {
      const chunk = rows.slice(start, start + INSERT_CHUNK_ROWS);
      // One statement a chunk: the sizes are measured as stored (the JSONB text), in the order given.
      const { rows: result } = await tx.query<{
        n: bigint;
        bytes: bigint;
        largest: number | null;
        first: bigint | null;
      }>(
        `WITH ins AS (
           INSERT INTO utility_state_rows (collection_id, data, bytes, created_at)
           SELECT $1, e.value, octet_length(e.value::text), $3
           FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, ord) ORDER BY e.ord
           RETURNING id, bytes)
         SELECT count(*) AS n, coalesce(sum(bytes), 0)::int8 AS bytes, max(bytes) AS largest, min(id) AS first
         FROM ins`,
        [target, JSON.stringify(chunk), scope.now],
      );
      const stats = result[0];
      if (stats?.largest && stats.largest > MAX_ROW_BYTES) {
        throw new BadInputError(
          `a row takes ${stats.largest} bytes as stored, more than ${MAX_ROW_BYTES}: nothing was written`,
          "row_too_large",
        );
      }
      inserted += Number(stats?.n ?? 0);
      bytes += BigInt(stats?.bytes ?? 0);
      firstId ??= stats?.first?.toString() ?? null;
    }
    if (inserted > 0) {
      await tx.query(
        "UPDATE utility_state_collections SET row_count = row_count + $2, bytes = bytes + $3 WHERE id = $1",
        [target, BigInt(inserted), bytes],
      );
    }
    return { collection: infoOf(await findCollection(tx, scope, collection)), inserted, first_id: firstId };
  });
}

/** The collection's id, created if missing (expired ones were purged by `writeForWallet`). */
async function createCollection(tx: Queryable, scope: WalletScope, name: string): Promise<bigint> {
  const existing = await tx.query<{ id: bigint }>(
    "SELECT id FROM utility_state_collections WHERE payer = $1 AND name = $2",
    [scope.payer, name],
  );
  if (existing.rows[0]) return existing.rows[0].id;
  const { rows } = await tx.query<{ n: bigint }>(
    "SELECT count(*) AS n FROM utility_state_collections WHERE payer = $1",
    [scope.payer],
  );
  if (Number(rows[0]?.n ?? 0) >= MAX_COLLECTIONS) {
    throw new AppError(507, "quota_exceeded", `a wallet may have at most ${MAX_COLLECTIONS} collections`);
  }
  const created = await tx.query<{ id: bigint }>(
    "INSERT INTO utility_state_collections (payer, name, created_at) VALUES ($1, $2, $3) RETURNING id",
    [scope.payer, name, scope.now],
  );
  return (created.rows[0] as { id: bigint }).id;
}

/** Equality on top-level fields, as JSONB containment (`data @> where`): `{}` matches every row. */
export type RowFilter = Record<string, string | number | boolean | null>;

/**
 * One page of rows in insertion order. `next_token` is opaque (the last id, encoded) and null on the last
 * page; it is only meaningful with the same collection and filter.
 */
export async function readRows(
  scope: WalletScope,
  collection: string,
  page: { limit: number; nextToken?: string | undefined; where?: RowFilter | undefined },
): Promise<{ collection: string; rows: StoredRow[]; next_token: string | null }> {
  const target = await findCollection(scope.db, scope, collection);
  const after = page.nextToken === undefined ? 0n : decodeToken(page.nextToken);
  const { rows } = await scope.db.query<{ id: bigint; created_at: Date; data: Row }>(
    `SELECT id, created_at, data FROM utility_state_rows
     WHERE collection_id = $1 AND id > $2 AND data @> $3::jsonb ORDER BY id LIMIT $4`,
    [target.id, after, JSON.stringify(page.where ?? {}), page.limit + 1],
  );
  const more = rows.length > page.limit;
  const shown = rows.slice(0, page.limit);
  const last = shown.at(-1);
  return {
    collection,
    rows: shown.map((r) => ({ id: r.id.toString(), created_at: r.created_at.toISOString(), data: r.data })),
    next_token: more && last ? encodeToken(last.id) : null,
  };
}

/** Every row's data in insertion order, for export (a collection is at most the quota). */
export async function exportRows(scope: WalletScope, collection: string, where?: RowFilter): Promise<Row[]> {
  const target = await findCollection(scope.db, scope, collection);
  const { rows } = await scope.db.query<{ data: Row }>(
    "SELECT data FROM utility_state_rows WHERE collection_id = $1 AND data @> $2::jsonb ORDER BY id",
    [target.id, JSON.stringify(where ?? {})],
  );
  return rows.map((r) => r.data);
}

/** Deletes the rows with these ids, or matching the filter (`{}`: all rows); the collection stays. */
export async function deleteRows(
  scope: WalletScope,
  collection: string,
  which: { ids: readonly string[] } | { where: RowFilter },
): Promise<{ collection: CollectionInfo; deleted: number }> {
  if ("ids" in which && !which.ids.every((id) => /^\d{1,18}$/.test(id))) {
    throw new BadInputError("ids are the decimal row ids that reads return", "invalid_input");
  }
  return writeForWallet(
    scope,
    async (tx) => {
      const target = await findCollection(tx, scope, collection);
      const { rows } = await tx.query<{ n: bigint; bytes: bigint }>(
        "ids" in which
          ? `WITH del AS (DELETE FROM utility_state_rows WHERE collection_id = $1 AND id = ANY($2::int8[])
               RETURNING bytes) SELECT count(*) AS n, coalesce(sum(bytes), 0)::int8 AS bytes FROM del`
          : `WITH del AS (DELETE FROM utility_state_rows WHERE collection_id = $1 AND data @> $2::jsonb
               RETURNING bytes) SELECT count(*) AS n, coalesce(sum(bytes), 0)::int8 AS bytes FROM del`,
        [target.id, "ids" in which ? `{${which.ids.join(",")}}` : JSON.stringify(which.where)],
      );
      const n = rows[0]?.n ?? 0n;
      await tx.query(
        "UPDATE utility_state_collections SET row_count = row_count - $2, bytes = bytes - $3 WHERE id = $1",
        [target.id, n, rows[0]?.bytes ?? 0n],
      );
      return { collection: infoOf(await findCollection(tx, scope, collection)), deleted: Number(n) };
    },
    { grows: false },
  );
}

/** Deletes the collection and all its rows. */
export async function dropCollection(
  scope: WalletScope,
  collection: string,
): Promise<{ collection: string; dropped: true; rows_deleted: number; bytes_freed: number }> {
  return writeForWallet(
    scope,
    async (tx) => {
      const target = await findCollection(tx, scope, collection);
      await tx.query("DELETE FROM utility_state_collections WHERE id = $1", [target.id]);
      return {
        collection,
        dropped: true as const,
        rows_deleted: Number(target.row_count),
        bytes_freed: Number(target.bytes),
      };
    },
    { grows: false },
  );
}

/** Sets (a date) or removes (null) the collection's expiry. */
export async function setCollectionExpiry(
  scope: WalletScope,
  collection: string,
  expiresAt: Date | null,
): Promise<CollectionInfo> {
  return writeForWallet(
    scope,
    async (tx) => {
      const target = await findCollection(tx, scope, collection);
      await tx.query("UPDATE utility_state_collections SET expires_at = $2 WHERE id = $1", [
        target.id,
        expiresAt,
      ]);
      return infoOf(await findCollection(tx, scope, collection));
    },
    { grows: false },
  );
}

function encodeToken(id: bigint): string {
  return Buffer.from(`r:${id}`).toString("base64url");
}

function decodeToken(token: string): bigint {
  const match = /^r:(\d{1,19})$/.exec(Buffer.from(token, "base64url").toString("utf8"));
  if (!match) throw new BadInputError("next_token is not one this endpoint gave", "invalid_next_token");
  return BigInt(match[1] as string);
}
