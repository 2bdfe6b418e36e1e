/**
 * The archive acting as a caller, for the demo and the tests: a session is an `auth_token` the archive
 * was given (a `session` record), known by its sha256 only. With it, the caller's mentions and a media
 * upload work as they would on X; an unknown token is the 401 every provider gives for bad cookies.
 */
import { randomInt } from "node:crypto";
import type { Queryable } from "../../../../common/db/index.ts";
import { AppError } from "../../../../common/errors.ts";
import type { SocialMedia } from "../../model.ts";
import type { CallerSession, MediaFile, PageRequest, TweetPage, UploadedMedia } from "../../provider.ts";
import { tokenHash } from "./import.ts";
import { tweetPage } from "./pages.ts";

/** X keeps an upload this long unless a tweet attaches it. */
const UPLOAD_EXPIRES_SECS = 86_400;
/** Twitter's snowflake epoch (2010-11-04), so new ids look and sort like X's. */
const SNOWFLAKE_EPOCH = 1_288_834_974_657n;

interface SessionUser {
  id: string;
  username: string;
}

/** The session's user; a 401 `invalid_session` (never naming the token) when the archive does not know it. */
export async function sessionUser(q: Queryable, session: CallerSession): Promise<SessionUser> {
  const { rows } = await q.query<SessionUser>(
    `SELECT u.id::text AS id, u.username
       FROM social_archive_sessions s JOIN social_archive_users u ON u.id = s.user_id
      WHERE s.token_sha256 = $1`,
    [tokenHash(session.authToken)],
  );
  const user = rows[0];
  if (!user) {
    throw new AppError(
      401,
      "invalid_session",
      "the auth_token cookie is not a session the archive knows: sign in again and pass the new cookies",
    );
  }
  return user;
}

export async function mentions(q: Queryable, session: CallerSession, page: PageRequest): Promise<TweetPage> {
  const user = await sessionUser(q, session);
  return tweetPage(q, ["t.mentions @> ARRAY[lower($1)]"], [user.username], page);
}

/** A new id like X's: milliseconds since its epoch in the high bits, 22 random low bits. */
export function snowflake(now = Date.now()): string {
  return (((BigInt(now) - SNOWFLAKE_EPOCH) << 22n) | BigInt(randomInt(0, 1 << 22))).toString();
}

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
};

/** Keeps the image as the session's user's upload, and answers what X's upload answers. */
export async function uploadMedia(
  q: Queryable,
  session: CallerSession,
  file: MediaFile,
): Promise<UploadedMedia> {
  const user = await sessionUser(q, session);
  const mediaId = snowflake();
  const mediaKey = `3_${mediaId}`;
  const medium: SocialMedia = {
    mediaKey,
    type: "photo",
    url: `https://pbs.twimg.com/media/${mediaId}.${EXTENSIONS[file.type] ?? "jpg"}`,
    width: file.width,
    height: file.height,
    altText: null,
  };
  await q.query(
    `INSERT INTO social_archive_media (media_key, doc, bytes, size, uploaded_by, uploaded_at)
     VALUES ($1, $2::jsonb, decode($3, 'hex'), $4::int, $5::bigint, now())`,
    [mediaKey, JSON.stringify(medium), Buffer.from(file.bytes).toString("hex"), file.bytes.length, user.id],
  );
  return {
    mediaId,
    mediaKey,
    size: file.bytes.length,
    expiresAfterSecs: UPLOAD_EXPIRES_SECS,
    image: { type: file.type, width: file.width, height: file.height },
  };
}
