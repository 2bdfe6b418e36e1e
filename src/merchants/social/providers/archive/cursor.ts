/**
 * The archive's page cursors: the last item's sort key, base64url-encoded, so the next page starts
 * strictly after it (keyset paging: the same cost on page 1 and page 1000, and no repeats or gaps when
 * rows arrive between two pages, which OFFSET would give).
 *
 * The route seals the cursor into a signed `next_token`, so a caller cannot edit it; a cursor that does
 * not decode is still refused here as a 400 rather than read as a key (a provider called directly, a key
 * of another family).
 */
import { BadInputError } from "../../../../common/errors.ts";

/** Newest-first tweet pages sort on (created_at, id). */
export interface TweetKey {
  createdAt: string;
  id: string;
}

/** Edge pages (followers, members, reposters) sort on the edge's import order. */
export interface EdgeKey {
  seq: string;
}

/** User search sorts on (rank, followers descending, id). */
export interface UserSearchKey {
  rank: number;
  followers: number;
  id: string;
}

const ID = /^\d{1,19}$/;

const encode = (parts: string[]) => Buffer.from(parts.join("|")).toString("base64url");

function decode(cursor: string, family: string, count: number): string[] {
  const parts = /^[A-Za-z0-9_-]{1,200}$/.test(cursor)
    ? Buffer.from(cursor, "base64url").toString("utf8").split("|")
    : [];
  if (parts.length !== count + 1 || parts[0] !== family) throw invalidCursor();
  return parts.slice(1);
}

export function invalidCursor(): BadInputError {
  return new BadInputError(
    "the page cursor is not one the archive gave for this page: pass the previous page's next as it is",
    "invalid_next_token",
    "next_token",
  );
}

export const tweetCursor = (key: TweetKey): string => encode(["t", key.createdAt, key.id]);

export function readTweetCursor(cursor: string): TweetKey {
  const [createdAt = "", id = ""] = decode(cursor, "t", 2);
  if (!ID.test(id) || Number.isNaN(Date.parse(createdAt))) throw invalidCursor();
  return { createdAt, id };
}

export const edgeCursor = (key: EdgeKey): string => encode(["e", key.seq]);

export function readEdgeCursor(cursor: string): EdgeKey {
  const [seq = ""] = decode(cursor, "e", 1);
  if (!ID.test(seq)) throw invalidCursor();
  return { seq };
}

export const userSearchCursor = (key: UserSearchKey): string =>
  encode(["u", String(key.rank), String(key.followers), key.id]);

export function readUserSearchCursor(cursor: string): UserSearchKey {
  const [rank = "", followers = "", id = ""] = decode(cursor, "u", 3);
  if (!/^\d$/.test(rank) || !/^\d{1,10}$/.test(followers) || !ID.test(id)) throw invalidCursor();
  return { rank: Number(rank), followers: Number(followers), id };
}
