/**
 * The social API's worst cases for `bench/worst-case.ts`: a synthetic X (`generateCorpus`) imported into
 * the serve process's own archive before it starts, and per endpoint the subject that has the most of what
 * the endpoint reads (the busiest author, the most followed user, the most replied tweet, the largest
 * list), so that each page is as full and as joined as the archive can make it.
 */
import { openDatabase } from "../src/common/db/index.ts";
import { dataLayout } from "../src/config/layout.ts";
import { MAX_TWEET_IDS } from "../src/merchants/social/lookups.ts";
import { corpusSessionToken, generateCorpus } from "../src/merchants/social/providers/archive/corpus.ts";
import { importArchive } from "../src/merchants/social/providers/archive/import.ts";

const SEED = 69;
const TWEETS = 50_000;

/** The query of each social endpoint's worst case, by path. */
export type SocialQueries = Record<string, Record<string, string>>;

/** Imports the corpus into `dataDir`'s merchant database and picks the subjects. */
export async function seedArchive(dataDir: string): Promise<SocialQueries> {
  const db = await openDatabase({ pgliteDir: dataLayout(dataDir).pglite.merchants, databaseUrl: null });
  try {
    await importArchive(db, generateCorpus({ tweets: TWEETS, seed: SEED }), { batchSize: 5000 });
    await db.exec("ANALYZE");
    const one = async (sql: string): Promise<string> => {
      const row = (await db.query<{ v: string }>(sql)).rows[0];
      if (!row) throw new Error(`the corpus has nothing for: ${sql}`);
      return row.v;
    };
    const busiest = await one(
      "SELECT u.username AS v FROM social_archive_users u JOIN social_archive_tweets t ON t.author_id = u.id GROUP BY u.id ORDER BY count(*) DESC LIMIT 1",
    );
    const followed = await one(
      "SELECT followed_id::text AS v FROM social_archive_follows GROUP BY followed_id ORDER BY count(*) DESC LIMIT 1",
    );
    const follower = await one(
      "SELECT follower_id::text AS v FROM social_archive_follows GROUP BY follower_id ORDER BY count(*) DESC LIMIT 1",
    );
    const replied = await one(
      "SELECT replied_to_id::text AS v FROM social_archive_tweets WHERE replied_to_id IS NOT NULL GROUP BY replied_to_id ORDER BY count(*) DESC LIMIT 1",
    );
    const quoted = await one(
      "SELECT quoted_id::text AS v FROM social_archive_tweets WHERE quoted_id IS NOT NULL GROUP BY quoted_id ORDER BY count(*) DESC LIMIT 1",
    );
    const retweeted = await one(
      "SELECT tweet_id::text AS v FROM social_archive_retweets GROUP BY tweet_id ORDER BY count(*) DESC LIMIT 1",
    );
    const list = await one(
      "SELECT list_id::text AS v FROM social_archive_list_members GROUP BY list_id ORDER BY count(*) DESC LIMIT 1",
    );
    const community = await one(
      "SELECT community_id::text AS v FROM social_archive_tweets WHERE community_id IS NOT NULL GROUP BY community_id ORDER BY count(*) DESC LIMIT 1",
    );
    const article = await one("SELECT tweet_id::text AS v FROM social_archive_articles LIMIT 1");
    const ids = (
      await db.query<{ v: string }>(
        `SELECT id::text AS v FROM social_archive_tweets ORDER BY reply_count DESC LIMIT ${MAX_TWEET_IDS}`,
      )
    ).rows.map((r) => r.v);
    return {
      "/tweets/by/id": { id: replied },
      "/lists/by/id": { id: list },
      "/users/by/username": { username: busiest },
      "/tweets/search": { words: "the" },
      "/tweets/mentions": { auth_token: corpusSessionToken(SEED) },
      "/tweets/user": { username: busiest },
      "/tweets/quote_tweets": { id: quoted },
      "/users/followers": { id: followed },
      "/tweets/replies": { id: replied },
      "/users/search": { query: "a" },
      "/lists/tweets": { id: list },
      "/users/following": { id: follower },
      "/tweets/retweeted_by": { id: retweeted },
      "/tweets": { ids: ids.join(",") },
      "/lists/members": { id: list },
      "/articles/by/id": { id: article },
      "/lists/followers": { id: list },
      "/communities/posts": { id: community },
    };
  } finally {
    await db.close();
  }
}
