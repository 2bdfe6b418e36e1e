/**
 * X's GraphQL tweet (`tweetResult.result`, `tweet_results.result`) as a `SocialTweet`, collecting what it
 * refers to (its author, the quoted or reposted tweet and its author, its media) into a `Collected`.
 * - `TweetWithVisibilityResults` wraps the tweet in `.tweet`; `TweetTombstone` and `TweetUnavailable`
 *   (deleted, withheld, protected) are `null`.
 * - A long post's whole text is `note_tweet.note_tweet_results.result.text`, with its own `entity_set`;
 *   `legacy.full_text` is then its first 280 characters.
 * - Entity `indices` are in code points, as the model's offsets; `full_text` comes HTML-escaped (`&amp;`,
 *   `&lt;`, `&gt;`), the indices count the unescaped text.
 * - IDs come from `rest_id` and the `*_str` fields only.
 */
import type {
  Includes,
  ReferencedTweet,
  SocialMedia,
  SocialTweet,
  SocialUser,
  TweetEntities,
} from "../../model.ts";
import { arr, at, isoTime, num, obj, str } from "./json.ts";
import { parseUser } from "./parse-user.ts";

/** What a page's items refer to, by id, in the order first met. */
export class Collected {
  readonly users = new Map<string, SocialUser>();
  readonly tweets = new Map<string, SocialTweet>();
  readonly media = new Map<string, SocialMedia>();

  /** As `includes`, leaving out the page's own items. */
  includes(leaveOut: readonly { id: string }[] = []): Includes {
    const own = new Set(leaveOut.map((t) => t.id));
    return {
      users: [...this.users.values()],
      tweets: [...this.tweets.values()].filter((t) => !own.has(t.id)),
      media: [...this.media.values()],
    };
  }
}

const isId = (value: string | undefined): value is string => value !== undefined && /^\d+$/.test(value);

/** The tweet inside X's wrappers, or undefined for a tombstone or anything that is not one. */
export function unwrapTweet(result: unknown): Record<string, unknown> | undefined {
  let r = obj(result);
  for (let i = 0; r && i < 3; i++) {
    if (r.__typename === "TweetWithVisibilityResults" || (r.__typename === undefined && obj(r.tweet)))
      r = obj(r.tweet);
    else break;
  }
  if (!r) return undefined;
  if (r.__typename !== undefined && r.__typename !== "Tweet") return undefined;
  if (!isId(str(r.rest_id)) || !obj(r.legacy)) return undefined;
  return r;
}

const unescapeHtml = (text: string) =>
  text.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");

function indices(value: unknown): { start: number; end: number } | undefined {
  const [start, end] = arr(value);
  return typeof start === "number" && typeof end === "number" ? { start, end } : undefined;
}

export function parseEntities(entities: unknown): TweetEntities {
  const e = obj(entities) ?? {};
  const out: TweetEntities = { hashtags: [], mentions: [], urls: [] };
  for (const h of arr(e.hashtags)) {
    const at_ = indices(obj(h)?.indices);
    const tag = str(obj(h)?.text);
    if (at_ && tag) out.hashtags.push({ ...at_, tag });
  }
  for (const m of arr(e.user_mentions)) {
    const at_ = indices(obj(m)?.indices);
    const username = str(obj(m)?.screen_name);
    const id = str(obj(m)?.id_str);
    if (at_ && username) out.mentions.push({ ...at_, username, ...(isId(id) && { id }) });
  }
  for (const u of arr(e.urls)) {
    const at_ = indices(obj(u)?.indices);
    const url = str(obj(u)?.url);
    if (at_ && url)
      out.urls.push({
        ...at_,
        url,
        expandedUrl: str(obj(u)?.expanded_url) ?? url,
        displayUrl: str(obj(u)?.display_url) ?? url,
      });
  }
  const cashtags = arr(e.symbols).flatMap((s) => {
    const at_ = indices(obj(s)?.indices);
    const tag = str(obj(s)?.text);
    return at_ && tag ? [{ ...at_, tag }] : [];
  });
  if (cashtags.length > 0) out.cashtags = cashtags;
  return out;
}

export function parseMedia(medium: unknown): SocialMedia | undefined {
  const m = obj(medium);
  const mediaKey = str(m?.media_key);
  const url = str(m?.media_url_https);
  const type = str(m?.type);
  if (!m || !mediaKey || !url || (type !== "photo" && type !== "video" && type !== "animated_gif"))
    return undefined;
  const width = at(m, "original_info", "width");
  const height = at(m, "original_info", "height");
  const duration = at(m, "video_info", "duration_millis");
  return {
    mediaKey,
    type,
    url,
    width: typeof width === "number" ? width : null,
    height: typeof height === "number" ? height : null,
    altText: str(m.ext_alt_text) ?? null,
    ...(type !== "photo" && { durationMs: typeof duration === "number" ? duration : null }),
  };
}

/** The tweet, or null for a tombstone; what it refers to goes into `into`. */
export function parseTweet(result: unknown, into: Collected): SocialTweet | null {
  const r = unwrapTweet(result);
  if (!r) return null;
  const legacy = obj(r.legacy) ?? {};
  const id = str(r.rest_id) as string;

  const author = parseUser(at(r, "core", "user_results", "result"));
  if (author && !into.users.has(author.id)) into.users.set(author.id, author);
  const authorId = author?.id ?? str(legacy.user_id_str) ?? "";

  const note = obj(at(r, "note_tweet", "note_tweet_results", "result"));
  const noteText = str(note?.text);
  const text = noteText ?? unescapeHtml(str(legacy.full_text) ?? "");
  const entities = parseEntities(noteText !== undefined ? note?.entity_set : legacy.entities);

  const mediaKeys: string[] = [];
  for (const medium of arr(at(legacy, "extended_entities", "media") ?? at(legacy, "entities", "media"))) {
    const m = parseMedia(medium);
    if (!m) continue;
    mediaKeys.push(m.mediaKey);
    if (!into.media.has(m.mediaKey)) into.media.set(m.mediaKey, m);
  }

  const referencedTweets: ReferencedTweet[] = [];
  const reposted = parseTweet(at(legacy, "retweeted_status_result", "result"), into);
  if (reposted) {
    referencedTweets.push({ type: "retweeted", id: reposted.id });
    into.tweets.set(reposted.id, reposted);
  }
  const quotedId = str(legacy.quoted_status_id_str);
  const quoted = parseTweet(at(r, "quoted_status_result", "result"), into);
  if (quoted) into.tweets.set(quoted.id, quoted);
  const quotedRef = isId(quotedId) ? quotedId : quoted?.id;
  if (quotedRef && !reposted) referencedTweets.push({ type: "quoted", id: quotedRef });
  const repliedTo = str(legacy.in_reply_to_status_id_str);
  if (isId(repliedTo)) referencedTweets.push({ type: "replied_to", id: repliedTo });

  const inReplyTo = str(legacy.in_reply_to_user_id_str);
  const articleId = str(at(r, "article", "article_results", "result", "rest_id"));
  const community =
    obj(at(r, "community_results", "result")) ??
    obj(at(r, "author_community_relationship", "community_results", "result"));
  const communityId = str(community?.rest_id) ?? str(community?.id_str);
  const conversationId = str(legacy.conversation_id_str);

  return {
    id,
    text,
    authorId,
    createdAt: isoTime(legacy.created_at),
    conversationId: isId(conversationId) ? conversationId : id,
    lang: str(legacy.lang) || "und",
    inReplyToUserId: isId(inReplyTo) ? inReplyTo : null,
    metrics: {
      retweetCount: num(legacy.retweet_count),
      replyCount: num(legacy.reply_count),
      likeCount: num(legacy.favorite_count),
      quoteCount: num(legacy.quote_count),
      bookmarkCount: num(legacy.bookmark_count),
      impressionCount: num(at(r, "views", "count")),
    },
    referencedTweets,
    entities,
    mediaKeys,
    possiblySensitive: legacy.possibly_sensitive === true,
    ...(isId(articleId) && { articleId }),
    ...(isId(communityId) && { communityId }),
  };
}
