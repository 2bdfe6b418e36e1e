/**
 * Loads an archive (records of `records.ts`, from a JSONL file or `generateCorpus`) into the archive's
 * tables, in one transaction. Streaming: records are gathered per table into batches and written as one
 * multi-row statement per table, so a million tweets never sit in memory and cost a few hundred
 * statements, not a million.
 *
 * Every write is an upsert keyed by the record's id (edges by their two ends): importing an archive again,
 * or a newer export of it, leaves one row per object, the last one read.
 *
 * Each batch travels as one jsonb parameter unpacked by `jsonb_to_recordset`: the same SQL on PGlite and
 * the server, and the IDs cross as strings into bigint columns, never through JS numbers.
 */
import { createHash } from "node:crypto";
import { type Database, migrate, type Queryable } from "../../../../common/db/index.ts";
import { AppError } from "../../../../common/errors.ts";
import type { ArchiveKind, ArchiveRecord, ArchiveRecordOf } from "./records.ts";
import { ARCHIVE_TABLES } from "./tables.ts";

/** Records read, per kind. */
export type ImportCounts = Record<ArchiveKind, number>;

export interface ImportOptions {
  /** Rows gathered before a round of writes. Default 2000. */
  batchSize?: number;
  /** Called after each round with the counts so far (a CLI's progress line). */
  onProgress?: (counts: Readonly<ImportCounts>) => void;
}

/** The sha256 of a session's auth_token, what `social_archive_sessions` keeps instead of the token. */
export const tokenHash = (authToken: string): string => createHash("sha256").update(authToken).digest("hex");

/** How one kind's rows are written: its table, its columns (name and type), its key, and the row of a record. */
interface Writer<K extends ArchiveKind> {
  table: string;
  columns: [string, string][];
  key: string[];
  /** Columns not rewritten when the row exists (an upload's bytes). */
  keep?: string[];
  row(record: ArchiveRecordOf<K>): Record<string, unknown>;
}

const lower = (s: string) => s.toLowerCase();
const refId = (t: ArchiveRecordOf<"tweet">, type: string) =>
  t.referencedTweets.find((r) => r.type === type)?.id ?? null;
/** The record without its `kind`: the model object, as `doc` keeps it. */
const doc = <R extends { kind: string }>({ kind: _, ...rest }: R) => rest;

const WRITERS: { [K in ArchiveKind]: Writer<K> } = {
  user: {
    table: "social_archive_users",
    columns: [
      ["id", "bigint"],
      ["username", "text"],
      ["name", "text"],
      ["description", "text"],
      ["followers_count", "integer"],
      ["doc", "jsonb"],
    ],
    key: ["id"],
    row: (u) => ({
      id: u.id,
      username: u.username,
      name: u.name,
      description: u.description,
      followers_count: u.metrics.followersCount,
      doc: doc(u),
    }),
  },
  tweet: {
    table: "social_archive_tweets",
    columns: [
      ["id", "bigint"],
      ["author_id", "bigint"],
      ["created_at", "timestamptz"],
      ["text", "text"],
      ["in_reply_to_user_id", "bigint"],
      ["replied_to_id", "bigint"],
      ["quoted_id", "bigint"],
      ["community_id", "bigint"],
      ["reply_count", "integer"],
      ["like_count", "integer"],
      ["retweet_count", "integer"],
      ["hashtags", "text[]"],
      ["mentions", "text[]"],
      ["doc", "jsonb"],
    ],
    key: ["id"],
    row: (t) => ({
      id: t.id,
      author_id: t.authorId,
      created_at: t.createdAt,
      text: t.text,
      in_reply_to_user_id: t.inReplyToUserId,
      replied_to_id: refId(t, "replied_to"),
      quoted_id: refId(t, "quoted"),
      community_id: t.communityId ?? null,
      reply_count: t.metrics.replyCount,
      like_count: t.metrics.likeCount,
      retweet_count: t.metrics.retweetCount,
      hashtags: t.entities.hashtags.map((h) => lower(h.tag.replace(/^#/, ""))),
      mentions: t.entities.mentions.map((m) => lower(m.username.replace(/^@/, ""))),
      doc: doc(t),
    }),
  },
  media: {
    table: "social_archive_media",
    columns: [
      ["media_key", "text"],
      ["doc", "jsonb"],
    ],
    key: ["media_key"],
    row: (m) => ({ media_key: m.mediaKey, doc: doc(m) }),
  },
  follow: edge("social_archive_follows", ["follower_id", "followed_id"], (f) => [f.followerId, f.followedId]),
  retweet: edge("social_archive_retweets", ["tweet_id", "user_id"], (r) => [r.tweetId, r.userId]),
  list: {
    table: "social_archive_lists",
    columns: [
      ["id", "bigint"],
      ["owner_id", "bigint"],
      ["public", "boolean"],
      ["doc", "jsonb"],
    ],
    key: ["id"],
    row: (l) => ({ id: l.id, owner_id: l.ownerId, public: l.mode === "public", doc: doc(l) }),
  },
  list_member: edge("social_archive_list_members", ["list_id", "user_id"], (m) => [m.listId, m.userId]),
  list_follower: edge("social_archive_list_followers", ["list_id", "user_id"], (m) => [m.listId, m.userId]),
  community: {
    table: "social_archive_communities",
    columns: [
      ["id", "bigint"],
      ["doc", "jsonb"],
    ],
    key: ["id"],
    row: (c) => ({ id: c.id, doc: doc(c) }),
  },
  article: {
    table: "social_archive_articles",
    columns: [
      ["id", "bigint"],
      ["tweet_id", "bigint"],
      ["author_id", "bigint"],
      ["doc", "jsonb"],
    ],
    key: ["id"],
    row: (a) => ({ id: a.id, tweet_id: a.tweetId, author_id: a.authorId, doc: doc(a) }),
  },
  session: {
    table: "social_archive_sessions",
    columns: [
      ["token_sha256", "text"],
      ["user_id", "bigint"],
    ],
    key: ["token_sha256"],
    row: (s) => ({ token_sha256: tokenHash(s.authToken), user_id: s.userId }),
  },
};

/** An edge: two ids, nothing to update when it is there already (its seq, the order it came in, stays). */
function edge<K extends ArchiveKind>(
  table: string,
  [a, b]: [string, string],
  ends: (r: ArchiveRecordOf<K>) => [string, string],
): Writer<K> {
  return {
    table,
    columns: [
      [a, "bigint"],
      [b, "bigint"],
    ],
    key: [a, b],
    row: (r) => {
      const [x, y] = ends(r);
      return { [a]: x, [b]: y };
    },
  };
}

/** The upsert of a batch of `writer`'s rows, given as one jsonb array. */
function upsertSql(writer: Writer<ArchiveKind>): string {
  const names = writer.columns.map(([name]) => name);
  const updated = names.filter((n) => !writer.key.includes(n) && !writer.keep?.includes(n));
  return `INSERT INTO ${writer.table} (${names.join(", ")})
    SELECT ${names.join(", ")}
      FROM jsonb_to_recordset($1::jsonb) AS r(${writer.columns.map(([n, t]) => `${n} ${t}`).join(", ")})
    ON CONFLICT (${writer.key.join(", ")}) DO ${
      updated.length === 0 ? "NOTHING" : `UPDATE SET ${updated.map((n) => `${n} = EXCLUDED.${n}`).join(", ")}`
    }`;
}

const SQL = Object.fromEntries(
  Object.entries(WRITERS).map(([kind, w]) => [kind, upsertSql(w as Writer<ArchiveKind>)]),
) as Record<ArchiveKind, string>;

const zeroCounts = (): ImportCounts =>
  Object.fromEntries(Object.keys(WRITERS).map((k) => [k, 0])) as ImportCounts;

/**
 * An import the archive refused part of: a record conflicts with another (two users with one username,
 * two articles on one tweet). The import is one transaction, so nothing of it was written.
 */
export class ArchiveConflictError extends AppError {
  constructor(message: string) {
    super(409, "archive_conflict", message);
  }
}

/**
 * Imports `records` (migrating the archive's tables first), returning how many of each kind were read.
 * All or nothing: every round is written in one transaction, so a record that fails to write (a username
 * another id already has) leaves the archive as it was, with an `ArchiveConflictError` that says why, and
 * a failure of `records` itself (a bad line) likewise. Readers see the import only once it is whole. On
 * PGlite the transaction holds the only connection while it runs: other statements wait for it.
 */
export async function importArchive(
  db: Database,
  records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
  options: ImportOptions = {},
): Promise<ImportCounts> {
  await migrate(db, ARCHIVE_TABLES.module, ARCHIVE_TABLES.migrations);
  const batchSize = options.batchSize ?? 2000;
  const counts = zeroCounts();
  try {
    await db.transaction((tx) => writeAll(tx, records, batchSize, counts, options.onProgress));
  } catch (error) {
    // The rolled-back rows still fill the tables' files (about 450 MB of 1.2M records on PGlite, which has
    // no autovacuum): made reusable now, the empty pages at their ends given back, best effort.
    await reclaim(db).catch(() => undefined);
    throw conflictOf(error) ?? error;
  }
  return counts;
}

/** VACUUM of the archive's tables: the space of dead rows made reusable, empty trailing pages returned. */
async function reclaim(db: Database): Promise<void> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT quote_ident(tablename) AS name FROM pg_tables
      WHERE schemaname = current_schema() AND tablename LIKE 'social\\_archive\\_%'`,
  );
  if (rows.length > 0) await db.exec(`VACUUM ${rows.map((r) => r.name).join(", ")}`);
}

async function writeAll(
  tx: Queryable,
  records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
  batchSize: number,
  counts: ImportCounts,
  onProgress: ImportOptions["onProgress"],
): Promise<void> {
  // Per kind, rows by key: a batch holding one key twice would make ON CONFLICT update a row twice,
  // which PostgreSQL refuses; the last record read wins, as it would across batches.
  const pending = new Map<ArchiveKind, Map<string, Record<string, unknown>>>();
  let size = 0;

  // One round in flight while the next is gathered: on a server, generating and parsing records overlaps
  // with the writes (on PGlite both share the thread and the overlap changes nothing).
  let inflight: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (size === 0) return;
    const batches = [...pending];
    pending.clear();
    size = 0;
    const previous = inflight;
    inflight = (async () => {
      await previous;
      for (const [kind, rows] of batches) await write(tx, kind, [...rows.values()]);
      onProgress?.(counts);
    })();
    // Seen at the next round or at the end; marked handled meanwhile so a failure is not reported twice.
    inflight.catch(() => {});
    await previous;
  };

  try {
    for await (const record of records) {
      const writer = WRITERS[record.kind] as Writer<ArchiveKind>;
      const row = writer.row(record);
      let rows = pending.get(record.kind);
      if (!rows) {
        rows = new Map();
        pending.set(record.kind, rows);
      }
      const key = writer.key.map((k) => row[k]).join("|");
      if (!rows.has(key)) size++;
      rows.set(key, row);
      counts[record.kind]++;
      if (size >= batchSize) await flush();
    }
    await flush();
  } finally {
    // A round still writing when the records failed ends before the transaction is rolled back.
    await inflight.catch(() => {});
  }
  await inflight;
}

/** A unique index's refusal as what the operator must fix, or undefined for any other failure. */
function conflictOf(error: unknown): ArchiveConflictError | undefined {
  const { code, detail } = error as { code?: unknown; detail?: unknown };
  if (code !== "23505") return undefined;
  // PostgreSQL's detail: Key (lower(username::text))=(alice) already exists.
  const key = typeof detail === "string" ? /^Key \((.+)\)=\((.*)\) already exists/.exec(detail) : null;
  const what = key?.[1]?.includes("username")
    ? `two users have the username "${key[2]}" (X's usernames are unique whatever their case)`
    : key
      ? `two records have ${key[1]} ${key[2]}, which must be unique`
      : `a record conflicts with another (${String((error as Error).message).split("\n")[0]})`;
  return new ArchiveConflictError(`${what}: nothing of this import was written`);
}

async function write(tx: Queryable, kind: ArchiveKind, rows: Record<string, unknown>[]): Promise<void> {
  await tx.query(SQL[kind], [JSON.stringify(rows)]);
}
