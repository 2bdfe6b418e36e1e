/**
 * Search over the archive: tweets by every filter of `SearchFilters`, users by keyword.
 *
 * Tweets: the word filters are tsqueries over the `tsv` column (GIN-indexed, 'simple' configuration: words
 * as written, no stemming, case-folded), one condition each so every positive one can use the index;
 * hashtags and mentions are array containment over lowercased columns; the rest are column filters.
 * `plainto_tsquery`/`phraseto_tsquery` read the caller's words as text, never as tsquery syntax, so no
 * input can be a syntax error.
 */
import type { Queryable } from "../../../../common/db/index.ts";
import { BadInputError } from "../../../../common/errors.ts";
import type { SocialUser } from "../../model.ts";
import type { PageRequest, TweetPage, UserPage } from "../../provider.ts";
import { hasFilter, type SearchFilters } from "../../search-query.ts";
import { readUserSearchCursor, userSearchCursor } from "./cursor.ts";
import { tweetPage } from "./pages.ts";
import { pageLimit } from "./sql.ts";

/** A filter's date as the start of that UTC day. */
function dayStart(name: string, day: string): string {
  const at = `${day}T00:00:00.000Z`;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(at))) {
    throw new BadInputError(`${name} must be a date written YYYY-MM-DD`, "bad_request", name);
  }
  return at;
}

const bare = (name: string) => name.trim().replace(/^[@#]/, "");

/** The WHERE conditions over `t` and their parameters for `filters`. */
export function searchConditions(filters: SearchFilters): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const arg = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const words = (filters.words ?? []).filter((w) => w.trim() !== "");
  if (words.length > 0) where.push(`t.tsv @@ plainto_tsquery('simple', ${arg(words.join(" "))})`);
  if (filters.phrase?.trim()) where.push(`t.tsv @@ phraseto_tsquery('simple', ${arg(filters.phrase)})`);
  const any = (filters.anyWords ?? []).filter((w) => w.trim() !== "");
  if (any.length > 0) {
    where.push(`t.tsv @@ (${any.map((w) => `plainto_tsquery('simple', ${arg(w)})`).join(" || ")})`);
  }
  for (const word of filters.noneWords ?? []) {
    if (word.trim()) where.push(`NOT (t.tsv @@ plainto_tsquery('simple', ${arg(word)}))`);
  }
  const tags = (filters.hashtags ?? []).map(bare).filter((h) => h !== "");
  if (tags.length > 0) {
    where.push(
      `t.hashtags @> ARRAY(SELECT jsonb_array_elements_text(${arg(JSON.stringify(tags.map((h) => h.toLowerCase())))}::jsonb))`,
    );
  }
  const userId = (username: string) =>
    `(SELECT id FROM social_archive_users WHERE lower(username) = lower(${arg(bare(username))}))`;
  if (filters.from) where.push(`t.author_id = ${userId(filters.from)}`);
  if (filters.to) where.push(`t.in_reply_to_user_id = ${userId(filters.to)}`);
  if (filters.mentioning) where.push(`t.mentions @> ARRAY[lower(${arg(bare(filters.mentioning))})]`);
  if (filters.minReplies !== undefined)
    where.push(`t.reply_count >= ${arg(Math.trunc(filters.minReplies))}::int`);
  if (filters.minLikes !== undefined) where.push(`t.like_count >= ${arg(Math.trunc(filters.minLikes))}::int`);
  if (filters.minReposts !== undefined)
    where.push(`t.retweet_count >= ${arg(Math.trunc(filters.minReposts))}::int`);
  if (filters.since) where.push(`t.created_at >= ${arg(dayStart("since", filters.since))}::timestamptz`);
  if (filters.until) where.push(`t.created_at < ${arg(dayStart("until", filters.until))}::timestamptz`);
  return { where, params };
}

export async function searchTweets(
  q: Queryable,
  filters: SearchFilters,
  page: PageRequest,
): Promise<TweetPage> {
  if (!hasFilter(filters)) {
    throw new BadInputError("a search needs at least one filter", "missing_filter");
  }
  const { where, params } = searchConditions(filters);
  return tweetPage(q, where, params, page);
}

/** `%`, `_` and `\` taken literally in a LIKE pattern (usernames are full of `_`). */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The words of `term` as tsquery text in which each must begin a word (`'sato':* & 'naka':*`). Each word
 * is quoted, so nothing the caller types is tsquery syntax; the parser still splits it as it split the
 * users' text (`satoshi_n` is `'satoshi':* <-> 'n':*`).
 */
export function prefixQuery(term: string): string {
  return term
    .split(/\s+/)
    .filter((word) => word !== "")
    .map((word) => `'${word.replace(/\\/g, "\\\\").replace(/'/g, "''")}':*`)
    .join(" & ");
}

/**
 * Users with a word of their username, name or bio beginning with each of the query's words (accents and
 * case aside), through the GIN index of their narrow copy (`social_archive_user_search`, tables.ts version
 * 2); and the user of that exact username. Ranked: the exact username first, then usernames starting with
 * the query, then names or usernames matching it, then bios; within a rank, the most followed first. Only
 * the page's users are read whole. A word inside another (`nakamoto` in `satoshinakamoto`) is not found:
 * that would need a trigram index.
 */
export async function searchUsers(q: Queryable, query: string, page: PageRequest): Promise<UserPage> {
  const term = query.trim().replace(/^@/, "").toLowerCase();
  if (term === "") return { users: [] };
  const size = pageLimit(page);
  const args: unknown[] = [term, `${likeLiteral(term)}%`, prefixQuery(term)];
  let after = "";
  if (page.cursor !== undefined) {
    const key = readUserSearchCursor(page.cursor);
    args.push(key.rank, -key.followers, key.id);
    after = "WHERE (c.rank, -c.followers_count, c.id) > ($4::int, $5::int, $6::bigint)";
  }
  // The matches by word, and the exact username apart (a name of underscores has no word): two index
  // scans. One OR over both lets the planner prefer a scan of every row.
  const words = "to_tsquery('simple', social_archive_fold($3))";
  const ranked = `SELECT s.id, s.followers_count,
         CASE WHEN s.username = $1 THEN 0
              WHEN s.username LIKE $2 THEN 1
              WHEN ts_filter(s.search, '{a}') @@ ${words} THEN 2
              ELSE 3 END AS rank
    FROM social_archive_user_search s`;
  const { rows } = await q.query<{ doc: SocialUser; rank: number; followers_count: number; id: string }>(
    `WITH c AS (${ranked} WHERE s.search @@ ${words} UNION ${ranked} WHERE s.username = $1),
     p AS (SELECT * FROM c ${after} ORDER BY rank, followers_count DESC, id LIMIT ${size + 1})
     SELECT u.doc, p.rank, p.followers_count, p.id::text AS id
       FROM p JOIN social_archive_users u ON u.id = p.id
      ORDER BY p.rank, p.followers_count DESC, p.id`,
    args,
  );
  const last = rows[size - 1];
  return {
    users: rows.slice(0, size).map((r) => r.doc),
    ...(rows.length > size &&
      last && { next: userSearchCursor({ rank: last.rank, followers: last.followers_count, id: last.id }) }),
  };
}
