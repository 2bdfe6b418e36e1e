/**
 * The demo's social-data API: its archive filled with a synthetic X (seeded by the week: a resumed week
 * finds the same one), and the inputs the simulated buyers send it, taken from that X so that every call
 * finds what it asks for.
 */
import type { Database } from "../common/db/index.ts";
import {
  type ArchiveRecord,
  corpusSessionToken,
  generateCorpus,
  importArchive,
} from "../merchants/social/providers/archive/index.ts";

/** The demo's synthetic X: thousands of users, tens of thousands of tweets; about 5 s to load on PGlite. */
export const DEMO_SOCIAL = { tweets: 20_000, users: 2_000 };

/** What the buyers ask about, picked from the records as they are loaded. */
interface Landmarks {
  user?: { id: string; username: string };
  quoted?: string;
  repliedTo?: string;
  retweeted?: string;
  list?: string;
  community?: string;
  articleTweet?: string;
  hashtag?: string;
  tweets: string[];
}

/**
 * Loads the demo's X into the archive (records are upserts: loading it again changes nothing) and answers
 * each social endpoint's input by path, the paid proxy's too. The media upload is left out: the simulator
 * sends JSON and query strings, not forms.
 */
export async function loadDemoSocial(
  db: Database,
  seed: number,
): Promise<Record<string, Record<string, unknown>>> {
  const seen: Landmarks = { tweets: [] };
  const corpus = watched(generateCorpus({ ...DEMO_SOCIAL, seed }), seen);
  // A resumed week has its X already: the records are only walked again, for the inputs.
  const { rows } = await db.query<{ n: bigint }>("SELECT count(*) AS n FROM social_archive_tweets");
  if (Number(rows[0]?.n ?? 0) >= DEMO_SOCIAL.tweets) for (const _ of corpus);
  else await importArchive(db, corpus);
  const { user, list, community } = seen;
  const quoted = seen.quoted ?? seen.tweets[0];
  if (!user || !quoted || !list || !community)
    throw new Error("the demo's synthetic X lacks a user, a tweet, a list or a community");
  const tweet = (id: string | undefined) => ({ id: id ?? quoted });
  return {
    "/tweets/by/id": tweet(quoted),
    "/tweets": { ids: seen.tweets.slice(0, 5).join(",") },
    "/users/by/username": { username: user.username },
    "/lists/by/id": { id: list },
    "/articles/by/id": tweet(seen.articleTweet),
    "/tweets/search": seen.hashtag ? { hashtags: seen.hashtag } : { from: user.username },
    "/tweets/mentions": { auth_token: corpusSessionToken(seed) },
    "/tweets/user": { username: user.username },
    "/tweets/quote_tweets": tweet(quoted),
    "/users/followers": { id: user.id },
    "/tweets/replies": tweet(seen.repliedTo),
    "/users/search": { query: user.username },
    "/lists/tweets": { id: list },
    "/users/following": { id: user.id },
    "/tweets/retweeted_by": tweet(seen.retweeted),
    "/lists/members": { id: list },
    "/lists/followers": { id: list },
    "/communities/posts": { id: community },
    // The paid proxy's user lookup (its own host), the username as the path's segment.
    "/pay/:agent_id": { agent_id: user.username },
  };
}

/** The records, unchanged, noting the first of each landmark on the way. */
function* watched(records: Iterable<ArchiveRecord>, seen: Landmarks): Generator<ArchiveRecord> {
  for (const record of records) {
    switch (record.kind) {
      case "user":
        seen.user ??= { id: record.id, username: record.username };
        break;
      case "tweet":
        if (seen.tweets.length < 5) seen.tweets.push(record.id);
        for (const ref of record.referencedTweets) {
          if (ref.type === "quoted") seen.quoted ??= ref.id;
          if (ref.type === "replied_to") seen.repliedTo ??= ref.id;
        }
        seen.hashtag ??= record.entities.hashtags[0]?.tag;
        break;
      case "retweet":
        seen.retweeted ??= record.tweetId;
        break;
      case "list":
        if (record.mode === "public") seen.list ??= record.id;
        break;
      case "community":
        seen.community ??= record.id;
        break;
      case "article":
        seen.articleTweet ??= record.tweetId;
        break;
    }
    yield record;
  }
}
