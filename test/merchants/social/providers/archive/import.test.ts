/**
 * The archive's import: bad JSONL lines named by line and field, re-import idempotent (upserts), all or
 * nothing when a record conflicts, and IDs past 2^53 kept exact from the line to the answer.
 */
import { describe, expect, it } from "vitest";
import {
  ArchiveConflictError,
  ArchiveLineError,
  archiveLines,
  archiveProvider,
  importArchive,
  parseArchiveLine,
} from "../../../../../src/merchants/social/providers/archive/index.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../../../helpers/db.ts";
import { worldArchiveRecords } from "../../world.ts";
import { complete } from "./helpers.ts";

const signal = () => AbortSignal.timeout(20_000);
const tweetLine = (fields: Record<string, unknown>) =>
  JSON.stringify({
    kind: "tweet",
    id: "1",
    authorId: "2",
    text: "hello",
    createdAt: "2026-01-01T00:00:00Z",
    ...fields,
  });

describe("parseArchiveLine", () => {
  const refused = (line: string, lineNo = 7) => {
    try {
      parseArchiveLine(line, lineNo);
    } catch (error) {
      expect(error).toBeInstanceOf(ArchiveLineError);
      return (error as ArchiveLineError).message;
    }
    throw new Error("accepted");
  };

  it("names the line and the field at fault", () => {
    expect(refused("{not json", 3)).toMatch(/^line 3: not JSON/);
    expect(refused("[1]")).toBe("line 7: expected a JSON object");
    expect(refused(JSON.stringify({ kind: "like" }))).toMatch(
      /^line 7: field kind: expected one of user, tweet/,
    );
    expect(refused(tweetLine({ metrics: { likeCount: "many" } }))).toMatch(
      /^line 7: field metrics\.likeCount: tweet: /,
    );
    expect(refused(tweetLine({}).replace('"id":"1"', '"id":1790000000000000001'))).toBe(
      "line 7: field id: tweet: expected an id as a decimal string",
    );
    expect(refused(tweetLine({ id: "9223372036854775808" }))).toMatch(
      /^line 7: field id: tweet: an id must be below 2\^63/,
    );
    expect(refused(tweetLine({ createdAt: "yesterday" }))).toMatch(/field createdAt: tweet: expected a date/);
    expect(
      refused(
        JSON.stringify({ kind: "user", id: "5", name: "x", username: "bad name", createdAt: "2020-01-01" }),
      ),
    ).toMatch(/field username/);
    expect(refused(JSON.stringify({ kind: "follow", followerId: "1" }))).toMatch(/field followedId/);
  });

  it("completes a short line with its defaults", () => {
    expect(parseArchiveLine(tweetLine({}), 1)).toMatchObject({
      kind: "tweet",
      conversationId: "1",
      lang: "und",
      createdAt: "2026-01-01T00:00:00.000Z",
      metrics: { likeCount: 0, replyCount: 0 },
      entities: { hashtags: [], mentions: [], urls: [] },
      referencedTweets: [],
    });
  });
});

for (const kind of DATABASE_KINDS) {
  describe(`importArchive (${kind})`, () => {
    it("imports again idempotently: one row per object, the last one read", async () => {
      const test = await openTestDatabase(kind);
      try {
        const world = complete(worldArchiveRecords());
        const first = await importArchive(test.db, world, { batchSize: 7 });
        expect(first).toMatchObject({ user: 4, tweet: 33, follow: 4, retweet: 2, session: 1, article: 1 });
        const count = async () =>
          (
            await test.db.query<{ n: string }>(
              `SELECT (SELECT count(*) FROM social_archive_tweets) + (SELECT count(*) FROM social_archive_follows)
                    + (SELECT count(*) FROM social_archive_users) + (SELECT count(*) FROM social_archive_sessions)
                    + (SELECT count(*) FROM social_archive_list_members) AS n`,
            )
          ).rows[0]?.n;
        const before = await count();
        const edited = world.map((r) =>
          r.kind === "tweet" && r.text.startsWith("Hello") ? { ...r, text: "Hello again" } : r,
        );
        // The same object twice in one batch: the last wins, no "affect row a second time".
        await importArchive(test.db, [...edited, ...edited], { batchSize: 1000 });
        expect(await count()).toBe(before);
        const provider = archiveProvider(test.db);
        const found = await provider.searchTweets({ words: ["again"] }, { size: 5 }, signal());
        expect(found.tweets.map((t) => t.text)).toEqual(["Hello again"]);
        expect((await provider.searchTweets({ words: ["world"] }, { size: 5 }, signal())).tweets).toEqual([]);
      } finally {
        await test.close();
      }
    });

    it("writes nothing of an import whose username is another id's, however many rounds came before", async () => {
      const test = await openTestDatabase(kind);
      try {
        await importArchive(test.db, complete(worldArchiveRecords()));
        const count = async (table: string) =>
          Number((await test.db.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n);
        const before = [await count("social_archive_users"), await count("social_archive_tweets")];
        const user = (id: string, username: string) =>
          parseArchiveLine(
            JSON.stringify({ kind: "user", id, name: "N", username, createdAt: "2020-01-01" }),
            1,
          );
        const tweet = (id: string) => parseArchiveLine(tweetLine({ id, authorId: "11" }), 1);
        // Rounds of two: new users and tweets written first, then a username held by one of them, then
        // one the archive already has (alice's).
        for (const [clash, held] of [
          ["Taken", "taken"],
          ["ALICE", "alice"],
        ]) {
          const rounds = [
            user("11", "first"),
            user("12", "taken"),
            tweet("21"),
            tweet("22"),
            user("13", clash as string),
            tweet("23"),
          ];
          const refused = importArchive(test.db, rounds, { batchSize: 2 });
          await expect(refused).rejects.toBeInstanceOf(ArchiveConflictError);
          await expect(refused).rejects.toThrow(
            `two users have the username "${held}" (X's usernames are unique whatever their case): nothing of this import was written`,
          );
          expect([await count("social_archive_users"), await count("social_archive_tweets")]).toEqual(before);
        }
        // Records that fail to read after rounds were written leave nothing either.
        const cut = archiveLines([
          tweetLine({ id: "31" }),
          tweetLine({ id: "32" }),
          tweetLine({ id: "33" }),
          "{",
        ]);
        await expect(importArchive(test.db, cut, { batchSize: 1 })).rejects.toThrow(/^line 4: not JSON/);
        expect(await count("social_archive_tweets")).toBe(before[1]);
      } finally {
        await test.close();
      }
    });

    it("keeps ids past 2^53 exact from the line to the answer", async () => {
      const test = await openTestDatabase(kind);
      try {
        const big = "9223372036854775807";
        const odd = "9007199254740993"; // 2^53 + 1: a JS number would read it as ...992
        const lines = [
          JSON.stringify({ kind: "user", id: odd, name: "Odd", username: "odd", createdAt: "2020-01-01" }),
          tweetLine({
            id: big,
            authorId: odd,
            referencedTweets: [{ type: "quoted", id: "9007199254740995" }],
          }),
          tweetLine({ id: "9007199254740995", authorId: odd, text: "quoted" }),
          JSON.stringify({ kind: "follow", followerId: big, followedId: odd }),
        ];
        await importArchive(
          test.db,
          lines.map((line, i) => parseArchiveLine(line, i + 1)),
        );
        const provider = archiveProvider(test.db);
        const found = await provider.tweet(big, signal());
        expect(found?.tweets[0]).toMatchObject({ id: big, authorId: odd, conversationId: big });
        expect(found?.includes.tweets.map((t) => t.id)).toEqual(["9007199254740995"]);
        expect(found?.includes.users.map((u) => u.id)).toEqual([odd]);
        expect((await provider.userTweets("ODD", { size: 10 }, signal()))?.tweets.map((t) => t.id)).toEqual([
          big, // the same time: the larger id first
          "9007199254740995",
        ]);
        expect(await provider.tweet("9007199254740992", signal())).toBeNull();
        expect(await provider.tweet("99999999999999999999", signal())).toBeNull();
        expect(await provider.tweet("abc", signal())).toBeNull();
      } finally {
        await test.close();
      }
    });
  });
}

describe("archiveLines", () => {
  it("reads a JSONL archive's lines, skipping blank ones, naming a bad one by its line in the file", async () => {
    const lines = ["", tweetLine({}), "  ", tweetLine({ id: "x" })];
    const read: string[] = [];
    await expect(
      (async () => {
        for await (const record of archiveLines(lines)) read.push(record.kind);
      })(),
    ).rejects.toThrow(/^line 4: field id: /);
    expect(read).toEqual(["tweet"]);
  });
});
