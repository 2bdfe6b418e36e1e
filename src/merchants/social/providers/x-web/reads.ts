/**
 * The GraphQL reads the provider's methods are made of, each one operation through the client with its
 * answer checked: what is missing is `null` (not found) or an error (`failures.ts`), what is there parsed.
 */
import type { Includes, SocialTweet, SocialUser } from "../../model.ts";
import type {
  CallerSession,
  ListLookup,
  PageRequest,
  TweetLookup,
  TweetPage,
  UserPage,
} from "../../provider.ts";
import { invalidSession, type XWebClient } from "./client.ts";
import { absent, noTimeline } from "./failures.ts";
import { at, obj } from "./json.ts";
import { parseList } from "./parse-list.ts";
import { parseLookup } from "./parse-lookup.ts";
import { parseTimeline, type Timeline } from "./parse-timeline.ts";
import { Collected, unwrapTweet } from "./parse-tweet.ts";
import { parseUser } from "./parse-user.ts";
import { searchVariables, type TimelineQuery, TWEET_VARIABLES } from "./queries.ts";
import { mergeIncludes, missingRepliedTo } from "./replied-to.ts";

export async function tweetResult(
  client: XWebClient,
  id: string,
  signal: AbortSignal,
): Promise<Record<string, unknown> | null> {
  const answer = await client.graphql("TweetResultByRestId", { tweetId: id, ...TWEET_VARIABLES }, signal);
  const result = at(answer.data, "tweetResult", "result");
  if (result === undefined) return absent(answer, "TweetResultByRestId");
  return unwrapTweet(result) ?? null;
}

export async function lookup(
  client: XWebClient,
  ids: readonly string[],
  signal: AbortSignal,
): Promise<TweetLookup> {
  if (ids.length === 0) return { tweets: [], includes: new Collected().includes() };
  const answer = await client.graphql(
    "TweetResultsByRestIds",
    { tweetIds: [...ids], ...TWEET_VARIABLES },
    signal,
  );
  const results = at(answer.data, "tweetResult");
  if (!Array.isArray(results)) {
    absent(answer, "TweetResultsByRestIds");
    if (answer.errors.length === 0 && Object.keys(answer.data).length > 0)
      throw noTimeline("TweetResultsByRestIds");
  }
  return parseLookup(results, ids);
}

export async function userByUsername(
  client: XWebClient,
  username: string,
  signal: AbortSignal,
): Promise<SocialUser | null> {
  const answer = await client.graphql(
    "UserByScreenName",
    { screen_name: username, withSafetyModeUserFields: true },
    signal,
  );
  const result = at(answer.data, "user", "result");
  if (result === undefined) return absent(answer, "UserByScreenName");
  return parseUser(result);
}

export async function listById(
  client: XWebClient,
  id: string,
  signal: AbortSignal,
): Promise<ListLookup | null> {
  const answer = await client.graphql("ListByRestId", { listId: id }, signal);
  const list = obj(at(answer.data, "list"));
  if (!list || Object.keys(list).length === 0) return absent(answer, "ListByRestId");
  return parseList(list);
}

/** Whose `session` is (`Viewer`): X not knowing it is the caller's 401 `invalid_session`. */
export async function viewer(
  client: XWebClient,
  session: CallerSession,
  signal: AbortSignal,
): Promise<SocialUser> {
  const answer = await client.graphql("Viewer", { withCommunitiesMemberships: false }, signal, session);
  const me = parseUser(at(answer.data, "viewer", "user_results", "result"));
  if (!me) {
    if (answer.errors.length === 0 && !obj(answer.data.viewer)) throw invalidSession();
    absent(answer, "Viewer");
    throw invalidSession();
  }
  return me;
}

export async function search(
  client: XWebClient,
  rawQuery: string,
  product: "Latest" | "People",
  page: PageRequest,
  signal: AbortSignal,
  session?: CallerSession,
): Promise<Timeline> {
  const answer = await client.graphql(
    "SearchTimeline",
    searchVariables(rawQuery, product, page),
    signal,
    session,
  );
  const instructions = at(answer.data, "search_by_raw_query", "search_timeline", "timeline", "instructions");
  if (!Array.isArray(instructions)) {
    absent(answer, "SearchTimeline");
    throw noTimeline("SearchTimeline");
  }
  return parseTimeline(instructions);
}

/** A timeline under `data`, or null when its subject is not there. */
export async function timeline(
  client: XWebClient,
  query: TimelineQuery,
  signal: AbortSignal,
): Promise<Timeline | null> {
  const { operation, variables, subject, paths } = query;
  const answer = await client.graphql(operation, variables, signal);
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

/** An empty first page of something about a tweet: null when the tweet is not there. */
export async function emptyMeansUnknownTweet<P extends TweetPage | UserPage>(
  client: XWebClient,
  tweetId: string,
  result: P,
  page: PageRequest,
  signal: AbortSignal,
): Promise<P | null> {
  const empty = "tweets" in result ? result.tweets.length === 0 : result.users.length === 0;
  if (!empty || page.cursor !== undefined) return result;
  return (await tweetResult(client, tweetId, signal)) ? result : null;
}

/**
 * The replied-to tweets the items name and X did not bring (`replied-to.ts`), looked up in one
 * `TweetResultsByRestIds` per 50, with their authors and media, into `includes`. Best effort: the page
 * stands without them if that lookup fails.
 */
export async function withRepliedTo<P extends { tweets: SocialTweet[]; includes: Includes }>(
  client: XWebClient,
  found: P,
  signal: AbortSignal,
): Promise<P> {
  const missing = missingRepliedTo(found);
  try {
    for (let i = 0; i < missing.length; i += 50) {
      const extra = await lookup(client, missing.slice(i, i + 50), signal);
      mergeIncludes(found.includes, {
        ...extra.includes,
        tweets: [...extra.tweets, ...extra.includes.tweets],
      });
    }
  } catch (error) {
    if (signal.aborted) throw error;
  }
  return found;
}
