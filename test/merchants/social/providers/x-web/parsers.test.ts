/** The x-web parsers on hand-written answers in X's documented shapes (`fixtures/`). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../../../../src/merchants/social/providers/x-web/json.ts";
import { parseArticle } from "../../../../../src/merchants/social/providers/x-web/parse-article.ts";
import { parseList } from "../../../../../src/merchants/social/providers/x-web/parse-list.ts";
import { parseTimeline } from "../../../../../src/merchants/social/providers/x-web/parse-timeline.ts";
import {
  Collected,
  parseTweet,
  unwrapTweet,
} from "../../../../../src/merchants/social/providers/x-web/parse-tweet.ts";
import { parseUser } from "../../../../../src/merchants/social/providers/x-web/parse-user.ts";

// biome-ignore lint/suspicious/noExplicitAny: fixtures are X's untyped JSON
const fixture = (name: string): any =>
  JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8"));
const cp = (text: string, start: number, end: number) => [...text].slice(start, end).join("");

describe("x-web parsers", () => {
  it("reads a long post's whole note text, its entities in code points, and its author's newer shape", () => {
    const into = new Collected();
    const t = parseTweet(fixture("tweet-note.json").data.tweetResult.result, into);
    expect(t?.id).toBe("1859123456789012345");
    expect([...(t?.text ?? "")].length).toBeGreaterThan(280);
    expect(t?.text.endsWith("two hundred and eighty characters.")).toBe(true);
    expect(t?.createdAt).toBe("2024-11-21T08:30:00.000Z");
    expect(t?.metrics).toEqual({
      retweetCount: 256,
      replyCount: 97,
      likeCount: 2048,
      quoteCount: 12,
      bookmarkCount: 310,
      impressionCount: 182345,
    });
    const text = t?.text ?? "";
    const tag = t?.entities.hashtags[0];
    expect(tag && cp(text, tag.start, tag.end)).toBe("#micropayments");
    const mention = t?.entities.mentions[0];
    expect(mention).toMatchObject({ username: "alice", id: "1790000000000000001" });
    expect(mention && cp(text, mention.start, mention.end)).toBe("@alice");
    const url = t?.entities.urls[0];
    expect(url).toMatchObject({ expandedUrl: "https://example.com/x402", displayUrl: "example.com/x402" });
    expect(url && cp(text, url.start, url.end)).toBe("https://t.co/Xy98Zw76Vu");

    const author = into.users.get("1500000000000000001");
    expect(author).toMatchObject({
      username: "longposter",
      name: "Long Poster 🦜",
      createdAt: "2022-03-06T09:15:00.000Z",
      location: "Lisbon, Portugal",
      url: "https://example.com/essays",
      profileImageUrl: "https://pbs.twimg.com/profile_images/1500000000000000001/abc_normal.jpg",
      verified: true,
      verifiedType: "blue",
      pinnedTweetId: "1858000000000000007",
      metrics: {
        followersCount: 48210,
        followingCount: 512,
        tweetCount: 9876,
        listedCount: 301,
        likeCount: 5123,
      },
    });
  });

  it("unwraps a tweet with visibility results, and reads its quote, escaped text and cashtag", () => {
    const into = new Collected();
    const result = fixture("tweet-quote-visibility.json").data.tweetResult.result;
    const t = parseTweet(result, into);
    expect(t).toMatchObject({
      id: "1860000000000000123",
      text: "Fees & limits <3 $BTC, read this",
      authorId: "1600000000000000002",
      referencedTweets: [{ type: "quoted", id: "1859123456789012345" }],
      possiblySensitive: true,
      metrics: { impressionCount: 0 },
    });
    const tag = t?.entities.cashtags?.[0];
    expect(tag && cp(t?.text ?? "", tag.start, tag.end)).toBe("$BTC");
    expect(into.tweets.get("1859123456789012345")?.text).toBe("The original");
    expect([...into.users.keys()]).toEqual(["1600000000000000002", "1500000000000000001"]);
    expect(into.users.get("1600000000000000002")).toMatchObject({ verified: true, verifiedType: "business" });
    expect(into.includes([t as never]).tweets.map((x) => x.id)).toEqual(["1859123456789012345"]);
  });

  it("reads a reply's photo and video into media, with alt text, size and duration", () => {
    const into = new Collected();
    const t = parseTweet(fixture("tweet-media.json").data.tweetResult.result, into);
    expect(t).toMatchObject({
      mediaKeys: ["3_1861000000000000400", "7_1861000000000000401"],
      inReplyToUserId: "1600000000000000002",
      conversationId: "1860999999999999999",
      referencedTweets: [{ type: "replied_to", id: "1860999999999999999" }],
      metrics: { impressionCount: 77, bookmarkCount: 1 },
    });
    expect(t?.text).toBe("@quoter look at these https://t.co/Zz9Yy8Xx7W");
    expect([...into.media.values()]).toEqual([
      {
        mediaKey: "3_1861000000000000400",
        type: "photo",
        url: "https://pbs.twimg.com/media/GdAbCdEfGhIjKlM.jpg",
        width: 2048,
        height: 1536,
        altText: "A sunset over the bay",
      },
      {
        mediaKey: "7_1861000000000000401",
        type: "video",
        url: "https://pbs.twimg.com/ext_tw_video_thumb/1861000000000000401/pu/img/aBcD.jpg",
        width: 1280,
        height: 720,
        altText: null,
        durationMs: 15015,
      },
    ]);
  });

  it("says null for tombstones, unavailable users and what is not a tweet", () => {
    expect(unwrapTweet({ __typename: "TweetTombstone", tombstone: {} })).toBeUndefined();
    expect(parseTweet({ __typename: "TweetUnavailable", reason: "Protected" }, new Collected())).toBeNull();
    expect(parseTweet(undefined, new Collected())).toBeNull();
    expect(parseUser({ __typename: "UserUnavailable", reason: "Suspended" })).toBeNull();
    expect(parseUser({ __typename: "User", rest_id: "12", legacy: {} })).toBeNull();
  });

  it("reads a profile timeline: no pinned or promoted entries, no tombstones, modules, the bottom cursor", () => {
    const timeline = parseTimeline(
      fixture("user-tweets-timeline.json").data.user.result.timeline_v2.timeline.instructions,
    );
    expect(timeline.bottom).toBe("DAABCgABGbKf0q0__-sKAAIZsp7V8xaAAAgAAwAAAAIAAA");
    const into = new Collected();
    const ids = timeline.items.map((i) => parseTweet(i.result, into)?.id ?? null);
    expect(ids).toEqual(["1861200000000000002", null, "1861100000000000009"]);
  });

  it("reads an article with its Draft.js body (entityMap as X's list of pairs)", () => {
    const result = fixture("article.json").data.tweetResult.result;
    const article = parseArticle(
      result,
      "1862000000000000789",
      "1500000000000000001",
      "2024-11-26T05:46:40.000Z",
    );
    expect(article).toMatchObject({
      id: "1862000000000000700",
      title: "How agents pay",
      previewText: "Every request carries its own payment.",
      coverImageUrl: "https://pbs.twimg.com/media/GeArticleCover.jpg",
      publishedAt: "2024-11-26T05:46:40.000Z",
    });
    expect(article?.content).toEqual({
      format: "draftjs",
      state: {
        blocks: [
          { key: "1a2b3", type: "header-two", text: "Why", inlineStyleRanges: [], entityRanges: [] },
          {
            key: "4c5d6",
            type: "unstyled",
            text: "See the spec for details.",
            inlineStyleRanges: [{ offset: 0, length: 3, style: "Bold" }],
            entityRanges: [{ offset: 4, length: 8, key: 0 }],
          },
        ],
        entityMap: { "0": { type: "LINK", mutability: "MUTABLE", data: { url: "https://x402.org/spec" } } },
      },
    });
    expect(parseTweet(result, new Collected())?.articleId).toBe("1862000000000000700");
  });

  it("reads a list, and says null for a private one", () => {
    const list = {
      id_str: "1585430245762441216",
      name: "Builders",
      description: "",
      mode: "Public",
      member_count: 12,
      subscriber_count: 3,
      created_at: 1666939200000,
      custom_banner_media: { media_info: { original_img_url: "https://pbs.twimg.com/media/banner.jpg" } },
      default_banner_media: { media_info: { original_img_url: "https://pbs.twimg.com/media/default.png" } },
      user_results: {
        result: {
          __typename: "User",
          rest_id: "1500000000000000001",
          legacy: { screen_name: "owner", name: "O" },
        },
      },
    };
    expect(parseList(list)).toMatchObject({
      list: {
        id: "1585430245762441216",
        memberCount: 12,
        followerCount: 3,
        createdAt: "2022-10-28T06:40:00.000Z",
        bannerUrl: "https://pbs.twimg.com/media/banner.jpg",
        ownerId: "1500000000000000001",
      },
      owner: { username: "owner" },
    });
    expect(parseList({ ...list, mode: "Private" })).toBeNull();
  });

  it("reads X's legacy times with any offset", () => {
    expect(isoTime("Wed Oct 10 20:19:24 +0000 2018")).toBe("2018-10-10T20:19:24.000Z");
    expect(isoTime("Wed Oct 10 22:19:24 +0200 2018")).toBe("2018-10-10T20:19:24.000Z");
  });
});
