/**
 * twitterapi.io's tweet object (their docs: `{type: "tweet", id, url, text, createdAt, lang, retweetCount,
 * replyCount, likeCount, quoteCount, viewCount, bookmarkCount, conversationId, inReplyToId, inReplyToUserId,
 * author{user}, entities{hashtags[{indices, text}], urls[{indices, url, expanded_url, display_url}],
 * user_mentions[{id_str, name, screen_name}]}, quoted_tweet, retweeted_tweet}`) in the model, with what it
 * brings (author, quoted and retweeted tweets and their authors, media) gathered as the page's includes.
 *
 * Their docs show mentions without `indices`: the offsets are then found in the text. Media are read from
 * X's legacy `extendedEntities.media` (or `extended_entities` / `entities.media`), which their docs do not show.
 */
import type { Includes, SocialMedia, SocialTweet, SocialUser, TweetEntities } from "../../model.ts";
import { asArray, idOf, invalid, isObject, isoTime, num, parseUser, text } from "./parse-user.ts";

/** Collects a page's includes once each, in the order first met. */
export class IncludesBuilder {
  private readonly users = new Map<string, SocialUser>();
  private readonly tweets = new Map<string, SocialTweet>();
  private readonly media = new Map<string, SocialMedia>();

  user(u: SocialUser | null): void {
    if (u && !this.users.has(u.id)) this.users.set(u.id, u);
  }
  tweet(t: SocialTweet): void {
    if (!this.tweets.has(t.id)) this.tweets.set(t.id, t);
  }
  medium(m: SocialMedia): void {
    if (!this.media.has(m.mediaKey)) this.media.set(m.mediaKey, m);
  }
  /** The includes, leaving out the tweets that are the page's own items. */
  build(mainIds: ReadonlySet<string> = new Set()): Includes {
    return {
      users: [...this.users.values()],
      tweets: [...this.tweets.values()].filter((t) => !mainIds.has(t.id)),
      media: [...this.media.values()],
    };
  }
}

const codePoints = (s: string) => [...s].length;

/** `[start, end]` from X's `indices`, or null. */
function indices(v: unknown): [number, number] | null {
  const a = asArray(v);
  return typeof a[0] === "number" && typeof a[1] === "number" ? [a[0], a[1]] : null;
}

/** Where `token` (e.g. `@bob`) stands in `full` from UTF-16 index `from` on, in code points; null if absent. */
function findToken(
  full: string,
  token: string,
  from: number,
): { start: number; end: number; next: number } | null {
  const lower = full.toLowerCase();
  let at = lower.indexOf(token.toLowerCase(), from);
  while (at >= 0) {
    const after = full.charAt(at + token.length);
    if (!/[\p{L}\p{N}_]/u.test(after)) {
      const start = codePoints(full.slice(0, at));
      return { start, end: start + codePoints(token), next: at + token.length };
    }
    at = lower.indexOf(token.toLowerCase(), at + 1);
  }
  return null;
}

function parseEntities(e: unknown, full: string): TweetEntities {
  const entities = isObject(e) ? e : {};
  const out: TweetEntities = { hashtags: [], mentions: [], urls: [] };
  let from = 0;
  for (const h of asArray(entities.hashtags)) {
    if (!isObject(h) || !text(h.text)) continue;
    const at = indices(h.indices) ?? findToken(full, `#${text(h.text)}`, from);
    if (!at) continue;
    const [start, end] = Array.isArray(at) ? at : [at.start, at.end];
    if (!Array.isArray(at)) from = at.next;
    out.hashtags.push({ start, end, tag: text(h.text) });
  }
  from = 0;
  for (const m of asArray(entities.user_mentions)) {
    if (!isObject(m) || !text(m.screen_name)) continue;
    const at = indices(m.indices) ?? findToken(full, `@${text(m.screen_name)}`, from);
    if (!at) continue;
    const [start, end] = Array.isArray(at) ? at : [at.start, at.end];
    if (!Array.isArray(at)) from = at.next;
    const id = idOf(m.id_str) ?? idOf(m.id);
    out.mentions.push({ start, end, username: text(m.screen_name), ...(id && { id }) });
  }
  from = 0;
  for (const u of asArray(entities.urls)) {
    if (!isObject(u) || !text(u.url)) continue;
    const at = indices(u.indices) ?? findToken(full, text(u.url), from);
    if (!at) continue;
    const [start, end] = Array.isArray(at) ? at : [at.start, at.end];
    if (!Array.isArray(at)) from = at.next;
    out.urls.push({
      start,
      end,
      url: text(u.url),
      expandedUrl: text(u.expanded_url) || text(u.url),
      displayUrl: text(u.display_url) || text(u.url),
    });
  }
  return out;
}

const MEDIA_PREFIX: Record<SocialMedia["type"], string> = { photo: "3", video: "7", animated_gif: "16" };

function parseMedia(t: Json): SocialMedia[] {
  const holder = [t.extendedEntities, t.extended_entities, t.entities].find(
    (x) => isObject(x) && Array.isArray(x.media),
  );
  if (!isObject(holder)) return [];
  const out: SocialMedia[] = [];
  for (const m of asArray(holder.media)) {
    if (!isObject(m)) continue;
    const type = m.type === "video" || m.type === "animated_gif" ? m.type : "photo";
    const id = idOf(m.id_str) ?? idOf(m.id);
    const mediaKey = text(m.media_key) || (id ? `${MEDIA_PREFIX[type]}_${id}` : "");
    const url = text(m.media_url_https) || text(m.media_url);
    if (!mediaKey || !url) continue;
    const info = isObject(m.original_info) ? m.original_info : {};
    const video = isObject(m.video_info) ? m.video_info : {};
    out.push({
      mediaKey,
      type,
      url,
      width: typeof info.width === "number" ? info.width : null,
      height: typeof info.height === "number" ? info.height : null,
      altText: text(m.ext_alt_text) || null,
      ...(type !== "photo" && {
        durationMs: typeof video.duration_millis === "number" ? video.duration_millis : null,
      }),
    });
  }
  return out;
}

type Json = Record<string, unknown>;

/** A tweet, with what it brings added to `includes`. Throws 502 on nonsense. */
export function parseTweet(t: unknown, includes: IncludesBuilder): SocialTweet {
  if (!isObject(t)) throw invalid("a tweet");
  const id = idOf(t.id);
  const author = parseUser(t.author);
  const createdAt = isoTime(t.createdAt);
  if (!id || !author || !createdAt) throw invalid("a tweet without an id, an author or a time");
  includes.user(author);
  const full = text(t.text);
  const referencedTweets: SocialTweet["referencedTweets"] = [];
  const inReplyToId = idOf(t.inReplyToId);
  if (inReplyToId) referencedTweets.push({ type: "replied_to", id: inReplyToId });
  for (const [key, type] of [
    ["quoted_tweet", "quoted"],
    ["retweeted_tweet", "retweeted"],
  ] as const) {
    if (!isObject(t[key])) continue;
    const inner = parseTweet(t[key], includes);
    includes.tweet(inner);
    referencedTweets.push({ type, id: inner.id });
  }
  const media = parseMedia(t);
  for (const m of media) includes.medium(m);
  return {
    id,
    text: full,
    authorId: author.id,
    createdAt,
    conversationId: idOf(t.conversationId) ?? id,
    lang: text(t.lang) || "und",
    inReplyToUserId: idOf(t.inReplyToUserId),
    metrics: {
      retweetCount: num(t.retweetCount),
      replyCount: num(t.replyCount),
      likeCount: num(t.likeCount),
      quoteCount: num(t.quoteCount),
      bookmarkCount: num(t.bookmarkCount),
      impressionCount: num(t.viewCount),
    },
    referencedTweets,
    entities: parseEntities(t.entities, full),
    mediaKeys: media.map((m) => m.mediaKey),
    possiblySensitive: t.possiblySensitive === true,
  };
}

/** The tweets of a page with their includes (the page's own tweets left out of `includes.tweets`). */
export function parseTweets(list: unknown): { tweets: SocialTweet[]; includes: Includes } {
  const builder = new IncludesBuilder();
  const tweets = asArray(list).map((t) => parseTweet(t, builder));
  return { tweets, includes: builder.build(new Set(tweets.map((t) => t.id))) };
}
