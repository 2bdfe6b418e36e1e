/**
 * The archive's user search on its index: a word of the username, name or bio beginning with each word
 * asked, whatever its case or accents; the exact username first, then usernames starting with it, names,
 * bios, the most followed first within each; what the caller types is never query syntax; pages keep the
 * order; an archive imported before the index is found once migrated.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../../../../src/common/db/index.ts";
import type { SocialProvider } from "../../../../../src/merchants/social/provider.ts";
import {
  ARCHIVE_MODULE,
  archiveProvider,
} from "../../../../../src/merchants/social/providers/archive/index.ts";
import { ARCHIVE_MIGRATIONS } from "../../../../../src/merchants/social/providers/archive/tables.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../../../helpers/db.ts";
import { type ArchiveSubject, archiveWith, complete } from "./helpers.ts";

const signal = () => AbortSignal.timeout(20_000);

const person = (id: number, username: string, name: string, description: string, followersCount: number) => ({
  kind: "user" as const,
  id: String(id),
  username,
  name,
  description,
  createdAt: "2020-01-01T00:00:00Z",
  metrics: { followersCount },
});
const PEOPLE = [
  person(1, "satoshi_n", "Satoshi Nakamoto", "Peer to peer cash", 10),
  person(2, "sato", "Kenji Sato", "Ramen and ledgers", 1),
  person(3, "zoe_a", "Zoë Ångström", "Physics, crème brûlée", 5),
  person(4, "runner", "Bob", "Satoshi fan, saturday runner", 100),
  // "sato" inside a word, not at its start: not found (no trigram index).
  person(5, "misato", "Misato Katsuragi", "Pilot", 1_000),
  person(6, "o_brien", "Conan O'Brien", "Late night", 3),
];

for (const kind of DATABASE_KINDS) {
  describe(`the archive's user search (${kind})`, () => {
    let subject: ArchiveSubject;
    let p: SocialProvider;
    beforeAll(async () => {
      subject = await archiveWith(kind, complete(PEOPLE));
      p = subject.provider;
    }, 60_000);
    afterAll(() => subject?.close());

    const usernames = async (query: string) =>
      (await p.searchUsers(query, { size: 20 }, signal())).users.map((u) => u.username);

    it("finds words by their beginning: the exact username, usernames starting with it, names, then bios", async () => {
      expect(await usernames("sato")).toEqual(["sato", "satoshi_n", "runner"]);
      expect(await usernames("sat")).toEqual(["satoshi_n", "sato", "runner"]);
      expect(await usernames("naka")).toEqual(["satoshi_n"]);
      // Every word must begin one: "satoshi naka" is the one whose name has both.
      expect(await usernames("satoshi naka")).toEqual(["satoshi_n"]);
      expect(await usernames("runner")).toEqual(["runner"]);
      expect(await usernames("ledg")).toEqual(["sato"]);
    });

    it("ignores case, a leading @ and accents, on either side", async () => {
      expect(await usernames("SATOSHI_N")).toEqual(["satoshi_n"]);
      expect(await usernames("@Satoshi_N")).toEqual(["satoshi_n"]);
      for (const query of ["zoe", "Zoë", "ZOË", "angstrom", "ÅNGSTRÖM", "creme brulee", "crème"]) {
        expect(await usernames(query), query).toEqual(["zoe_a"]);
      }
    });

    it("reads what the caller types as words, never as query syntax", async () => {
      expect(await usernames("o'brien")).toEqual(["o_brien"]);
      // Not the username as typed: no rank for an exact or starting username, name matches by followers.
      for (const query of ["sato & !", "(sato)", "sato:*", "!sato"]) {
        expect(await usernames(query), query).toEqual(["satoshi_n", "sato", "runner"]);
      }
      expect(await usernames("sato | runner")).toEqual(["runner"]);
      for (const query of ["\\", "'", "<->", "!!", "&"]) expect(await usernames(query), query).toEqual([]);
      expect(await usernames("nobody_here_at_all")).toEqual([]);
    });

    it("finds the users of an archive imported before its search index, once migrated", async () => {
      const test = await openTestDatabase(kind);
      try {
        await migrate(test.db, ARCHIVE_MODULE, ARCHIVE_MIGRATIONS.slice(0, 1));
        await test.db.query(
          `INSERT INTO social_archive_users (id, username, name, description, followers_count, doc)
           VALUES (7, 'ada_l', 'Ada Lovelace', 'Engines', 0, '{"id":"7","username":"ada_l"}')`,
        );
        await migrate(test.db, ARCHIVE_MODULE, ARCHIVE_MIGRATIONS);
        const found = await archiveProvider(test.db).searchUsers("love", { size: 20 }, signal());
        expect(found.users.map((u) => u.username)).toEqual(["ada_l"]);
      } finally {
        await test.close();
      }
    });

    it("pages in the same order through its cursor", async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await p.searchUsers("sat", { size: 1, ...(cursor && { cursor }) }, signal());
        seen.push(...page.users.map((u) => u.username));
        cursor = page.next;
      } while (cursor);
      expect(seen).toEqual(["satoshi_n", "sato", "runner"]);
    });
  });
}
