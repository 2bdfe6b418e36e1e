/**
 * What the provider asks X's timelines: each method's GraphQL operation and variables (their order is the
 * order on the wire), where the subject lies under `data`, and where its instructions lie under the subject.
 */
import type { PageRequest } from "../../provider.ts";
import type { Operation } from "./operations.ts";

export interface TimelineQuery {
  operation: Operation;
  variables: Record<string, unknown>;
  /** The path under `data` to the timeline's subject (a user, a list, a tweet's conversation). */
  subject: string[];
  /** The paths under the subject to the instructions, the first that holds them taken. */
  paths: string[][];
}

export const TWEET_VARIABLES = { withCommunity: true, includePromotedContent: false, withVoice: true };

export const paging = (page: PageRequest) => ({
  count: page.size,
  ...(page.cursor !== undefined && { cursor: page.cursor }),
});

export const searchVariables = (rawQuery: string, product: "Latest" | "People", page: PageRequest) => ({
  rawQuery,
  ...paging(page),
  querySource: "typed_query",
  product,
});

export const userTweetsQuery = (userId: string, page: PageRequest): TimelineQuery => ({
  operation: "UserTweets",
  variables: {
    userId,
    ...paging(page),
    includePromotedContent: false,
    withQuickPromoteEligibilityTweetFields: false,
    withVoice: true,
  },
  subject: ["user", "result"],
  paths: [
    ["timeline_v2", "timeline", "instructions"],
    ["timeline", "timeline", "instructions"],
  ],
});

/** A tweet's conversation (`TweetDetail`), the newest replies first. */
export const conversationQuery = (tweetId: string, page: PageRequest): TimelineQuery => ({
  operation: "TweetDetail",
  variables: {
    focalTweetId: tweetId,
    ...(page.cursor !== undefined && { cursor: page.cursor }),
    referrer: "tweet",
    with_rux_injections: false,
    rankingMode: "Recency",
    ...TWEET_VARIABLES,
    withQuickPromoteEligibilityTweetFields: false,
    withBirdwatchNotes: true,
  },
  subject: ["threaded_conversation_with_injections_v2"],
  paths: [["instructions"]],
});

export const listTweetsQuery = (listId: string, page: PageRequest): TimelineQuery => ({
  operation: "ListLatestTweetsTimeline",
  variables: { listId, ...paging(page) },
  subject: ["list"],
  paths: [["tweets_timeline", "timeline", "instructions"]],
});

export const communityPostsQuery = (communityId: string, page: PageRequest): TimelineQuery => ({
  operation: "CommunityTweetsTimeline",
  variables: {
    communityId,
    ...paging(page),
    displayLocation: "Community",
    rankingMode: "Recency",
    withCommunity: true,
  },
  subject: ["communityResults", "result"],
  paths: [["ranked_community_timeline", "timeline", "instructions"]],
});

/** A user's followers or followings. */
export const connectionsQuery = (
  operation: "Followers" | "Following",
  userId: string,
  page: PageRequest,
): TimelineQuery => ({
  operation,
  variables: { userId, ...paging(page), includePromotedContent: false },
  subject: ["user", "result"],
  paths: [
    ["timeline", "timeline", "instructions"],
    ["timeline_v2", "timeline", "instructions"],
  ],
});

/** A list's members or followers (X's subscribers). */
export const listPeopleQuery = (
  operation: "ListMembers" | "ListSubscribers",
  listId: string,
  page: PageRequest,
): TimelineQuery => ({
  operation,
  variables: { listId, ...paging(page), withSafetyModeUserFields: true },
  subject: ["list"],
  paths: [
    [operation === "ListMembers" ? "members_timeline" : "subscribers_timeline", "timeline", "instructions"],
  ],
});

export const retweetersQuery = (tweetId: string, page: PageRequest): TimelineQuery => ({
  operation: "Retweeters",
  variables: { tweetId, ...paging(page), includePromotedContent: false },
  subject: ["retweeters_timeline"],
  paths: [["timeline", "instructions"]],
});
