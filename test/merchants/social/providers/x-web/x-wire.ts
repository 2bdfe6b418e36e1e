/**
 * The world (`../../world.ts`) in X's web GraphQL wire format, as X writes it: users with `rest_id`,
 * `legacy` and (for Alice, as X has since 2025) `core`/`avatar`/`location`/`privacy`; tweets with `legacy`
 * (legacy dates, entities with code-point `indices`, a photo's t.co link at the end of `full_text`),
 * `core.user_results`, `views`, `quoted_status_result`, `article`, `community_results`; timelines of
 * `instructions[]` with `TimelineAddEntries` and, after the first page, the cursors in
 * `TimelineReplaceEntry`. What the fake X (`fake-x.ts`) serves.
 */
import type { SocialTweet, SocialUser } from "../../../../../src/merchants/social/model.ts";
import { legacyDate } from "../../../../../src/merchants/social/render.ts";
import { ARTICLE, LIST, MEDIA, TWEETS, USERS } from "../../world.ts";

type Json = Record<string, unknown>;

const b64 = (s: string) => Buffer.from(s).toString("base64");
const userById = (id: string) => USERS.find((u) => u.id === id);
const tweetById = (id: string) => TWEETS.find((t) => t.id === id);

/** Alice comes in X's newer shape (names and dates in `core`), the others in the older one. */
export function xUser(u: SocialUser): Json {
  const newer = u.username === "alice";
  const legacy: Json = {
    description: u.description,
    entities: {
      description: { urls: [] },
      ...(u.url && {
        url: {
          urls: [{ url: "https://t.co/abc", expanded_url: u.url, display_url: u.url, indices: [0, 23] }],
        },
      }),
    },
    default_profile: true,
    fast_followers_count: 0,
    favourites_count: 12,
    followers_count: u.metrics.followersCount,
    friends_count: u.metrics.followingCount,
    listed_count: u.metrics.listedCount,
    media_count: 0,
    normal_followers_count: u.metrics.followersCount,
    pinned_tweet_ids_str: u.pinnedTweetId ? [u.pinnedTweetId] : [],
    possibly_sensitive: false,
    statuses_count: u.metrics.tweetCount,
    translator_type: "none",
    ...(u.profileBannerUrl && { profile_banner_url: u.profileBannerUrl }),
    verified: false,
    want_retweets: false,
    withheld_in_countries: [],
  };
  if (!newer) {
    Object.assign(legacy, {
      screen_name: u.username,
      name: u.name,
      created_at: legacyDate(u.createdAt),
      location: u.location ?? "",
      profile_image_url_https: u.profileImageUrl,
      protected: u.protected,
    });
  }
  return {
    __typename: "User",
    id: b64(`User:${u.id}`),
    rest_id: u.id,
    affiliates_highlighted_label: {},
    has_graduated_access: true,
    is_blue_verified: u.verifiedType === "blue",
    profile_image_shape: "Circle",
    legacy,
    ...(newer && {
      core: { created_at: legacyDate(u.createdAt), name: u.name, screen_name: u.username },
      avatar: { image_url: u.profileImageUrl },
      location: { location: u.location ?? "" },
      privacy: { protected: u.protected },
      verification: { verified: u.verified && u.verifiedType !== "blue" },
      dm_permissions: { can_dm: false },
    }),
    tipjar_settings: {},
  };
}

/** Code points of a string: X's entity indices count them. */
const cpLength = (s: string) => [...s].length;

export function xTweet(t: SocialTweet, depth = 0): Json {
  const author = userById(t.authorId) as SocialUser;
  const media = MEDIA.filter((m) => t.mediaKeys.includes(m.mediaKey));
  const link = "https://t.co/Pic0aB1cD2";
  const fullText = media.length > 0 ? `${t.text} ${link}` : t.text;
  const mediaIndices = [cpLength(t.text) + 1, cpLength(fullText)];
  const xMedia = media.map((m) => ({
    display_url: "pic.x.com/Pic0aB1cD2",
    expanded_url: `https://x.com/${author.username}/status/${t.id}/photo/1`,
    id_str: m.mediaKey.split("_")[1],
    indices: mediaIndices,
    media_key: m.mediaKey,
    media_url_https: m.url,
    type: m.type,
    url: link,
    ext_alt_text: m.altText ?? undefined,
    ext_media_availability: { status: "Available" },
    features: { large: { faces: [] } },
    sizes: { large: { h: m.height, w: m.width, resize: "fit" } },
    original_info: { height: m.height, width: m.width, focus_rects: [] },
  }));
  const quoted = t.referencedTweets.find((r) => r.type === "quoted");
  const repliedTo = t.referencedTweets.find((r) => r.type === "replied_to");
  const replyUser = t.inReplyToUserId ? userById(t.inReplyToUserId) : undefined;
  const leadingMention = t.entities.mentions.find((m) => m.start === 0 && repliedTo);
  const quotedTweet = quoted && depth === 0 ? tweetById(quoted.id) : undefined;
  const article = t.articleId === ARTICLE.id ? ARTICLE : undefined;

  const legacy: Json = {
    bookmark_count: t.metrics.bookmarkCount,
    bookmarked: false,
    created_at: legacyDate(t.createdAt),
    conversation_id_str: t.conversationId,
    display_text_range: [leadingMention ? leadingMention.end + 1 : 0, cpLength(t.text)],
    entities: {
      hashtags: t.entities.hashtags.map((h) => ({ indices: [h.start, h.end], text: h.tag })),
      symbols: [],
      timestamps: [],
      urls: t.entities.urls.map((u) => ({
        display_url: u.displayUrl,
        expanded_url: u.expandedUrl,
        url: u.url,
        indices: [u.start, u.end],
      })),
      user_mentions: t.entities.mentions.map((m) => ({
        id_str: m.id,
        name: userById(m.id ?? "")?.name ?? m.username,
        screen_name: m.username,
        indices: [m.start, m.end],
      })),
      ...(xMedia.length > 0 && { media: xMedia }),
    },
    ...(xMedia.length > 0 && { extended_entities: { media: xMedia } }),
    favorite_count: t.metrics.likeCount,
    favorited: false,
    full_text: fullText,
    is_quote_status: quoted !== undefined,
    lang: t.lang,
    possibly_sensitive: t.possiblySensitive,
    possibly_sensitive_editable: true,
    quote_count: t.metrics.quoteCount,
    reply_count: t.metrics.replyCount,
    retweet_count: t.metrics.retweetCount,
    retweeted: false,
    user_id_str: t.authorId,
    id_str: t.id,
    ...(repliedTo && {
      in_reply_to_status_id_str: repliedTo.id,
      in_reply_to_user_id_str: t.inReplyToUserId,
      in_reply_to_screen_name: replyUser?.username,
    }),
    ...(quoted && {
      quoted_status_id_str: quoted.id,
      quoted_status_permalink: {
        url: "https://t.co/q",
        expanded: `https://x.com/i/status/${quoted.id}`,
        display: "x.com/…",
      },
    }),
  };
  return {
    __typename: "Tweet",
    rest_id: t.id,
    core: { user_results: { result: xUser(author) } },
    unmention_data: {},
    edit_control: {
      edit_tweet_ids: [t.id],
      editable_until_msecs: "1700000000000",
      is_edit_eligible: true,
      edits_remaining: "5",
    },
    is_translatable: false,
    views: { count: String(t.metrics.impressionCount), state: "EnabledWithCount" },
    source: '<a href="https://mobile.twitter.com" rel="nofollow">Twitter Web App</a>',
    legacy,
    ...(quotedTweet && { quoted_status_result: { result: xTweet(quotedTweet, depth + 1) } }),
    ...(t.communityId && {
      community_results: { result: { __typename: "Community", id_str: t.communityId } },
    }),
    ...(article && {
      article: {
        article_results: {
          result: {
            rest_id: article.id,
            id: b64(`ArticleEntity:${article.id}`),
            title: article.title,
            preview_text: article.previewText,
            cover_media: { media_info: { original_img_url: article.coverImageUrl, __typename: "ApiImage" } },
            content_state:
              article.content.format === "draftjs"
                ? {
                    blocks: article.content.state.blocks.map((b) => ({ ...b, data: {} })),
                    entityMap: Object.entries(article.content.state.entityMap).map(([key, value]) => ({
                      key,
                      value,
                    })),
                  }
                : undefined,
            metadata: { first_published_at_secs: Math.floor(Date.parse(article.publishedAt) / 1000) },
            lifecycle_state: { modified_at_secs: Math.floor(Date.parse(article.publishedAt) / 1000) },
          },
        },
      },
    }),
  };
}

export function xList(): Json {
  const owner = userById(LIST.ownerId) as SocialUser;
  return {
    __typename: "List",
    id: b64(`List:${LIST.id}`),
    id_str: LIST.id,
    name: LIST.name,
    description: LIST.description,
    mode: LIST.mode === "public" ? "Public" : "Private",
    member_count: LIST.memberCount,
    subscriber_count: LIST.followerCount,
    created_at: Date.parse(LIST.createdAt),
    default_banner_media: {
      media_info: {
        original_img_url: "https://pbs.twimg.com/media/EXZ2mJCUEAEbJb3.png",
        original_img_width: 1125,
      },
    },
    following: false,
    is_member: false,
    muting: false,
    pinning: false,
    user_results: { result: xUser(owner) },
  };
}

// ---- timelines ----

const SCROLL = "DAABCgABGRE";
export const cursorValue = (offset: number, side: "top" | "bottom") =>
  `${SCROLL}${Buffer.from(`${side}:${offset}`).toString("base64url")}`;
export function cursorOffset(cursor: unknown): number {
  if (typeof cursor !== "string" || !cursor.startsWith(SCROLL)) return 0;
  const [, offset] = Buffer.from(cursor.slice(SCROLL.length), "base64url").toString().split(":");
  return Number(offset) || 0;
}

export function tweetEntry(t: SocialTweet, sortIndex: string): Json {
  return {
    entryId: `tweet-${t.id}`,
    sortIndex,
    content: {
      entryType: "TimelineTimelineItem",
      __typename: "TimelineTimelineItem",
      itemContent: {
        itemType: "TimelineTweet",
        __typename: "TimelineTweet",
        tweet_results: { result: xTweet(t) },
        tweetDisplayType: "Tweet",
      },
      clientEventInfo: { component: "result", element: "tweet" },
    },
  };
}

export function userEntry(u: SocialUser, sortIndex: string): Json {
  return {
    entryId: `user-${u.id}`,
    sortIndex,
    content: {
      entryType: "TimelineTimelineItem",
      __typename: "TimelineTimelineItem",
      itemContent: {
        itemType: "TimelineUser",
        __typename: "TimelineUser",
        user_results: { result: xUser(u) },
        userDisplayType: "User",
      },
    },
  };
}

export function cursorEntry(offset: number, side: "top" | "bottom", sortIndex: string): Json {
  return {
    entryId: `cursor-${side}-${sortIndex}`,
    sortIndex,
    content: {
      entryType: "TimelineTimelineCursor",
      __typename: "TimelineTimelineCursor",
      value: cursorValue(offset, side),
      cursorType: side === "top" ? "Top" : "Bottom",
    },
  };
}

/**
 * A page of a timeline as X pages it: `count` items from the cursor's place, a top and a bottom cursor
 * always (X gives a bottom cursor even past the end), in the entries on the first page and in
 * `TimelineReplaceEntry` instructions on the later ones.
 */
export function timelinePage<T>(
  all: readonly T[],
  variables: Record<string, unknown>,
  entry: (item: T, sortIndex: string) => Json,
): Json[] {
  const offset = cursorOffset(variables.cursor);
  const count = typeof variables.count === "number" && variables.count > 0 ? variables.count : 20;
  const items = all.slice(offset, offset + count);
  const sortIndex = (i: number) => String(1_900_000_000_000_000_000n - BigInt(offset + i));
  const entries = items.map((item, i) => entry(item, sortIndex(i)));
  const top = cursorEntry(offset, "top", sortIndex(-1));
  const bottom = cursorEntry(offset + items.length, "bottom", sortIndex(items.length));
  if (variables.cursor === undefined)
    return [
      { type: "TimelineClearCache" },
      { type: "TimelineAddEntries", entries: [...entries, top, bottom] },
    ];
  return [
    { type: "TimelineAddEntries", entries },
    { type: "TimelineReplaceEntry", entry_id_to_replace: top.entryId, entry: top },
    { type: "TimelineReplaceEntry", entry_id_to_replace: bottom.entryId, entry: bottom },
  ];
}
