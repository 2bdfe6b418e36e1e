/**
 * The filters of `/tweets/search` (docs/social.md, and the names clients of the live service send), and the
 * same filters written in X's search syntax, which the web API and the paid REST provider take:
 *
 * | filter | meaning | X syntax |
 * |---|---|---|
 * | `words` | every word | `a b` |
 * | `phrase` | the exact phrase | `"a b"` |
 * | `anyWords` | at least one word | `(a OR b)` |
 * | `noneWords` | none of the words | `-a -b` |
 * | `hashtags` | every hashtag (no `#`) | `#a #b` |
 * | `from`, `to`, `mentioning` | by, in reply to, mentioning a user (no `@`) | `from:u`, `to:u`, `@u` |
 * | `minReplies`, `minLikes`, `minReposts` | at least that many | `min_replies:n`, `min_faves:n`, `min_retweets:n` |
 * | `since`, `until` | UTC dates, since inclusive, until exclusive | `since:YYYY-MM-DD`, `until:YYYY-MM-DD` |
 *
 * The archive provider reads the filters themselves, not the string.
 */

export interface SearchFilters {
  words?: string[];
  phrase?: string;
  anyWords?: string[];
  noneWords?: string[];
  hashtags?: string[];
  from?: string;
  to?: string;
  mentioning?: string;
  minReplies?: number;
  minLikes?: number;
  minReposts?: number;
  /** YYYY-MM-DD, inclusive. */
  since?: string;
  /** YYYY-MM-DD, exclusive. */
  until?: string;
}

/** Whether any filter is set: a search with none is refused (docs/social.md, "Errors, never charged"). */
export function hasFilter(filters: SearchFilters): boolean {
  return Object.values(filters).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined && v !== ""));
}

/** A word as X's syntax takes it: quoted when it holds a space, a quote or could read as an operator. */
function term(word: string): string {
  return /^[\p{L}\p{N}_'-]+$/u.test(word) && !/^(OR|AND)$/.test(word) && !word.startsWith("-")
    ? word
    : `"${word.replaceAll('"', "")}"`;
}

/** The filters in X's search syntax, in a fixed order, e.g. `bitcoin "to the moon" -scam from:alice min_faves:10`. */
export function toXSearchQuery(filters: SearchFilters): string {
  const parts: string[] = [];
  for (const word of filters.words ?? []) parts.push(term(word));
  if (filters.phrase) parts.push(`"${filters.phrase.replaceAll('"', "")}"`);
  const any = filters.anyWords ?? [];
  if (any.length === 1) parts.push(term(any[0] as string));
  else if (any.length > 1) parts.push(`(${any.map(term).join(" OR ")})`);
  for (const word of filters.noneWords ?? []) parts.push(`-${term(word)}`);
  for (const tag of filters.hashtags ?? []) parts.push(`#${tag}`);
  if (filters.from) parts.push(`from:${filters.from}`);
  if (filters.to) parts.push(`to:${filters.to}`);
  if (filters.mentioning) parts.push(`@${filters.mentioning}`);
  if (filters.minReplies !== undefined) parts.push(`min_replies:${filters.minReplies}`);
  if (filters.minLikes !== undefined) parts.push(`min_faves:${filters.minLikes}`);
  if (filters.minReposts !== undefined) parts.push(`min_retweets:${filters.minReposts}`);
  if (filters.since) parts.push(`since:${filters.since}`);
  if (filters.until) parts.push(`until:${filters.until}`);
  return parts.join(" ");
}
