/**
 * The model as the social-data API answers it: X API v2's JSON shapes (`data`, `includes`, `meta`,
 * `errors`; snake_case fields; IDs as decimal strings), with `created_at` in X's legacy format
 * (`Sun Jul 19 15:48:00 +0000 2026`), as the live service with these paths answers.
 */
import type { Includes, SocialList, SocialMedia, SocialTweet, SocialUser } from "./model.ts";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n: number) => String(n).padStart(2, "0");

/** An ISO time in X's legacy format, always UTC: `Sun Jul 19 15:48:00 +0000 2026`. */
export function legacyDate(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) throw new Error(`not a time: ${iso}`);
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(
    d.getUTCMinutes(),
  )}:${two(d.getUTCSeconds())} +0000 ${d.getUTCFullYear()}`;
}

export function renderUser(u: SocialUser) {
  return {
    id: u.id,
    name: u.name,
    username: u.username,
    created_at: legacyDate(u.createdAt),
    description: u.description,
    location: u.location,
    url: u.url,
    profile_image_url: u.profileImageUrl,
    profile_banner_url: u.profileBannerUrl,
    protected: u.protected,
    verified: u.verified,
    verified_type: u.verifiedType,
    pinned_tweet_id: u.pinnedTweetId,
    public_metrics: {
      followers_count: u.metrics.followersCount,
      following_count: u.metrics.followingCount,
      tweet_count: u.metrics.tweetCount,
      listed_count: u.metrics.listedCount,
      ...(u.metrics.likeCount !== undefined && { like_count: u.metrics.likeCount }),
    },
  };
}

export function renderTweet(t: SocialTweet) {
  const e = t.entities;
  const entities = {
    ...(e.hashtags.length > 0 && { hashtags: e.hashtags }),
    ...(e.mentions.length > 0 && { mentions: e.mentions }),
    ...(e.urls.length > 0 && {
      urls: e.urls.map((u) => ({
        start: u.start,
        end: u.end,
        url: u.url,
        expanded_url: u.expandedUrl,
        display_url: u.displayUrl,
      })),
    }),
    ...(e.cashtags && e.cashtags.length > 0 && { cashtags: e.cashtags }),
  };
  return {
    id: t.id,
    text: t.text,
    author_id: t.authorId,
    created_at: legacyDate(t.createdAt),
    conversation_id: t.conversationId,
    lang: t.lang,
    ...(t.inReplyToUserId !== null && { in_reply_to_user_id: t.inReplyToUserId }),
    possibly_sensitive: t.possiblySensitive,
    public_metrics: {
      retweet_count: t.metrics.retweetCount,
      reply_count: t.metrics.replyCount,
      like_count: t.metrics.likeCount,
      quote_count: t.metrics.quoteCount,
      bookmark_count: t.metrics.bookmarkCount,
      impression_count: t.metrics.impressionCount,
    },
    ...(t.referencedTweets.length > 0 && { referenced_tweets: t.referencedTweets }),
    ...(Object.keys(entities).length > 0 && { entities }),
    ...(t.mediaKeys.length > 0 && { attachments: { media_keys: t.mediaKeys } }),
    edit_history_tweet_ids: [t.id],
    ...(t.articleId && { article: { id: t.articleId } }),
    ...(t.communityId && { community_id: t.communityId }),
  };
}

export function renderMedia(m: SocialMedia) {
  return {
    media_key: m.mediaKey,
    type: m.type,
    ...(m.type === "photo" ? { url: m.url } : { preview_image_url: m.url }),
    width: m.width,
    height: m.height,
    ...(m.altText !== null && { alt_text: m.altText }),
    ...(m.durationMs != null && { duration_ms: m.durationMs }),
  };
}

export function renderList(l: SocialList) {
  return {
    id: l.id,
    name: l.name,
    description: l.description,
    private: l.mode === "private",
    mode: l.mode,
    member_count: l.memberCount,
    follower_count: l.followerCount,
    created_at: legacyDate(l.createdAt),
    banner_url: l.bannerUrl,
    owner_id: l.ownerId,
  };
}

/** X API v2's `includes`, each kind once per id, empty kinds left out (and no `includes` when all are). */
export function renderIncludes(includes: Includes, leaveOut: { tweets?: readonly SocialTweet[] } = {}) {
  const once = <T>(items: readonly T[], key: (x: T) => string) => {
    const seen = new Set<string>();
    return items.filter((x) => !seen.has(key(x)) && seen.add(key(x)));
  };
  // A page's own tweets are in `data`: X lists in `includes.tweets` only the others they refer to.
  const own = new Set((leaveOut.tweets ?? []).map((t) => t.id));
  const users = once(includes.users, (u) => u.id).map(renderUser);
  const tweets = once(
    includes.tweets.filter((t) => !own.has(t.id)),
    (t) => t.id,
  ).map(renderTweet);
  const media = once(includes.media, (m) => m.mediaKey).map(renderMedia);
  const out = {
    ...(users.length > 0 && { users }),
    ...(tweets.length > 0 && { tweets }),
    ...(media.length > 0 && { media }),
  };
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A page's `meta`: its count, the cursor of the next page, the newest and oldest ids for tweets. */
export function renderMeta(items: readonly { id: string }[], nextToken: string | undefined, tweets: boolean) {
  return {
    result_count: items.length,
    ...(tweets && items.length > 0 && { newest_id: items[0]?.id, oldest_id: items.at(-1)?.id }),
    ...(nextToken !== undefined && { next_token: nextToken }),
  };
}
