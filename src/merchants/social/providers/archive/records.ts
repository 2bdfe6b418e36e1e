/**
 * What an archive is made of: one record per line of JSONL (the `x402-merchants social import FILE`
 * format), each a model object (model.ts) with its `kind`, or an edge between two of them. Validated with
 * zod, so a bad line is refused with its number and the field at fault, before anything is written.
 *
 * Fields an export rarely has get defaults (metrics 0, no entities, `lang: "und"`), so a hand-written
 * line can be short: `{"kind":"tweet","id":"1","authorId":"2","text":"hi","createdAt":"2026-01-01T00:00:00Z"}`.
 */
import { z } from "zod";
import { AppError } from "../../../../common/errors.ts";

/** X's IDs: decimal strings that fit PostgreSQL's bigint (X's snowflakes do). Never JSON numbers: past 2^53 they are already wrong. */
const MAX_ID = 2n ** 63n - 1n;
export const archiveId = z
  .string({ error: "expected an id as a decimal string" })
  .regex(/^\d{1,19}$/, "expected an id of 1 to 19 decimal digits")
  // zod runs this check even when the pattern failed: only digits reach BigInt.
  .refine((v) => !/^\d{1,19}$/.test(v) || BigInt(v) <= MAX_ID, "an id must be below 2^63");

/** Any date JavaScript reads, kept as ISO 8601 in UTC (the model's form). */
const isoDate = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), "expected a date (ISO 8601)")
  .transform((v) => new Date(v).toISOString());

const count = z.number().int().nonnegative();

const userMetrics = z.object({
  followersCount: count.default(0),
  followingCount: count.default(0),
  tweetCount: count.default(0),
  listedCount: count.default(0),
  likeCount: count.optional(),
});

export const archiveUser = z.object({
  id: archiveId,
  name: z.string(),
  username: z.string().regex(/^[A-Za-z0-9_]{1,50}$/, "expected a username of letters, digits and _"),
  createdAt: isoDate,
  description: z.string().default(""),
  location: z.string().nullable().default(null),
  url: z.string().nullable().default(null),
  profileImageUrl: z.string().nullable().default(null),
  profileBannerUrl: z.string().nullable().default(null),
  protected: z.boolean().default(false),
  verified: z.boolean().default(false),
  verifiedType: z.enum(["blue", "business", "government", "none"]).default("none"),
  pinnedTweetId: archiveId.nullable().default(null),
  metrics: userMetrics.prefault({}),
});

const span = { start: count, end: count };
const entities = z.object({
  hashtags: z.array(z.object({ ...span, tag: z.string() })).default([]),
  mentions: z.array(z.object({ ...span, username: z.string(), id: archiveId.optional() })).default([]),
  urls: z
    .array(z.object({ ...span, url: z.string(), expandedUrl: z.string(), displayUrl: z.string() }))
    .default([]),
  cashtags: z.array(z.object({ ...span, tag: z.string() })).optional(),
});

export const archiveTweet = z
  .object({
    id: archiveId,
    text: z.string(),
    authorId: archiveId,
    createdAt: isoDate,
    conversationId: archiveId.optional(),
    lang: z.string().default("und"),
    inReplyToUserId: archiveId.nullable().default(null),
    metrics: z
      .object({
        retweetCount: count.default(0),
        replyCount: count.default(0),
        likeCount: count.default(0),
        quoteCount: count.default(0),
        bookmarkCount: count.default(0),
        impressionCount: count.default(0),
      })
      .prefault({}),
    referencedTweets: z
      .array(z.object({ type: z.enum(["quoted", "replied_to", "retweeted"]), id: archiveId }))
      .default([]),
    entities: entities.prefault({}),
    mediaKeys: z.array(z.string()).default([]),
    possiblySensitive: z.boolean().default(false),
    articleId: archiveId.nullable().optional(),
    communityId: archiveId.nullable().optional(),
  })
  // A tweet that starts no thread is its own conversation.
  .transform(({ conversationId, ...t }) => ({ ...t, conversationId: conversationId ?? t.id }));

export const archiveMedia = z.object({
  mediaKey: z.string().min(1),
  type: z.enum(["photo", "video", "animated_gif"]),
  url: z.string(),
  width: count.nullable().default(null),
  height: count.nullable().default(null),
  altText: z.string().nullable().default(null),
  durationMs: count.nullable().optional(),
});

export const archiveList = z.object({
  id: archiveId,
  name: z.string(),
  description: z.string().default(""),
  mode: z.enum(["public", "private"]).default("public"),
  memberCount: count.default(0),
  followerCount: count.default(0),
  createdAt: isoDate,
  bannerUrl: z.string().nullable().default(null),
  ownerId: archiveId,
});

/** A community: the model has none (the API shows only its posts), so this is the archive's own. */
export const archiveCommunity = z.object({
  id: archiveId,
  name: z.string(),
  description: z.string().default(""),
  createdAt: isoDate.nullable().default(null),
  memberCount: count.default(0),
});

const draftBlock = z.object({
  key: z.string(),
  type: z.string(),
  text: z.string(),
  depth: z.number().int().optional(),
  inlineStyleRanges: z.array(z.object({ offset: count, length: count, style: z.string() })).default([]),
  entityRanges: z
    .array(z.object({ offset: count, length: count, key: z.union([z.number(), z.string()]) }))
    .default([]),
});

export const archiveArticle = z.object({
  id: archiveId,
  tweetId: archiveId,
  authorId: archiveId,
  title: z.string(),
  previewText: z.string().default(""),
  coverImageUrl: z.string().nullable().default(null),
  publishedAt: isoDate,
  content: z.discriminatedUnion("format", [
    z.object({
      format: z.literal("draftjs"),
      state: z.object({
        blocks: z.array(draftBlock),
        entityMap: z
          .record(
            z.string(),
            z.object({
              type: z.string(),
              mutability: z.string().optional(),
              data: z.record(z.string(), z.unknown()),
            }),
          )
          .default({}),
      }),
    }),
    z.object({ format: z.literal("markdown"), markdown: z.string() }),
  ]),
});

const kinds = {
  user: archiveUser,
  tweet: archiveTweet,
  media: archiveMedia,
  follow: z.object({ followerId: archiveId, followedId: archiveId }),
  retweet: z.object({ userId: archiveId, tweetId: archiveId }),
  list: archiveList,
  list_member: z.object({ listId: archiveId, userId: archiveId }),
  list_follower: z.object({ listId: archiveId, userId: archiveId }),
  community: archiveCommunity,
  article: archiveArticle,
  /** A web session the archive accepts as its user's (mentions, uploads): the demo's and the tests'. */
  session: z.object({ authToken: z.string().min(1), userId: archiveId }),
} as const;

export type ArchiveKind = keyof typeof kinds;
export const ARCHIVE_KINDS = Object.keys(kinds) as ArchiveKind[];

type Of<K extends ArchiveKind> = { kind: K } & z.output<(typeof kinds)[K]>;
type InputOf<K extends ArchiveKind> = { kind: K } & z.input<(typeof kinds)[K]>;

/** One record of an archive, complete (what `parseArchiveLine` gives and `importArchive` takes). */
export type ArchiveRecord = { [K in ArchiveKind]: Of<K> }[ArchiveKind];
/** A record as a JSONL line may write it: fields with defaults may be left out. */
export type ArchiveRecordInput = { [K in ArchiveKind]: InputOf<K> }[ArchiveKind];
export type ArchiveRecordOf<K extends ArchiveKind> = Of<K>;

/** A line of an archive that is not a record: names the line and the field. */
export class ArchiveLineError extends AppError {
  constructor(
    readonly line: number,
    readonly field: string | null,
    detail: string,
  ) {
    super(400, "invalid_archive_line", `line ${line}: ${field ? `field ${field}: ` : ""}${detail}`);
  }
}

/** A record checked and completed with its defaults; `line` names it in the error. */
export function archiveRecord(value: unknown, line: number): ArchiveRecord {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new ArchiveLineError(line, null, "expected a JSON object");
  }
  const kind = (value as { kind?: unknown }).kind;
  if (typeof kind !== "string" || !Object.hasOwn(kinds, kind)) {
    throw new ArchiveLineError(
      line,
      "kind",
      `expected one of ${ARCHIVE_KINDS.join(", ")}, got ${JSON.stringify(kind) ?? "nothing"}`,
    );
  }
  const { kind: _, ...fields } = value as Record<string, unknown>;
  const parsed = kinds[kind as ArchiveKind].safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.length ? issue.path.map(String).join(".") : null;
    throw new ArchiveLineError(line, field, `${kind}: ${issue?.message ?? "invalid"}`);
  }
  return { kind, ...parsed.data } as ArchiveRecord;
}

/** One line of the JSONL format: a record, or an `ArchiveLineError` naming `lineNo` and the field. */
export function parseArchiveLine(line: string, lineNo: number): ArchiveRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new ArchiveLineError(lineNo, null, `not JSON (${(error as Error).message})`);
  }
  return archiveRecord(value, lineNo);
}

/**
 * The records of a JSONL archive's lines, in order; blank lines are skipped but counted, so an error names
 * the line a reader's editor shows. `lines` is e.g. `readline.createInterface({ input: fs.createReadStream(file) })`.
 */
export async function* archiveLines(
  lines: AsyncIterable<string> | Iterable<string>,
): AsyncGenerator<ArchiveRecord> {
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (line.trim() !== "") yield parseArchiveLine(line, lineNo);
  }
}
