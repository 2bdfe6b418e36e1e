/**
 * A fake X on 127.0.0.1 serving the world (`../../world.ts`) as X's web API does: the GraphQL queries at
 * `/i/api/graphql/<queryId>/<Operation>?variables=&features=` and the media upload at
 * `/i/media/upload.json`, in X's wire format (`x-wire.ts`). Like X it checks the bearer token, the
 * `auth_token` cookie (401 code 32), `x-csrf-token` against the `ct0` cookie (403 code 353), and the query
 * id of the operation (404); it decodes `variables` and searches with X's search syntax.
 * `script` lets a test answer any request its own way (a 429, garbage, a hang).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SocialTweet, SocialUser } from "../../../../../src/merchants/social/model.ts";
import {
  DEFAULT_QUERY_IDS,
  type Operation,
  WEB_BEARER_TOKEN,
} from "../../../../../src/merchants/social/providers/x-web/operations.ts";
import {
  ALICE,
  ALICE_SESSION,
  COMMUNITY_ID,
  FOLLOWS,
  LIST,
  LIST_FOLLOWERS,
  LIST_MEMBERS,
  RETWEETS,
  TWEETS,
  USERS,
} from "../../world.ts";
import {
  cursorEntry,
  cursorOffset,
  timelinePage,
  tweetEntry,
  userEntry,
  xList,
  xTweet,
  xUser,
} from "./x-wire.ts";

type Json = Record<string, unknown>;

export interface Request {
  operation: string;
  authToken: string;
  variables: Record<string, unknown>;
  /** The feature switches a GraphQL query sent. */
  features?: Record<string, boolean>;
}

export type Scripted = { status: number; headers?: Record<string, string>; body?: string } | "hang";

export interface FakeX {
  url: string;
  /** Every request that passed the checks, in order. */
  requests: Request[];
  /** Answers a request its own way when it returns something. */
  script: ((request: Request) => Scripted | undefined) | undefined;
  /** Usernames X reports suspended (`UserUnavailable`), tweet ids deleted (`TweetTombstone`). */
  suspended: Set<string>;
  deleted: Set<string>;
  close(): Promise<void>;
}

/** The operator's sessions the fake knows: any `auth_token` in `tokens`, plus Alice's own. */
export async function startFakeX(options: { tokens: string[] }): Promise<FakeX> {
  const known = new Map<string, SocialUser>(options.tokens.map((t) => [t, ALICE]));
  known.set(ALICE_SESSION.authToken, ALICE);
  const uploads = new Map<string, { type: string; total: number; bytes?: Uint8Array }>();
  let nextMediaId = 1_900_000_000_000_000_001n;
  const hanging = new Set<ServerResponse>();

  const fake: FakeX = {
    url: "",
    requests: [],
    script: undefined,
    suspended: new Set(),
    deleted: new Set(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json;charset=utf-8", ...headers });
    res.end(body === undefined ? "" : JSON.stringify(body));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.headers.authorization !== `Bearer ${WEB_BEARER_TOKEN}`)
      return send(res, 401, { errors: [{ code: 89, message: "Invalid or expired token." }] });
    const cookies = Object.fromEntries(
      (req.headers.cookie ?? "")
        .split(/;\s*/)
        .map((c) => [c.slice(0, c.indexOf("=")), c.slice(c.indexOf("=") + 1)]),
    );
    if (!cookies.ct0 || req.headers["x-csrf-token"] !== cookies.ct0)
      return send(res, 403, {
        errors: [{ code: 353, message: "This request requires a matching csrf cookie and header." }],
      });
    const viewer = known.get(cookies.auth_token ?? "");
    if (!viewer) return send(res, 401, { errors: [{ code: 32, message: "Could not authenticate you." }] });

    if (url.pathname === "/i/media/upload.json") {
      const request = {
        operation: `upload:${url.searchParams.get("command")}`,
        authToken: cookies.auth_token ?? "",
        variables: {},
      };
      if (answerScripted(request, res)) return;
      fake.requests.push(request);
      return upload(req, url, res);
    }

    const match = /^\/i\/api\/graphql\/([\w-]+)\/(\w+)$/.exec(url.pathname);
    const operation = match?.[2] as Operation | undefined;
    if (!match || !operation || DEFAULT_QUERY_IDS[operation] !== match[1])
      return send(res, 404, { errors: [{ message: "Query: Unspecified" }] });
    let variables: Record<string, unknown>;
    let features: Record<string, boolean>;
    try {
      variables = JSON.parse(url.searchParams.get("variables") ?? "");
      features = JSON.parse(url.searchParams.get("features") ?? "");
    } catch {
      return send(res, 400, { errors: [{ code: 214, message: "variables or features are not JSON" }] });
    }
    const request = { operation, authToken: cookies.auth_token ?? "", variables, features };
    if (answerScripted(request, res)) return;
    fake.requests.push(request);
    send(res, 200, answer(operation, variables, viewer), {
      "x-rate-limit-limit": "150",
      "x-rate-limit-remaining": "149",
      "x-rate-limit-reset": String(Math.floor(Date.now() / 1000) + 900),
    });
  }

  function answerScripted(request: Request, res: ServerResponse): boolean {
    const scripted = fake.script?.(request);
    if (!scripted) return false;
    fake.requests.push(request);
    if (scripted === "hang") {
      hanging.add(res);
      return true;
    }
    res.writeHead(scripted.status, { "content-type": "application/json", ...scripted.headers });
    res.end(scripted.body ?? "");
    return true;
  }

  function answer(operation: Operation, v: Record<string, unknown>, viewer: SocialUser): Json {
    switch (operation) {
      case "Viewer":
        return { data: { viewer: { user_results: { result: xUser(viewer) } } } };
      case "UserByScreenName": {
        const name = String(v.screen_name ?? "").toLowerCase();
        const u = USERS.find((x) => x.username === name);
        if (!u) return { data: {} };
        if (fake.suspended.has(name))
          return {
            data: {
              user: {
                result: { __typename: "UserUnavailable", reason: "Suspended", message: "User is suspended" },
              },
            },
          };
        return { data: { user: { result: xUser(u) } } };
      }
      case "TweetResultByRestId":
        return { data: { tweetResult: tweetResult(String(v.tweetId)) } };
      case "TweetResultsByRestIds":
        return {
          data: {
            tweetResult: (Array.isArray(v.tweetIds) ? v.tweetIds : []).map((id) => tweetResult(String(id))),
          },
        };
      case "SearchTimeline": {
        const query = String(v.rawQuery ?? "");
        const instructions =
          v.product === "People"
            ? timelinePage(searchUsers(query), v, userEntry)
            : timelinePage(searchTweets(query), v, tweetEntry);
        return { data: { search_by_raw_query: { search_timeline: { timeline: { instructions } } } } };
      }
      case "UserTweets":
      case "Followers":
      case "Following": {
        const u = USERS.find((x) => x.id === v.userId);
        if (!u) return { data: { user: {} } };
        const instructions =
          operation === "UserTweets"
            ? timelinePage(
                newest(TWEETS.filter((t) => t.authorId === u.id && !t.inReplyToUserId)),
                v,
                tweetEntry,
              )
            : timelinePage(
                operation === "Followers"
                  ? FOLLOWS.filter(([, b]) => b.id === u.id).map(([a]) => a)
                  : FOLLOWS.filter(([a]) => a.id === u.id).map(([, b]) => b),
                v,
                userEntry,
              );
        return {
          data: { user: { result: { __typename: "User", timeline: { timeline: { instructions } } } } },
        };
      }
      case "Retweeters": {
        const users = RETWEETS.filter(([, t]) => t.id === v.tweetId).map(([u]) => u);
        return {
          data: { retweeters_timeline: { timeline: { instructions: timelinePage(users, v, userEntry) } } },
        };
      }
      case "TweetDetail":
        return tweetDetail(String(v.focalTweetId), v);
      case "ListByRestId":
        return v.listId === LIST.id ? { data: { list: xList() } } : { data: {} };
      case "ListLatestTweetsTimeline":
      case "ListMembers":
      case "ListSubscribers": {
        if (v.listId !== LIST.id) return { data: { list: {} } };
        const members = new Set(LIST_MEMBERS.map((u) => u.id));
        if (operation === "ListLatestTweetsTimeline")
          return {
            data: {
              list: {
                tweets_timeline: {
                  timeline: {
                    instructions: timelinePage(
                      newest(TWEETS.filter((t) => members.has(t.authorId))),
                      v,
                      tweetEntry,
                    ),
                  },
                },
              },
            },
          };
        const key = operation === "ListMembers" ? "members_timeline" : "subscribers_timeline";
        const users = operation === "ListMembers" ? LIST_MEMBERS : LIST_FOLLOWERS;
        return {
          data: { list: { [key]: { timeline: { instructions: timelinePage(users, v, userEntry) } } } },
        };
      }
      case "CommunityTweetsTimeline": {
        if (v.communityId !== COMMUNITY_ID)
          return { data: { communityResults: { result: { __typename: "CommunityUnavailable" } } } };
        const posts = newest(TWEETS.filter((t) => t.communityId === COMMUNITY_ID));
        return {
          data: {
            communityResults: {
              result: {
                __typename: "Community",
                ranked_community_timeline: { timeline: { instructions: timelinePage(posts, v, tweetEntry) } },
              },
            },
          },
        };
      }
    }
  }

  function tweetResult(id: string): Json {
    if (fake.deleted.has(id))
      return {
        result: {
          __typename: "TweetTombstone",
          tombstone: { text: { text: "This Post was deleted by the Post author." } },
        },
      };
    const t = TWEETS.find((x) => x.id === id);
    if (!t) return {};
    // A tweet X limits in some way comes wrapped, as X wraps it.
    if (t.communityId)
      return {
        result: {
          __typename: "TweetWithVisibilityResults",
          tweet: xTweet(t),
          limitedActionResults: { limited_actions: [] },
        },
      };
    return { result: xTweet(t) };
  }

  /** The conversation: the tweets above the focal one, it, then its replies, each in a thread module. */
  function tweetDetail(focalId: string, v: Record<string, unknown>): Json {
    const focal = TWEETS.find((t) => t.id === focalId);
    if (!focal || fake.deleted.has(focalId))
      return {
        errors: [
          {
            message: "_Missing: No status found with that ID.",
            locations: [{ line: 2, column: 3 }],
            path: ["threaded_conversation_with_injections_v2"],
            extensions: { name: "GenericError", source: "Server", code: 144, kind: "NonFatal" },
            code: 144,
            kind: "NonFatal",
            name: "GenericError",
            source: "Server",
          },
        ],
        data: {},
      };
    const ancestors: SocialTweet[] = [];
    for (let t = focal; ; ) {
      const parentId = t.referencedTweets.find((r) => r.type === "replied_to")?.id;
      const parent = parentId ? TWEETS.find((x) => x.id === parentId) : undefined;
      if (!parent) break;
      ancestors.unshift(parent);
      t = parent;
    }
    const replies = newest(
      TWEETS.filter((t) => t.referencedTweets.some((r) => r.type === "replied_to" && r.id === focalId)),
    );
    const offset = cursorOffset(v.cursor);
    const count = 20;
    const page = replies.slice(offset, offset + count);
    const entries: Json[] = [];
    if (v.cursor === undefined)
      for (const t of [...ancestors, focal]) entries.push(tweetEntry(t, String(BigInt(t.id))));
    for (const r of page) {
      entries.push({
        entryId: `conversationthread-${r.id}`,
        sortIndex: String(BigInt(r.id)),
        content: {
          entryType: "TimelineTimelineModule",
          __typename: "TimelineTimelineModule",
          items: [
            {
              entryId: `conversationthread-${r.id}-tweet-${r.id}`,
              item: { itemContent: (tweetEntry(r, "0").content as Json).itemContent, clientEventInfo: {} },
            },
          ],
          displayType: "VerticalConversation",
        },
      });
    }
    if (offset + page.length < replies.length) {
      const c = cursorEntry(offset + page.length, "bottom", "1");
      entries.push({
        entryId: c.entryId,
        sortIndex: "1",
        content: {
          entryType: "TimelineTimelineItem",
          __typename: "TimelineTimelineItem",
          itemContent: {
            itemType: "TimelineTimelineCursor",
            __typename: "TimelineTimelineCursor",
            ...(c.content as Json),
            entryType: undefined,
          },
        },
      });
    }
    return {
      data: {
        threaded_conversation_with_injections_v2: {
          instructions: [
            { type: "TimelineClearCache" },
            { type: "TimelineAddEntries", entries },
            { type: "TimelineTerminateTimeline", direction: "Top" },
          ],
        },
      },
    };
  }

  async function upload(req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> {
    const command = url.searchParams.get("command");
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (command === "INIT") {
      const total = Number(url.searchParams.get("total_bytes"));
      const type = url.searchParams.get("media_type") ?? "";
      if (!total || !type.startsWith("image/"))
        return send(res, 400, { errors: [{ code: 38, message: "media_type parameter is missing." }] });
      const id = String(nextMediaId++);
      uploads.set(id, { type, total });
      // X writes media_id as a number too (past 2^53: JSON.parse loses digits) and media_id_string exactly.
      res.writeHead(202, { "content-type": "application/json" });
      res.end(
        `{"media_id":${id},"media_id_string":"${id}","expires_after_secs":86400,"media_key":"3_${id}"}`,
      );
      return;
    }
    const id = url.searchParams.get("media_id") ?? "";
    const stored = uploads.get(id);
    if (!stored) return send(res, 400, { errors: [{ code: 324, message: "Invalid media id." }] });
    if (command === "APPEND") {
      const form = await new Response(Buffer.concat(chunks), {
        headers: { "content-type": req.headers["content-type"] ?? "" },
      }).formData();
      const media = form.get("media");
      if (!(media instanceof Blob) || url.searchParams.get("segment_index") !== "0")
        return send(res, 400, { errors: [{ code: 38, message: "media parameter is missing." }] });
      stored.bytes = new Uint8Array(await media.arrayBuffer());
      res.writeHead(204);
      res.end();
      return;
    }
    if (command === "FINALIZE") {
      const bytes = stored.bytes;
      if (!bytes || bytes.byteLength !== stored.total)
        return send(res, 400, {
          errors: [{ code: 324, message: "Segments do not add up to provided total file size." }],
        });
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      res.writeHead(201, { "content-type": "application/json" });
      res.end(
        `{"media_id":${id},"media_id_string":"${id}","media_key":"3_${id}","size":${bytes.byteLength},"expires_after_secs":86400,"image":{"image_type":"${stored.type}","w":${view.getUint32(16)},"h":${view.getUint32(20)}}}`,
      );
      return;
    }
    send(res, 400, { errors: [{ code: 38, message: "command parameter is missing." }] });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      send(res, 500, { errors: [{ message: String(error) }] });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

const newest = (tweets: readonly SocialTweet[]) =>
  [...tweets].sort((a, b) => b.createdAt.localeCompare(a.createdAt));

const words = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}_']+/u)
      .filter(Boolean),
  );
const userNamed = (name: string) => USERS.find((u) => u.username === name.toLowerCase());

/** X's search syntax over the world's tweets, newest first (what `product: "Latest"` answers). */
export function searchTweets(query: string): SocialTweet[] {
  const tokens = query.match(/-?"[^"]*"|\([^)]*\)|\S+/g) ?? [];
  const tests = tokens.map((token): ((t: SocialTweet) => boolean) => {
    const negate = token.startsWith("-");
    const body = negate ? token.slice(1) : token;
    const test = termTest(body);
    return negate ? (t) => !test(t) : test;
  });
  return newest(TWEETS.filter((t) => tests.every((test) => test(t))));
}

function termTest(term: string): (t: SocialTweet) => boolean {
  if (term.startsWith("(")) {
    const any = term
      .slice(1, -1)
      .split(/\s+OR\s+/)
      .map(termTest);
    return (t) => any.some((test) => test(t));
  }
  if (term.startsWith('"')) {
    const phrase = term.slice(1, -1).toLowerCase();
    return (t) => t.text.toLowerCase().includes(phrase);
  }
  const [op, value = ""] = term.includes(":")
    ? [term.slice(0, term.indexOf(":")), term.slice(term.indexOf(":") + 1)]
    : [term];
  switch (op) {
    case "from":
      return (t) => t.authorId === userNamed(value)?.id;
    case "to":
      return (t) => t.inReplyToUserId !== null && t.inReplyToUserId === userNamed(value)?.id;
    case "min_replies":
      return (t) => t.metrics.replyCount >= Number(value);
    case "min_faves":
      return (t) => t.metrics.likeCount >= Number(value);
    case "min_retweets":
      return (t) => t.metrics.retweetCount >= Number(value);
    case "since":
      return (t) => t.createdAt >= `${value}T00:00:00.000Z`;
    case "until":
      return (t) => t.createdAt < `${value}T00:00:00.000Z`;
    case "quoted_tweet_id":
      return (t) => t.referencedTweets.some((r) => r.type === "quoted" && r.id === value);
  }
  if (term.startsWith("#"))
    return (t) => t.entities.hashtags.some((h) => h.tag.toLowerCase() === term.slice(1).toLowerCase());
  if (term.startsWith("@"))
    return (t) => t.entities.mentions.some((m) => m.username.toLowerCase() === term.slice(1).toLowerCase());
  return (t) => words(t.text).has(term.toLowerCase());
}

/** People search: the users whose username, name or bio holds the words, the username's match first. */
function searchUsers(query: string): SocialUser[] {
  const q = query.toLowerCase().trim();
  const hits = USERS.filter((u) =>
    [u.username, u.name, u.description].some((s) => s.toLowerCase().includes(q)),
  );
  return hits.sort((a, b) => Number(b.username === q) - Number(a.username === q));
}
