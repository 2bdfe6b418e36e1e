/**
 * The social provider over X's web GraphQL API (`x-web`): each method is one or two GraphQL operations
 * (`operations.ts`) through the client (`client.ts`), their answers read by the parsers. What X's web app
 * has no operation for is composed: quote tweets are the search `quoted_tweet_id:<id>`, replies the
 * conversation of `TweetDetail` after the focal tweet, mentions the search `@<screen_name>` as the caller
 * (found with `Viewer`), user search the search with product `People`.
 * Cursors are X's own `Bottom` cursors. X gives one even on the last page, so a page without items, or
 * whose cursor did not move, is the last.
 */
import { UpstreamError } from "../../../../common/errors.ts";
import type { Includes, SocialTweet, SocialUser } from "../../model.ts";
import type {
  CallerSession,
  MediaFile,
  PageRequest,
  SocialProvider,
  TweetPage,
  UploadedMedia,
  UserPage,
} from "../../provider.ts";
import { type SearchFilters, toXSearchQuery } from "../../search-query.ts";
import { type GraphQLAnswer, invalidSession, PROVIDER, XWebClient, type XWebOptions } from "./client.ts";
import { arr, at, num, obj, str } from "./json.ts";
import type { Operation } from "./operations.ts";
import { parseArticle } from "./parse-article.ts";
import { parseList } from "./parse-list.ts";
import { parseTimeline, type Timeline } from "./parse-timeline.ts";
import { Collected, parseTweet, unwrapTweet } from "./parse-tweet.ts";
import { parseUser } from "./parse-user.ts";

/** X's error codes and messages that mean "not there", not trouble. */
function isNotFound(error: { message: string; code?: number }): boolean {
  return (
    error.code === 144 ||
    error.code === 34 ||
    error.code === 50 ||
    error.code === 63 ||
    /_Missing|No status found|not found|does not exist|Unknown (user|list|community)/i.test(error.message)
  );
}

/** What an answer without the wanted object means: `null` (not found), or a 502 when X said why. */
function absent(answer: GraphQLAnswer, operation: Operation): null {
  const trouble = answer.errors.find((e) => !isNotFound(e));
  if (trouble)
    throw new UpstreamError(
      `the ${PROVIDER} answered ${operation} with an error${trouble.message ? `: ${trouble.message}` : ""}`,
      "upstream_failed",
    );
  return null;
}

function noTimeline(operation: Operation): UpstreamError {
  return new UpstreamError(`the ${PROVIDER} answered ${operation} without its timeline`, "upstream_invalid");
}

const paging = (page: PageRequest) => ({
  count: page.size,
  ...(page.cursor !== undefined && { cursor: page.cursor }),
});

/** The next page's cursor: X's `Bottom` cursor, unless this page was empty or the cursor did not move. */
const nextOf = (timeline: Timeline, found: number, page: PageRequest) =>
  found > 0 && timeline.bottom && timeline.bottom !== page.cursor ? { next: timeline.bottom } : {};

function tweetPage(
  timeline: Timeline,
  page: PageRequest,
  keep: (t: SocialTweet) => boolean = () => true,
  into = new Collected(),
): TweetPage {
  const tweets: SocialTweet[] = [];
  const seen = new Set<string>();
  for (const item of timeline.items) {
    if (item.kind !== "tweet") continue;
    const t = parseTweet(item.result, into);
    if (t && keep(t) && !seen.has(t.id)) {
      seen.add(t.id);
      tweets.push(t);
    }
  }
  return { tweets, includes: into.includes(tweets), ...nextOf(timeline, timeline.items.length, page) };
}

function userPage(timeline: Timeline, page: PageRequest): UserPage {
  const users: SocialUser[] = [];
  const seen = new Set<string>();
  for (const item of timeline.items) {
    if (item.kind !== "user") continue;
    const u = parseUser(item.result);
    if (u && !seen.has(u.id)) {
      seen.add(u.id);
      users.push(u);
    }
  }
  return { users, ...nextOf(timeline, timeline.items.length, page) };
}

/** Adds `extra` to `includes`, each object once. */
function merge(includes: Includes, extra: Includes): void {
  const add = <T>(list: T[], more: T[], key: (x: T) => string) => {
    const have = new Set(list.map(key));
    for (const x of more) {
      if (have.has(key(x))) continue;
      have.add(key(x));
      list.push(x);
    }
  };
  add(includes.users, extra.users, (u) => u.id);
  add(includes.tweets, extra.tweets, (t) => t.id);
  add(includes.media, extra.media, (m) => m.mediaKey);
}

const TWEET_VARIABLES = { withCommunity: true, includePromotedContent: false, withVoice: true };

export function xWebProvider(options: XWebOptions): SocialProvider {
  const client = new XWebClient(options);
  const q = (
    operation: Operation,
    variables: Record<string, unknown>,
    signal: AbortSignal,
    session?: CallerSession,
  ) => client.graphql(operation, variables, signal, session);

  async function tweetResult(id: string, signal: AbortSignal): Promise<Record<string, unknown> | null> {
    const answer = await q("TweetResultByRestId", { tweetId: id, ...TWEET_VARIABLES }, signal);
    const result = at(answer.data, "tweetResult", "result");
    if (result === undefined) return absent(answer, "TweetResultByRestId");
    return unwrapTweet(result) ?? null;
  }

  async function search(
    rawQuery: string,
    product: "Latest" | "People",
    page: PageRequest,
    signal: AbortSignal,
    session?: CallerSession,
  ): Promise<Timeline> {
    const answer = await q(
      "SearchTimeline",
      { rawQuery, ...paging(page), querySource: "typed_query", product },
      signal,
      session,
    );
    const instructions = at(
      answer.data,
      "search_by_raw_query",
      "search_timeline",
      "timeline",
      "instructions",
    );
    if (!Array.isArray(instructions)) {
      absent(answer, "SearchTimeline");
      throw noTimeline("SearchTimeline");
    }
    return parseTimeline(instructions);
  }

  /** A timeline under `data`, or null when its subject is not there. */
  async function timeline(
    operation: Operation,
    variables: Record<string, unknown>,
    signal: AbortSignal,
    subject: string[],
    paths: string[][],
  ): Promise<Timeline | null> {
    const answer = await q(operation, variables, signal);
    const holder = at(answer.data, ...subject);
    const typename = obj(holder)?.__typename;
    if (
      !obj(holder) ||
      Object.keys(obj(holder) ?? {}).length === 0 ||
      /Unavailable$/.test(String(typename ?? ""))
    )
      return absent(answer, operation);
    for (const path of paths) {
      const instructions = at(holder, ...path);
      if (Array.isArray(instructions)) return parseTimeline(instructions);
    }
    absent(answer, operation);
    throw noTimeline(operation);
  }

  /** A user's followers or followings: null for an unknown user. */
  async function connections(
    operation: "Followers" | "Following",
    userId: string,
    page: PageRequest,
    signal: AbortSignal,
  ): Promise<UserPage | null> {
    const found = await timeline(
      operation,
      { userId, ...paging(page), includePromotedContent: false },
      signal,
      ["user", "result"],
      [
        ["timeline", "timeline", "instructions"],
        ["timeline_v2", "timeline", "instructions"],
      ],
    );
    return found && userPage(found, page);
  }

  /** A list's members or followers (X's subscribers): null for an unknown or private list. */
  async function listPeople(
    operation: "ListMembers" | "ListSubscribers",
    holder: "members_timeline" | "subscribers_timeline",
    listId: string,
    page: PageRequest,
    signal: AbortSignal,
  ): Promise<UserPage | null> {
    const found = await timeline(
      operation,
      { listId, ...paging(page), withSafetyModeUserFields: true },
      signal,
      ["list"],
      [[holder, "timeline", "instructions"]],
    );
    return found && userPage(found, page);
  }

  /** An empty first page of something about a tweet: null when the tweet is not there. */
  async function emptyMeansUnknownTweet<P extends TweetPage | UserPage>(
    tweetId: string,
    result: P,
    page: PageRequest,
    signal: AbortSignal,
  ): Promise<P | null> {
    const empty = "tweets" in result ? result.tweets.length === 0 : result.users.length === 0;
    if (!empty || page.cursor !== undefined) return result;
    return (await tweetResult(tweetId, signal)) ? result : null;
  }

  /**
   * The replied-to tweets the items name and X did not bring (a timeline carries the quoted tweet, not the
   * replied-to one), looked up in one `TweetResultsByRestIds` per 50, with their authors and media, into
   * `includes`. Best effort: the page stands without them if that lookup fails.
   */
  async function withRepliedTo<P extends { tweets: SocialTweet[]; includes: Includes }>(
    found: P,
    signal: AbortSignal,
  ): Promise<P> {
    const have = new Set([...found.tweets, ...found.includes.tweets].map((t) => t.id));
    const missing = [
      ...new Set(
        found.tweets.flatMap((t) =>
          t.referencedTweets.filter((r) => r.type === "replied_to" && !have.has(r.id)).map((r) => r.id),
        ),
      ),
    ];
    try {
      for (let i = 0; i < missing.length; i += 50) {
        const extra = await lookup(missing.slice(i, i + 50), signal);
        merge(found.includes, { ...extra.includes, tweets: [...extra.tweets, ...extra.includes.tweets] });
      }
    } catch (error) {
      if (signal.aborted) throw error;
    }
    return found;
  }

  async function lookup(ids: readonly string[], signal: AbortSignal) {
    if (ids.length === 0) return { tweets: [], includes: new Collected().includes() };
    const answer = await q("TweetResultsByRestIds", { tweetIds: [...ids], ...TWEET_VARIABLES }, signal);
    const results = at(answer.data, "tweetResult");
    if (!Array.isArray(results)) {
      absent(answer, "TweetResultsByRestIds");
      if (answer.errors.length === 0 && Object.keys(answer.data).length > 0)
        throw noTimeline("TweetResultsByRestIds");
    }
    const into = new Collected();
    const byId = new Map<string, SocialTweet>();
    for (const entry of arr(results)) {
      const t = parseTweet(at(entry, "result"), into);
      if (t) byId.set(t.id, t);
    }
    const tweets = [...new Set(ids)].flatMap((id) => byId.get(id) ?? []);
    return { tweets, includes: into.includes(tweets) };
  }

  const provider: SocialProvider = {
    name: "x-web",

    async tweet(id, signal) {
      const result = await tweetResult(id, signal);
      const into = new Collected();
      const t = result && parseTweet(result, into);
      return t ? withRepliedTo({ tweets: [t], includes: into.includes([t]) }, signal) : null;
    },

    async tweets(ids, signal) {
      return withRepliedTo(await lookup(ids, signal), signal);
    },

    async userByUsername(username, signal) {
      const answer = await q(
        "UserByScreenName",
        { screen_name: username, withSafetyModeUserFields: true },
        signal,
      );
      const result = at(answer.data, "user", "result");
      if (result === undefined) return absent(answer, "UserByScreenName");
      return parseUser(result);
    },

    async list(id, signal) {
      const answer = await q("ListByRestId", { listId: id }, signal);
      const list = obj(at(answer.data, "list"));
      if (!list || Object.keys(list).length === 0) return absent(answer, "ListByRestId");
      return parseList(list);
    },

    async article(tweetId, signal) {
      const result = await tweetResult(tweetId, signal);
      if (!result) return null;
      const into = new Collected();
      const t = parseTweet(result, into);
      const author = t && into.users.get(t.authorId);
      if (!t || !author) return null;
      const article = parseArticle(result, t.id, author.id, t.createdAt);
      return article ? { article, author } : null;
    },

    async searchTweets(filters: SearchFilters, page, signal) {
      return withRepliedTo(
        tweetPage(await search(toXSearchQuery(filters), "Latest", page, signal), page),
        signal,
      );
    },

    async mentions(session, page, signal) {
      const answer = await q("Viewer", { withCommunitiesMemberships: false }, signal, session);
      const me = parseUser(at(answer.data, "viewer", "user_results", "result"));
      if (!me) {
        if (answer.errors.length === 0 && !obj(answer.data.viewer)) throw invalidSession();
        absent(answer, "Viewer");
        throw invalidSession();
      }
      const found = tweetPage(await search(`@${me.username}`, "Latest", page, signal, session), page);
      return withRepliedTo(found, signal);
    },

    async userTweets(username, page, signal) {
      const user = await provider.userByUsername(username, signal);
      if (!user) return null;
      const found = await timeline(
        "UserTweets",
        {
          userId: user.id,
          ...paging(page),
          includePromotedContent: false,
          withQuickPromoteEligibilityTweetFields: false,
          withVoice: true,
        },
        signal,
        ["user", "result"],
        [
          ["timeline_v2", "timeline", "instructions"],
          ["timeline", "timeline", "instructions"],
        ],
      );
      // Conversation modules can bring others' tweets a reply of the user's answers: only the user's own.
      return (
        found &&
        withRepliedTo(
          tweetPage(found, page, (t) => t.authorId === user.id),
          signal,
        )
      );
    },

    async quoteTweets(tweetId, page, signal) {
      const result = tweetPage(await search(`quoted_tweet_id:${tweetId}`, "Latest", page, signal), page);
      const known = await emptyMeansUnknownTweet(tweetId, result, page, signal);
      return known && withRepliedTo(known, signal);
    },

    async replies(tweetId, page, signal) {
      const found = await timeline(
        "TweetDetail",
        {
          focalTweetId: tweetId,
          ...(page.cursor !== undefined && { cursor: page.cursor }),
          referrer: "tweet",
          with_rux_injections: false,
          rankingMode: "Recency",
          ...TWEET_VARIABLES,
          withQuickPromoteEligibilityTweetFields: false,
          withBirdwatchNotes: true,
        },
        signal,
        ["threaded_conversation_with_injections_v2"],
        [["instructions"]],
      );
      if (!found) return null;
      // The first page holds the tweets above the focal one and the focal one: the replies come after.
      const focal = found.items.findIndex((item) => item.entryId === `tweet-${tweetId}`);
      if (page.cursor === undefined && focal < 0) return null;
      // The focal tweet and those above it are what the replies reply to: includes.
      const into = new Collected();
      for (const item of found.items.slice(0, focal + 1)) {
        const t = item.kind === "tweet" ? parseTweet(item.result, into) : null;
        if (t) into.tweets.set(t.id, t);
      }
      const after = { ...found, items: found.items.slice(focal + 1) };
      return withRepliedTo(
        tweetPage(after, page, (t) => t.id !== tweetId, into),
        signal,
      );
    },

    async listTweets(listId, page, signal) {
      const found = await timeline(
        "ListLatestTweetsTimeline",
        { listId, ...paging(page) },
        signal,
        ["list"],
        [["tweets_timeline", "timeline", "instructions"]],
      );
      return found && withRepliedTo(tweetPage(found, page), signal);
    },

    async communityPosts(communityId, page, signal) {
      const found = await timeline(
        "CommunityTweetsTimeline",
        {
          communityId,
          ...paging(page),
          displayLocation: "Community",
          rankingMode: "Recency",
          withCommunity: true,
        },
        signal,
        ["communityResults", "result"],
        [["ranked_community_timeline", "timeline", "instructions"]],
      );
      return found && withRepliedTo(tweetPage(found, page), signal);
    },

    async searchUsers(query, page, signal) {
      return userPage(await search(query, "People", page, signal), page);
    },

    followers: (userId, page, signal) => connections("Followers", userId, page, signal),
    following: (userId, page, signal) => connections("Following", userId, page, signal),

    async retweetedBy(tweetId, page, signal) {
      const found = await timeline(
        "Retweeters",
        { tweetId, ...paging(page), includePromotedContent: false },
        signal,
        ["retweeters_timeline"],
        [["timeline", "instructions"]],
      );
      return found && emptyMeansUnknownTweet(tweetId, userPage(found, page), page, signal);
    },

    listMembers: (listId, page, signal) =>
      listPeople("ListMembers", "members_timeline", listId, page, signal),
    listFollowers: (listId, page, signal) =>
      listPeople("ListSubscribers", "subscribers_timeline", listId, page, signal),

    async uploadMedia(session: CallerSession, file: MediaFile, signal: AbortSignal): Promise<UploadedMedia> {
      const init = obj(
        await client.upload(
          {
            command: "INIT",
            total_bytes: String(file.bytes.byteLength),
            media_type: file.type,
            media_category: file.type === "image/gif" ? "tweet_gif" : "tweet_image",
          },
          undefined,
          signal,
          session,
        ),
      );
      const mediaId = str(init?.media_id_string);
      if (!mediaId || !/^\d+$/.test(mediaId))
        throw new UpstreamError(
          `the ${PROVIDER} answered the upload's INIT without a media id`,
          "upstream_invalid",
        );
      const form = new FormData();
      form.set("media", new Blob([new Uint8Array(file.bytes)], { type: file.type }), "blob");
      await client.upload(
        { command: "APPEND", media_id: mediaId, segment_index: "0" },
        form,
        signal,
        session,
      );
      const done = obj(
        await client.upload({ command: "FINALIZE", media_id: mediaId }, undefined, signal, session),
      );
      if (!done || (str(done.media_id_string) ?? mediaId) !== mediaId)
        throw new UpstreamError(
          `the ${PROVIDER} answered the upload's FINALIZE with something unexpected`,
          "upstream_invalid",
        );
      const image = obj(done.image);
      const expires = done.expires_after_secs ?? init?.expires_after_secs;
      return {
        mediaId,
        mediaKey: str(done.media_key) ?? null,
        size: typeof done.size === "number" ? done.size : file.bytes.byteLength,
        expiresAfterSecs: typeof expires === "number" ? expires : null,
        image: image
          ? {
              type: str(image.image_type) ?? file.type,
              width: num(image.w) || file.width,
              height: num(image.h) || file.height,
            }
          : null,
      };
    },
  };
  return provider;
}
