/**
 * The synthetic corpus: the same records for a seed, and an archive of ~2k of its tweets that answers
 * every endpoint with non-empty pages, paged to their ends without repeats.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SocialTweet } from "../../../../../src/merchants/social/model.ts";
import type { SocialProvider, TweetPage, UserPage } from "../../../../../src/merchants/social/provider.ts";
import { corpusSessionToken } from "../../../../../src/merchants/social/providers/archive/corpus.ts";
import {
  type ArchiveRecord,
  generateCorpus,
} from "../../../../../src/merchants/social/providers/archive/index.ts";
import { DATABASE_KINDS } from "../../../../helpers/db.ts";
import { allPages, tinyPng } from "../../contract.ts";
import { type ArchiveSubject, archiveWith } from "./helpers.ts";

const signal = () => AbortSignal.timeout(20_000);
const SEED = 402;
const TWEETS = 2000;

describe("generateCorpus", () => {
  it("gives the same records for a seed, other records for another", () => {
    const a = JSON.stringify([...generateCorpus({ tweets: 300, seed: SEED })]);
    expect(JSON.stringify([...generateCorpus({ tweets: 300, seed: SEED })])).toBe(a);
    expect(JSON.stringify([...generateCorpus({ tweets: 300, seed: SEED + 1 })])).not.toBe(a);
  });

  it("writes entities whose offsets point at their text, and replies into existing conversations", () => {
    const records = [...generateCorpus({ tweets: 500, seed: SEED })];
    const tweets = records.filter((r): r is Extract<ArchiveRecord, { kind: "tweet" }> => r.kind === "tweet");
    const ids = new Set(tweets.map((t) => t.id));
    expect(ids.size).toBe(500);
    for (const t of tweets) {
      for (const h of t.entities.hashtags) expect(t.text.slice(h.start, h.end)).toBe(`#${h.tag}`);
      for (const m of t.entities.mentions) expect(t.text.slice(m.start, m.end)).toBe(`@${m.username}`);
      for (const u of t.entities.urls) expect(t.text.slice(u.start, u.end)).toBe(u.url);
      for (const r of t.referencedTweets) expect(ids.has(r.id)).toBe(true);
    }
    const usernames = records.flatMap((r) => (r.kind === "user" ? [r.username.toLowerCase()] : []));
    expect(new Set(usernames).size).toBe(usernames.length);
  });
});

for (const kind of DATABASE_KINDS) {
  describe(`an archive of a ${TWEETS}-tweet corpus (${kind})`, () => {
    let subject: ArchiveSubject;
    let p: SocialProvider;
    const records = [...generateCorpus({ tweets: TWEETS, seed: SEED })];
    const of = <K extends ArchiveRecord["kind"]>(k: K) =>
      records.filter((r): r is Extract<ArchiveRecord, { kind: K }> => r.kind === k);
    const tweets = of("tweet");
    const users = of("user");
    const list = of("list")[0];
    const community = of("community")[0];
    const quoted = tweets.find((t) => t.referencedTweets[0]?.type === "quoted")?.referencedTweets[0]?.id;
    const replied = tweets.find((t) => t.referencedTweets[0]?.type === "replied_to")?.referencedTweets[0]?.id;
    const reposted = of("retweet")[0]?.tweetId;
    const articleTweet = of("article")[0]?.tweetId;

    beforeAll(async () => {
      subject = await archiveWith(kind, records);
      p = subject.provider;
    }, 120_000);
    afterAll(() => subject?.close());

    /** Every page, checked: no item twice, tweets newest first. */
    async function everything<P extends TweetPage | UserPage>(
      call: (page: { size: number; cursor?: string }) => Promise<P | null>,
      size = 7,
    ) {
      const pages = await allPages(call, size);
      const items = pages.flatMap((page): { id: string; createdAt?: string }[] =>
        "tweets" in page ? page.tweets : page.users,
      );
      expect(items.length).toBeGreaterThan(0);
      expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
      if ("tweets" in (pages[0] as P)) {
        const keys = (items as SocialTweet[]).map((t) => `${t.createdAt}|${t.id.padStart(19, "0")}`);
        expect(keys).toEqual([...keys].sort().reverse());
      }
      return items;
    }

    it("answers the lookups", async () => {
      const first = tweets[0] as SocialTweet;
      expect((await p.tweet(first.id, signal()))?.tweets[0]?.id).toBe(first.id);
      expect(
        (
          await p.tweets(
            tweets.slice(0, 50).map((t) => t.id),
            signal(),
          )
        ).tweets,
      ).toHaveLength(50);
      expect(await p.userByUsername(users[0]?.username ?? "", signal())).toMatchObject({ id: users[0]?.id });
      expect(await p.list(list?.id ?? "", signal())).toMatchObject({ list: { id: list?.id } });
      expect(await p.article(articleTweet ?? "", signal())).toMatchObject({
        article: { tweetId: articleTweet },
      });
    });

    it("pages every tweet endpoint to its end, newest first, without repeats", async () => {
      const mine = await everything((page) => p.userTweets(users[0]?.username ?? "", page, signal()));
      expect(mine.length).toBe(tweets.filter((t) => t.authorId === users[0]?.id).length);
      const paid = await everything((page) => p.searchTweets({ words: ["payments"] }, page, signal()), 20);
      expect(paid.length).toBe(tweets.filter((t) => /\bpayments\b/i.test(t.text)).length);
      await everything((page) => p.searchTweets({ hashtags: ["x402"], minLikes: 1 }, page, signal()));
      await everything((page) =>
        p.searchTweets({ anyWords: ["agent", "wallet"], noneWords: ["the"] }, page, signal()),
      );
      await everything(
        (page) => p.searchTweets({ since: "2026-02-01", until: "2026-03-01" }, page, signal()),
        50,
      );
      await everything((page) => p.mentions({ authToken: corpusSessionToken(SEED) }, page, signal()));
      await everything((page) => p.quoteTweets(quoted ?? "", page, signal()), 1);
      await everything((page) => p.replies(replied ?? "", page, signal()), 1);
      await everything((page) => p.listTweets(list?.id ?? "", page, signal()), 25);
      await everything((page) => p.communityPosts(community?.id ?? "", page, signal()), 5);
    });

    it("pages every user endpoint to its end without repeats", async () => {
      const followers = await everything((page) => p.followers(users[0]?.id ?? "", page, signal()), 10);
      expect(followers.length).toBe(of("follow").filter((f) => f.followedId === users[0]?.id).length);
      await everything((page) => p.following(users[5]?.id ?? "", page, signal()), 2);
      await everything((page) => p.retweetedBy(reposted ?? "", page, signal()), 1);
      await everything((page) => p.listMembers(list?.id ?? "", page, signal()), 3);
      await everything((page) => p.listFollowers(list?.id ?? "", page, signal()), 1);
      const found = await everything((page) => p.searchUsers("builder", page, signal()), 3);
      // A word of the username, name or bio beginning with it ("Builder", "builders").
      const expected = users.filter((u) => /\bbuilder/i.test(`${u.username} ${u.name} ${u.description}`));
      expect(found.length).toBe(expected.length);
    });

    it("uploads as the corpus's session", async () => {
      const up = await p.uploadMedia(
        { authToken: corpusSessionToken(SEED) },
        { bytes: tinyPng(3, 4), type: "image/png", width: 3, height: 4 },
        signal(),
      );
      expect(up).toMatchObject({ mediaKey: `3_${up.mediaId}`, size: 33, image: { width: 3, height: 4 } });
    });
  });
}
