/**
 * Loads an archive (records of `records.ts`, from a JSONL file or `generateCorpus`) into the archive's
 * tables. Streaming: records are gathered per table into batches and written as one multi-row statement
 * per table, the batches of a round in one transaction, so a million tweets never sit in memory and cost
 * a few hundred statements, not a million.
 *
 * Every write is an upsert keyed by the record's id (edges by their two ends): importing an archive again,
 * or a newer export of it, leaves one row per object, the last one read.
 *
 * Each batch travels as one jsonb parameter unpacked by `jsonb_to_recordset`: the same SQL on PGlite and
 * the server, and the IDs cross as strings into bigint columns, never through JS numbers.
 */
import { createHash } from "node:crypto";
import { type Database, migrate, type Queryable } from "../../../../common/db/index.ts";
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
 * Imports `records` (migrating the archive's tables first), returning how many of each kind were read.
 * A record that fails to write (a username another id already has) fails the import with the database's
 * error; the rounds before it stay written, and importing again resumes idempotently.
 */
export async function importArchive(
  db: Database,
  records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
  options: ImportOptions = {},
): Promise<ImportCounts> {
  await migrate(db, ARCHIVE_TABLES.module, ARCHIVE_TABLES.migrations);
  const batchSize = options.batchSize ?? 2000;
  const counts = zeroCounts();
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
      await db.transaction(async (tx) => {
        for (const [kind, rows] of batches) await write(tx, kind, [...rows.values()]);
      });
      options.onProgress?.(counts);
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
    // A round still writing when the records failed ends before the failure is reported: the caller may
    // close the database as soon as this returns.
    await inflight.catch(() => {});
  }
  await inflight;
  return counts;
}

async function write(tx: Queryable, kind: ArchiveKind, rows: Record<string, unknown>[]): Promise<void> {
  await tx.query(SQL[kind], [JSON.stringify(rows)]);
}
