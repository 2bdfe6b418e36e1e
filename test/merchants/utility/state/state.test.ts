import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, migrate } from "../../../../src/common/db/index.ts";
import { AppError } from "../../../../src/common/errors.ts";
import { parseCsvRows, rowsToCsv } from "../../../../src/merchants/utility/state/csv.ts";
import {
  STATE_MIGRATIONS,
  STATE_MODULE,
  stateTables,
} from "../../../../src/merchants/utility/state/schema.ts";
import {
  deleteScratchpad,
  listScratchpads,
  readScratchpad,
  writeScratchpad,
} from "../../../../src/merchants/utility/state/scratchpad-engine.ts";
import {
  deleteRows,
  dropCollection,
  exportRows,
  insertRows,
  listCollections,
  readRows,
  setCollectionExpiry,
} from "../../../../src/merchants/utility/state/store-engine.ts";
import {
  bytesUsed,
  expiryOf,
  type StateOptions,
  walletScope,
} from "../../../../src/merchants/utility/state/wallet.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../../helpers/db.ts";

const ALICE = "0x00000000000000000000000000000000000a11ce";
const BOB = "0x0000000000000000000000000000000000000b0b";

/** The AppError a call rejects with (fails the test when it resolves). */
async function refusal(work: Promise<unknown>): Promise<AppError> {
  const error = await work.then(
    () => {
      throw new Error("the call was not refused");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("CSV rows", () => {
  it("round-trips rows through CSV: types, quoting, nested values, missing keys", () => {
    const rows = [
      { name: "Ada, Countess", quote: 'she said "hi"', n: 42, x: -1.5, ok: true, tags: ["a", "b"] },
      { name: "Line\nbreak", zip: "00123", ratio: "1.50", meta: { k: 1 }, ok: false },
      { name: "Ünïcode ✓" },
    ];
    const csv = rowsToCsv(rows);
    expect(csv.split("\r\n")[0]).toBe("name,quote,n,x,ok,tags,zip,ratio,meta");
    expect(parseCsvRows(csv)).toEqual(rows);
    // Untyped: every cell a string.
    expect(parseCsvRows(csv, { typed: false })[0]).toMatchObject({ n: "42", ok: "true" });
  });

  it("refuses CSV it cannot read faithfully", () => {
    expect(() => parseCsvRows("a,a\n1,2")).toThrow(/appears twice/);
    expect(() => parseCsvRows("a,b\n1,2,3")).toThrow(/line 2 has 3 fields/);
    expect(() => parseCsvRows("")).toThrow(/no header/);
    expect(() => parseCsvRows('a\n"unclosed')).toThrow(/csv/);
  });
});

describe.each(DATABASE_KINDS)("per-wallet state on %s", (kind) => {
  let db: Database;
  let close: () => Promise<void>;
  let clock = new Date("2026-11-21T10:00:00Z");
  const options: StateOptions = { quotaBytes: 10_000, now: () => clock };
  const scope = (payer: string, extra: StateOptions = {}) => walletScope(db, payer, { ...options, ...extra });

  beforeAll(async () => {
    ({ db, close } = await openTestDatabase(kind));
    await migrate(db, STATE_MODULE, STATE_MIGRATIONS);
  });
  afterAll(async () => close?.());

  it("keeps each wallet's collections and scratchpads to itself", async () => {
    const alice = await scope(ALICE);
    const bob = await scope(BOB);
    await insertRows(alice, "people", [{ name: "Ada" }, { name: "Alan" }]);
    await insertRows(bob, "people", [{ name: "Grace" }]);
    await writeScratchpad(alice, { name: "notes", content: "alice's", mode: "replace" });

    expect((await readRows(alice, "people", { limit: 10 })).rows.map((r) => r.data)).toEqual([
      { name: "Ada" },
      { name: "Alan" },
    ]);
    expect((await readRows(bob, "people", { limit: 10 })).rows.map((r) => r.data)).toEqual([
      { name: "Grace" },
    ]);
    expect((await listCollections(bob)).map((c) => [c.name, c.rows])).toEqual([["people", 1]]);

    // Bob cannot read, delete by id, drop or expire Alice's data, even knowing its ids and names.
    const aliceIds = (await readRows(alice, "people", { limit: 10 })).rows.map((r) => r.id);
    expect((await deleteRows(bob, "people", { ids: aliceIds })).deleted).toBe(0);
    expect((await refusal(readScratchpad(bob, "notes"))).status).toBe(404);
    expect((await refusal(deleteScratchpad(bob, "notes"))).status).toBe(404);
    expect(await listScratchpads(bob)).toEqual([]);
    await dropCollection(bob, "people");
    expect((await listCollections(alice)).map((c) => [c.name, c.rows])).toEqual([["people", 2]]);
    expect((await readScratchpad(alice, "notes")).content).toBe("alice's");
    expect((await refusal(readRows(bob, "people", { limit: 10 }))).code).toBe("collection_not_found");
  });

  it("counts bytes as stored and refuses a write past the quota, writing nothing", async () => {
    const payer = "0x00000000000000000000000000000000000000c1";
    const s = await scope(payer, { quotaBytes: 1000 });
    const row = { v: "x".repeat(90) }; // {"v": "xxx..."} = 99 bytes as JSONB text
    const { collection } = await insertRows(
      s,
      "q",
      Array.from({ length: 9 }, () => row),
    );
    expect(collection.bytes).toBe(9 * 99);
    expect(await bytesUsed(db, s)).toBe(891n);
    // 891 + 99 = 990 fits; then a 10-byte scratchpad reaches exactly 1000; one more byte does not fit.
    await insertRows(s, "q", [row]);
    await writeScratchpad(s, { name: "pad", content: "0123456789", mode: "replace" });
    expect(await bytesUsed(db, s)).toBe(1000n);
    const refused = await refusal(writeScratchpad(s, { name: "pad", content: "!", mode: "append" }));
    expect([refused.status, refused.code]).toEqual([507, "quota_exceeded"]);
    const refusedRows = await refusal(insertRows(s, "q2", [{}]));
    expect(refusedRows.status).toBe(507);
    // Nothing written: not the row, not even the new collection.
    expect((await listCollections(s)).map((c) => c.name)).toEqual(["q"]);
    expect((await readScratchpad(s, "pad")).content).toBe("0123456789");
    // Deleting frees the bytes at once.
    const page = await readRows(s, "q", { limit: 1 });
    await deleteRows(s, "q", { ids: page.rows.map((r) => r.id) });
    expect(await bytesUsed(db, s)).toBe(901n);
  });

  it("lets only one of two concurrent writes take the last bytes", async () => {
    const payer = "0x00000000000000000000000000000000000000c2";
    const s = await scope(payer, { quotaBytes: 1000 });
    await insertRows(s, "base", [{ v: "x".repeat(590) }]); // 599 bytes
    // Every write sleeps 50 ms at COMMIT, after its quota check (a deferred trigger), so on a server the
    // writers below overlap for sure: without the wallet lock each would see only its own bytes and pass.
    await db.exec(`
      CREATE FUNCTION test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN PERFORM pg_sleep(0.05); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER test_slow_rows AFTER INSERT ON utility_state_rows
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_slow_commit();
      CREATE CONSTRAINT TRIGGER test_slow_pads AFTER INSERT ON utility_state_scratchpads
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_slow_commit();`);
    // Eight writers of 299 bytes at once (rows and scratchpads): one fits, the others must not.
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0
          ? insertRows(s, `c${i}`, [{ v: "y".repeat(290) }])
          : writeScratchpad(s, { name: `p${i}`, content: "z".repeat(299), mode: "replace" }),
      ),
    );
    await db.exec(`DROP TRIGGER test_slow_rows ON utility_state_rows;
      DROP TRIGGER test_slow_pads ON utility_state_scratchpads; DROP FUNCTION test_slow_commit();`);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results.filter((r) => r.status === "rejected")) {
      expect((r.reason as AppError).status).toBe(507);
    }
    expect(await bytesUsed(db, s)).toBe(898n);
  });

  it("refuses rows over 16 KB and bad tokens as bad input", async () => {
    const s = await scope(ALICE, { quotaBytes: 1_000_000 });
    const big = await refusal(insertRows(s, "big", [{ v: "x".repeat(16 * 1024) }]));
    expect([big.status, big.code]).toEqual([400, "row_too_large"]);
    expect((await listCollections(s)).map((c) => c.name)).not.toContain("big");
    const token = await refusal(readRows(s, "people", { limit: 1, nextToken: "bm9wZQ" }));
    expect([token.status, token.code]).toEqual([400, "invalid_next_token"]);
  });

  it("pages with next_token and filters by equality", async () => {
    const payer = "0x00000000000000000000000000000000000000d1";
    const s = await scope(payer, { quotaBytes: 1_000_000 });
    const rows = Array.from({ length: 25 }, (_, i) => ({
      i,
      even: i % 2 === 0,
      city: i < 5 ? "Lisbon" : "Oslo",
    }));
    await insertRows(s, "items", rows);
    const seen: number[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await readRows(s, "items", { limit: 10, nextToken: token });
      seen.push(...page.rows.map((r) => r.data.i as number));
      token = page.next_token ?? undefined;
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toEqual(rows.map((r) => r.i));

    const lisbonEven = await readRows(s, "items", { limit: 100, where: { city: "Lisbon", even: true } });
    expect(lisbonEven.rows.map((r) => r.data.i)).toEqual([0, 2, 4]);
    expect(lisbonEven.next_token).toBeNull();
    const deleted = await deleteRows(s, "items", { where: { city: "Oslo" } });
    expect(deleted.deleted).toBe(20);
    expect(deleted.collection.rows).toBe(5);
    expect((await exportRows(s, "items")).map((r) => r.i)).toEqual([0, 1, 2, 3, 4]);
  });

  it("round-trips a collection through CSV export and CSV insert", async () => {
    const payer = "0x00000000000000000000000000000000000000d2";
    const s = await scope(payer, { quotaBytes: 1_000_000 });
    const rows = [
      { id: 1, name: "Ada, Countess of Lovelace", note: 'said "hi"\nthen left', active: true, tags: ["x"] },
      { id: 2, name: "Grace", zip: "00123", score: 9.75 },
    ];
    await insertRows(s, "src", rows);
    const csv = rowsToCsv(await exportRows(s, "src"));
    await insertRows(s, "copy", parseCsvRows(csv));
    expect(await exportRows(s, "copy")).toEqual(rows);
  });

  it("hides expired data at once and purges it on the next write", async () => {
    const payer = "0x00000000000000000000000000000000000000e1";
    const s = await scope(payer);
    await insertRows(s, "temp", [{ a: 1 }], new Date("2026-11-21T10:45:00Z"));
    await insertRows(s, "kept", [{ a: 2 }]);
    await writeScratchpad(s, {
      name: "pad",
      content: "{}",
      contentType: "application/json",
      mode: "replace",
      expiresAt: new Date("2026-11-21T10:30:00Z"),
    });
    expect((await listCollections(s)).map((c) => [c.name, c.expires_at])).toEqual([
      ["kept", null],
      ["temp", "2026-11-21T10:45:00.000Z"],
    ]);
    const usedBefore = await bytesUsed(db, s);

    // Until the sweep or a write of the wallet purges it, expired data is only hidden.
    clock = new Date("2026-11-21T10:50:00Z");
    const later = await scope(payer);
    expect((await listCollections(later)).map((c) => c.name)).toEqual(["kept"]);
    expect(await listScratchpads(later)).toEqual([]);
    expect((await refusal(readRows(later, "temp", { limit: 1 }))).status).toBe(404);
    expect((await refusal(readScratchpad(later, "pad"))).status).toBe(404);
    expect(await bytesUsed(db, later)).toBeLessThan(usedBefore);

    // Still stored until a write of the wallet purges it; the name is free again.
    const stored = await db.query(
      "SELECT 1 FROM utility_state_collections WHERE payer = $1 AND name = 'temp'",
      [payer],
    );
    expect(stored.rowCount).toBe(1);
    await insertRows(later, "temp", [{ fresh: true }]);
    expect((await exportRows(later, "temp")).length).toBe(1);
    const pads = await db.query("SELECT 1 FROM utility_state_scratchpads WHERE payer = $1", [payer]);
    expect(pads.rowCount).toBe(0);

    // Wallets that never come back are purged by the sweep the host runs hourly.
    await setCollectionExpiry(later, "temp", new Date("2026-11-21T10:55:00Z"));
    clock = new Date("2026-11-21T11:05:00Z");
    await stateTables(options).sweep?.(db);
    const swept = await db.query(
      "SELECT 1 FROM utility_state_collections WHERE payer = $1 AND name = 'temp'",
      [payer],
    );
    expect(swept.rowCount).toBe(0);

    // Expiry can be set later and removed again; a date in the past is not accepted by the endpoints.
    const set = await setCollectionExpiry(later, "kept", new Date("2027-01-01T00:00:00Z"));
    expect(set.expires_at).toBe("2027-01-01T00:00:00.000Z");
    expect((await setCollectionExpiry(later, "kept", null)).expires_at).toBeNull();
  });

  it("writes scratchpads: create, replace, append per content type", async () => {
    const payer = "0x00000000000000000000000000000000000000f1";
    const s = await scope(payer, { quotaBytes: 1_000_000 });
    await writeScratchpad(s, { name: "log", content: "one\n", mode: "create" });
    expect((await refusal(writeScratchpad(s, { name: "log", content: "x", mode: "create" }))).status).toBe(
      409,
    );
    await writeScratchpad(s, { name: "log", content: "two ✓\n", mode: "append" });
    const log = await readScratchpad(s, "log");
    expect([log.content, log.bytes, log.content_type]).toEqual(["one\ntwo ✓\n", 12, "text/plain"]);

    await writeScratchpad(s, {
      name: "list",
      content: "[1]",
      contentType: "application/json",
      mode: "replace",
    });
    await writeScratchpad(s, { name: "list", content: "[2, 3]", mode: "append" });
    await writeScratchpad(s, { name: "list", content: '{"four": 4}', mode: "append" });
    expect(JSON.parse((await readScratchpad(s, "list")).content)).toEqual([1, 2, 3, { four: 4 }]);
    expect((await refusal(writeScratchpad(s, { name: "list", content: "[", mode: "append" }))).status).toBe(
      400,
    );

    await writeScratchpad(s, { name: "t", content: "a,b\r\n1,2", contentType: "text/csv", mode: "replace" });
    await writeScratchpad(s, { name: "t", content: "a,b\r\n3,4\r\n", mode: "append" });
    await writeScratchpad(s, { name: "t", content: "5,6", mode: "append" });
    expect(parseCsvRows((await readScratchpad(s, "t")).content)).toEqual([
      { a: 1, b: 2 },
      { a: 3, b: 4 },
      { a: 5, b: 6 },
    ]);
    const mismatch = await refusal(
      writeScratchpad(s, { name: "t", content: "x", contentType: "text/plain", mode: "append" }),
    );
    expect(mismatch.code).toBe("content_type_mismatch");
    expect(
      (
        await refusal(
          writeScratchpad(s, { name: "j", content: "{", contentType: "application/json", mode: "replace" }),
        )
      ).code,
    ).toBe("invalid_json");

    expect((await listScratchpads(s)).map((p) => p.name)).toEqual(["list", "log", "t"]);
    expect(await deleteScratchpad(s, "log")).toEqual({ name: "log", deleted: true, bytes_freed: 12 });
  });
});

describe("expiry input", () => {
  it("turns ttl_seconds into a date and refuses past dates or both fields", () => {
    const scope = { now: new Date("2026-11-21T10:00:00Z") } as Parameters<typeof expiryOf>[0];
    expect(expiryOf(scope, { ttl_seconds: 60 })?.toISOString()).toBe("2026-11-21T10:01:00.000Z");
    expect(expiryOf(scope, { expires_at: null })).toBeNull();
    expect(expiryOf(scope, {})).toBeUndefined();
    expect(() => expiryOf(scope, { expires_at: "2026-11-21T09:00:00Z" })).toThrow(/in the past/);
    expect(() => expiryOf(scope, { expires_at: "2027-01-01T00:00:00Z", ttl_seconds: 5 })).toThrow(/not both/);
  });
});
