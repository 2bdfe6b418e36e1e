/**
 * The SQL of `/api/scratchpad`: a wallet's named text blobs, each with a content type. Keyed by
 * (payer, name) in every statement; writes run in `writeForWallet`, so scratchpads share the wallet's
 * quota with its store collections (one 50 MB budget per wallet: simpler to explain and to bill against
 * than two, and a wallet cannot double its space by splitting data between the two endpoints).
 */
import { AppError, BadInputError, ConflictError, NotFoundError } from "../../../common/errors.ts";
import { parseCsvRows } from "./csv.ts";
import { MAX_SCRATCHPAD_BYTES, MAX_SCRATCHPADS } from "./limits.ts";
import { visible, type WalletScope, writeForWallet } from "./wallet.ts";

export const CONTENT_TYPES = ["text/plain", "application/json", "text/csv"] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

/**
 * - `replace`: create or overwrite (the default);
 * - `create`: only if the name is free, else 409 `already_exists`;
 * - `append`: add to the end (created if missing). Text: concatenated as given. CSV: the new lines go
 *   after the existing ones on a new line, and a repeated header line is dropped. JSON: the stored value
 *   must be an array; the new value is appended (an array's elements are).
 */
export type WriteMode = "replace" | "create" | "append";

export interface ScratchpadInfo {
  name: string;
  content_type: ContentType;
  bytes: number;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
}

interface ScratchpadRecord {
  name: string;
  content_type: ContentType;
  content: string;
  bytes: bigint;
  created_at: Date;
  updated_at: Date;
  expires_at: Date | null;
}

const infoOf = (s: ScratchpadRecord): ScratchpadInfo => ({
  name: s.name,
  content_type: s.content_type,
  bytes: Number(s.bytes),
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
  expires_at: s.expires_at?.toISOString() ?? null,
});

const COLUMNS = "name, content_type, content, bytes, created_at, updated_at, expires_at";

export async function listScratchpads(scope: WalletScope): Promise<ScratchpadInfo[]> {
  const { rows } = await scope.db.query<ScratchpadRecord>(
    `SELECT name, content_type, '' AS content, bytes, created_at, updated_at, expires_at
     FROM utility_state_scratchpads s WHERE payer = $1 AND ${visible("s", 2)} ORDER BY name`,
    [scope.payer, scope.now],
  );
  return rows.map(infoOf);
}

export async function readScratchpad(
  scope: WalletScope,
  name: string,
): Promise<ScratchpadInfo & { content: string }> {
  const { rows } = await scope.db.query<ScratchpadRecord>(
    `SELECT ${COLUMNS} FROM utility_state_scratchpads s WHERE payer = $1 AND name = $2 AND ${visible("s", 3)}`,
    [scope.payer, name, scope.now],
  );
  const found = rows[0];
  if (!found) throw new NotFoundError(`no scratchpad "${name}" for this wallet`, "scratchpad_not_found");
  return { ...infoOf(found), content: found.content };
}

/**
 * Writes a scratchpad. The content is checked against its type (JSON must parse, CSV must be RFC 4180
 * with a header). `expiresAt`: a date sets the expiry, null removes it, undefined keeps the current one
 * (none for a new scratchpad).
 */
export async function writeScratchpad(
  scope: WalletScope,
  write: {
    name: string;
    content: string;
    contentType?: ContentType | undefined;
    mode: WriteMode;
    expiresAt?: Date | null | undefined;
  },
): Promise<ScratchpadInfo> {
  return writeForWallet(scope, async (tx) => {
    const { rows } = await tx.query<ScratchpadRecord>(
      `SELECT ${COLUMNS} FROM utility_state_scratchpads WHERE payer = $1 AND name = $2`,
      [scope.payer, write.name],
    );
    const existing = rows[0];
    if (existing && write.mode === "create") {
      throw new ConflictError(`scratchpad "${write.name}" already exists`, "already_exists");
    }
    if (!existing) {
      const { rows: count } = await tx.query<{ n: bigint }>(
        "SELECT count(*) AS n FROM utility_state_scratchpads WHERE payer = $1",
        [scope.payer],
      );
      if (Number(count[0]?.n ?? 0) >= MAX_SCRATCHPADS) {
        throw new AppError(507, "quota_exceeded", `a wallet may have at most ${MAX_SCRATCHPADS} scratchpads`);
      }
    }
    const appending = write.mode === "append" && existing !== undefined;
    const contentType = write.contentType ?? existing?.content_type ?? "text/plain";
    if (appending && existing.content_type !== contentType) {
      throw new BadInputError(
        `scratchpad "${write.name}" holds ${existing.content_type}: append with that content type`,
        "content_type_mismatch",
      );
    }
    const content = appending ? appended(existing.content, write.content, contentType) : write.content;
    // Checked whole: an appended CSV chunk may have no header of its own.
    checkContent(content, contentType);
    if (Buffer.byteLength(content) > MAX_SCRATCHPAD_BYTES) {
      throw new BadInputError(`a scratchpad holds at most ${MAX_SCRATCHPAD_BYTES} bytes`, "too_large");
    }
    const expiresAt = write.expiresAt === undefined ? (existing?.expires_at ?? null) : write.expiresAt;
    const { rows: saved } = await tx.query<ScratchpadRecord>(
      `INSERT INTO utility_state_scratchpads
         (payer, name, content_type, content, bytes, created_at, updated_at, expires_at)
       VALUES ($1, $2, $3, $4, octet_length($4), $5, $5, $6)
       ON CONFLICT (payer, name) DO UPDATE SET content_type = EXCLUDED.content_type,
         content = EXCLUDED.content, bytes = EXCLUDED.bytes, updated_at = EXCLUDED.updated_at,
         expires_at = EXCLUDED.expires_at
       RETURNING name, content_type, '' AS content, bytes, created_at, updated_at, expires_at`,
      [scope.payer, write.name, contentType, content, scope.now, expiresAt],
    );
    return infoOf(saved[0] as ScratchpadRecord);
  });
}

export async function deleteScratchpad(
  scope: WalletScope,
  name: string,
): Promise<{ name: string; deleted: true; bytes_freed: number }> {
  return writeForWallet(
    scope,
    async (tx) => {
      const { rows } = await tx.query<{ bytes: bigint }>(
        `DELETE FROM utility_state_scratchpads s WHERE payer = $1 AND name = $2 AND ${visible("s", 3)}
         RETURNING bytes`,
        [scope.payer, name, scope.now],
      );
      if (!rows[0])
        throw new NotFoundError(`no scratchpad "${name}" for this wallet`, "scratchpad_not_found");
      return { name, deleted: true as const, bytes_freed: Number(rows[0].bytes) };
    },
    { grows: false },
  );
}

function checkContent(content: string, type: ContentType): void {
  if (type === "application/json") {
    try {
      JSON.parse(content);
    } catch {
      throw new BadInputError("content is not valid JSON (content_type application/json)", "invalid_json");
    }
  } else if (type === "text/csv") {
    parseCsvRows(content, { typed: false });
  }
}

function appended(current: string, addition: string, type: ContentType): string {
  if (type === "application/json") {
    const value: unknown = JSON.parse(current);
    if (!Array.isArray(value)) {
      throw new BadInputError("append to a JSON scratchpad needs a stored array", "not_an_array");
    }
    checkContent(addition, type);
    const added: unknown = JSON.parse(addition);
    return JSON.stringify(value.concat(Array.isArray(added) ? added : [added]));
  }
  if (type === "text/csv") {
    const header = current.split(/\r?\n/, 1)[0] ?? "";
    const lines = addition.split(/\r?\n/);
    const body = lines[0] === header ? lines.slice(1).join("\r\n") : addition;
    if (current === "") return addition;
    return /\r?\n$/.test(current) ? `${current}${body}` : `${current}\r\n${body}`;
  }
  return current + addition;
}
