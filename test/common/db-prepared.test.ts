/** A statement prepared once per PGlite database: the same answers as the plain statement, on either store. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/common/db/index.ts";
import { prepared } from "../../src/common/db/prepared.ts";
import { DATABASE_KINDS, openTestDatabase } from "../helpers/db.ts";

describe.each(DATABASE_KINDS)("prepared statements on %s", (kind) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openTestDatabase(kind));
    await db.exec(
      "CREATE TABLE prepared_rows (k text PRIMARY KEY, at timestamptz, n numeric, note text, state text)",
    );
  });
  afterAll(async () => close());

  const insert = prepared(
    "test_prepared_insert",
    ["text", "float8", "numeric", "text"],
    `INSERT INTO prepared_rows (k, at, n, note) VALUES ($1, to_timestamp($2::float8), $3::numeric, $4)
     ON CONFLICT (k) DO NOTHING RETURNING k, n::text AS n, note, extract(epoch FROM at)::float8 AS at`,
  );
  const update = prepared(
    "test_prepared_update",
    ["text", "text"],
    "UPDATE prepared_rows SET state = $2 WHERE k = $1",
  );

  it("answers what the plain statement answers, a second call and a conflict included", async () => {
    const first = await insert(db, ["0xab:1", 1_795_976_048, 1000n, "https://h.example/api/calc"]);
    expect(first.rowCount).toBe(1);
    expect(first.rows).toEqual([
      { k: "0xab:1", n: "1000", note: "https://h.example/api/calc", at: 1_795_976_048 },
    ]);
    expect((await insert(db, ["0xab:1", 1, "5", null])).rowCount).toBe(0);
    // PGlite's one session keeps it; a server's pool is never asked to.
    const named = await db.query(
      "SELECT name FROM pg_prepared_statements WHERE name = 'test_prepared_insert'",
    );
    expect(named.rowCount).toBe(kind === "pglite" ? 1 : 0);
    const second = await insert(db, ["0xab:2", 1.5, "12345678901234567890", null]);
    expect(second.rows).toEqual([{ k: "0xab:2", n: "12345678901234567890", note: null, at: 1.5 }]);
    await update(db, ["0xab:2", "settled"]);
    const { rows } = await db.query("SELECT state FROM prepared_rows WHERE k = '0xab:2'");
    expect(rows).toEqual([{ state: "settled" }]);
  });

  it("writes any text whole: a quote, a backslash, a line break, non-ASCII travel as parameters", async () => {
    const notes = ["it's", "back\\slash", "line\nbreak", "Zürich 東京", "'); DROP TABLE prepared_rows; --"];
    for (const [i, note] of notes.entries()) {
      const { rows } = await insert(db, [`text:${i}`, 1, "1", note]);
      expect(rows[0]?.note).toBe(note);
    }
    expect((await db.query("SELECT count(*)::int AS n FROM prepared_rows")).rows).toEqual([{ n: 7 }]);
  });

  it("prepares again a statement the session lost", async () => {
    if (kind === "pglite") await db.exec("DEALLOCATE ALL");
    expect((await insert(db, ["again", 2, "2", null])).rowCount).toBe(1);
    expect((await insert(db, ["again:2", 2, "2", null])).rowCount).toBe(1);
  });

  it("runs plainly in a transaction, which commits or rolls back with it", async () => {
    await expect(
      db.transaction(async (tx) => {
        await insert(tx, ["rolled back", 3, "3", null]);
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    await db.transaction(async (tx) => insert(tx, ["committed", 3, "3", null]));
    const { rows } = await db.query<{ k: string }>(
      "SELECT k FROM prepared_rows WHERE k IN ('rolled back', 'committed')",
    );
    expect(rows).toEqual([{ k: "committed" }]);
  });
});
