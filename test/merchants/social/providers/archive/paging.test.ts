/**
 * The archive's cursors: a cursor that is not one it gave is a 400 (edited, of another page family,
 * garbage); keyset pages neither repeat nor skip when tweets arrive between two pages or share a time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SocialProvider } from "../../../../../src/merchants/social/provider.ts";
import {
  importArchive,
  parseArchiveLine,
} from "../../../../../src/merchants/social/providers/archive/index.ts";
import { DATABASE_KINDS } from "../../../../helpers/db.ts";
import { ALICE, ALICE_SERIES } from "../../world.ts";
import { type ArchiveSubject, archiveOfWorld } from "./helpers.ts";

const signal = () => AbortSignal.timeout(20_000);

for (const kind of DATABASE_KINDS) {
  describe(`the archive's page cursors (${kind})`, () => {
    let subject: ArchiveSubject;
    let p: SocialProvider;
    beforeAll(async () => {
      subject = await archiveOfWorld(kind);
      p = subject.provider;
    }, 60_000);
    afterAll(() => subject?.close());

    it("refuses a cursor it did not give with a 400 invalid_next_token", async () => {
      const first = await p.userTweets("alice", { size: 5 }, signal());
      const next = first?.next ?? "";
      expect(next).not.toBe("");
      const decoded = Buffer.from(next, "base64url").toString();
      const bad = [
        "garbage!",
        "",
        Buffer.from(decoded.replace(/\|\d+$/, "|12x")).toString("base64url"),
        Buffer.from(decoded.replace(/^t\|[^|]+/, "t|not a date")).toString("base64url"),
        Buffer.from(`${decoded}|1`).toString("base64url"),
        Buffer.from("e|1").toString("base64url"), // an edge cursor on a tweet page
        Buffer.from("t|2026-01-01T00:00:00.000Z|99999999999999999999").toString("base64url"),
      ];
      for (const cursor of bad) {
        await expect(p.userTweets("alice", { size: 5, cursor }, signal())).rejects.toMatchObject({
          status: 400,
          code: "invalid_next_token",
        });
      }
      const followers = await p.followers(ALICE.id, { size: 1 }, signal());
      await expect(p.followers(ALICE.id, { size: 1, cursor: next }, signal())).rejects.toMatchObject({
        status: 400,
      });
      await expect(
        p.searchUsers("a", { size: 1, cursor: followers?.next ?? "x" }, signal()),
      ).rejects.toMatchObject({
        status: 400,
      });
    });

    it("neither repeats nor skips when newer tweets arrive between pages, or tweets share a time", async () => {
      const first = await p.userTweets("alice", { size: 4 }, signal());
      // Newer tweets, and two at the time of the page's last tweet (one sorting before it, one after).
      const last = first?.tweets.at(-1);
      const at = last?.createdAt ?? "";
      const lines = [
        { id: "1790000000000090001", createdAt: "2027-01-01T00:00:00.000Z" },
        { id: (BigInt(last?.id ?? 0) + 500n).toString(), createdAt: at },
        { id: (BigInt(last?.id ?? 0) - 500n).toString(), createdAt: at },
      ].map((t, i) =>
        parseArchiveLine(
          JSON.stringify({ kind: "tweet", authorId: ALICE.id, text: `late ${i}`, ...t }),
          i + 1,
        ),
      );
      await importArchive(subject.db, lines);
      const rest: string[] = [];
      let cursor = first?.next;
      while (cursor) {
        const page = await p.userTweets("alice", { size: 4, cursor }, signal());
        rest.push(...(page?.tweets.map((t) => t.id) ?? []));
        cursor = page?.next;
      }
      const seen = [...(first?.tweets.map((t) => t.id) ?? []), ...rest];
      expect(new Set(seen).size).toBe(seen.length);
      // After the first page: the tie sorting before its last tweet, and every older tweet; not the newer ones.
      expect(rest).toContain((BigInt(last?.id ?? 0) - 500n).toString());
      expect(rest).not.toContain("1790000000000090001");
      expect(rest).not.toContain((BigInt(last?.id ?? 0) + 500n).toString());
      expect(seen.length).toBe(3 + ALICE_SERIES.length + 1);
    });

    it("refuses a search without filters or with a bad date, and a bad session without naming its token", async () => {
      await expect(p.searchTweets({ words: [] }, { size: 5 }, signal())).rejects.toMatchObject({
        status: 400,
      });
      await expect(p.searchTweets({ since: "2026-13-45" }, { size: 5 }, signal())).rejects.toMatchObject({
        status: 400,
      });
      await expect(p.searchTweets({ until: "tomorrow" }, { size: 5 }, signal())).rejects.toMatchObject({
        status: 400,
      });
      const token = "f00d".repeat(10);
      const refused = await p.mentions({ authToken: token }, { size: 5 }, signal()).catch((e: Error) => e);
      expect(refused).toMatchObject({ status: 401, code: "invalid_session" });
      expect(
        JSON.stringify({ message: (refused as Error).message, stack: (refused as Error).stack }),
      ).not.toContain(token);
      await expect(
        p.uploadMedia(
          { authToken: token },
          { bytes: new Uint8Array(8), type: "image/png", width: 1, height: 1 },
          signal(),
        ),
      ).rejects.toMatchObject({ status: 401 });
    });
  });
}
