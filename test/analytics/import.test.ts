import { afterEach, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { ImportError, importNdjson } from "../../src/analytics/import.ts";
import { addr, checkpoint, ndjsonFile, payment, tempAnalytics, transfer } from "../helpers/data.ts";

let analytics: Analytics;
afterEach(() => analytics?.close());

async function counts(s: Analytics) {
  return s.one<Record<string, bigint>>(`SELECT
    (SELECT count(*) FROM payments) AS payments, (SELECT count(*) FROM transfers) AS transfers,
    (SELECT count(*) FROM listings) AS listings, (SELECT count(*) FROM merchants) AS merchants,
    (SELECT count(*) FROM checkpoints) AS checkpoints`);
}

async function importError(records: (object | string)[]): Promise<ImportError> {
  analytics = await tempAnalytics();
  const before = await counts(analytics);
  const error = await importNdjson(analytics, ndjsonFile(records)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportError);
  expect(await counts(analytics)).toEqual(before);
  return error as ImportError;
}

const good = () => payment({ payer: addr("p"), payTo: addr("m"), amount: 1000 });

describe("import", () => {
  it("imports every record type and is idempotent", async () => {
    analytics = await tempAnalytics();
    const file = ndjsonFile([
      good(),
      transfer(addr("m"), addr("p"), 5),
      {
        type: "listing",
        pay_to: addr("m"),
        resource: "https://a.example/x",
        price_usd: 0.01,
        description: "d",
        method: "post",
      },
      { type: "merchant", address: addr("m"), name: "a.example", claimed: true },
      checkpoint(),
    ]);
    const first = await importNdjson(analytics, file);
    expect(first.payment).toEqual({ read: 1, added: 1 });
    expect(first.transfer).toEqual({ read: 1, added: 1 });
    const after = await counts(analytics);
    const second = await importNdjson(analytics, file);
    expect(second.payment.added).toBe(0);
    expect(second.transfer.added).toBe(0);
    expect(await counts(analytics)).toEqual(after);
    expect(after).toEqual({ payments: 1n, transfers: 1n, listings: 1n, merchants: 1n, checkpoints: 1n });
    expect(await analytics.one("SELECT method FROM listings")).toEqual({ method: "POST" });
  });

  it("treats addresses case-insensitively and keys payments by chain, tx_hash and log_index", async () => {
    analytics = await tempAnalytics();
    const p = good();
    const upper = {
      ...p,
      tx_hash: p.tx_hash.toUpperCase().replace("0X", "0x"),
      payer: p.payer.toUpperCase().replace("0X", "0x"),
    };
    await importNdjson(analytics, ndjsonFile([p]));
    await importNdjson(analytics, ndjsonFile([upper, { ...p, log_index: 1 }]));
    const rows = await analytics.all<{ payer: string; log_index: number }>(
      "SELECT payer, log_index FROM payments ORDER BY log_index",
    );
    expect(rows).toEqual([
      { payer: p.payer, log_index: 0 },
      { payer: p.payer, log_index: 1 },
    ]);
  });

  it("keeps amounts exact beyond 2^53 and accepts integers or strings", async () => {
    analytics = await tempAnalytics();
    const big = "9007199254740993";
    await importNdjson(
      analytics,
      ndjsonFile([{ ...good(), amount: big }, `${JSON.stringify({ ...good(), amount: 0 }).slice(0, -1)}}`]),
    );
    const rows = await analytics.all<{ amount: bigint }>("SELECT amount FROM payments ORDER BY amount");
    expect(rows.map((r) => r.amount)).toEqual([0n, 9007199254740993n]);
  });

  it("reads ISO 8601 times with offsets and unix seconds as the same instant", async () => {
    analytics = await tempAnalytics();
    await importNdjson(
      analytics,
      ndjsonFile([
        { ...good(), block_time: "2026-11-21T10:00:00+02:00" },
        { ...good(), block_time: 1795248000 },
      ]),
    );
    const rows = await analytics.all<{ t: bigint }>(
      "SELECT DISTINCT epoch(block_time)::BIGINT AS t FROM payments",
    );
    expect(rows).toEqual([{ t: 1795248000n }]);
  });

  it("updates only the merchant fields a line carries, and lists every paid wallet as a merchant", async () => {
    analytics = await tempAnalytics();
    const m = addr("m");
    await importNdjson(
      analytics,
      ndjsonFile([{ type: "merchant", address: m, name: "shop.example", claimed: true }]),
    );
    await importNdjson(
      analytics,
      ndjsonFile([{ type: "merchant", address: m.toUpperCase().replace("0X", "0x"), frozen: true }, good()]),
    );
    expect(
      await analytics.one("SELECT name, claimed, frozen FROM merchants WHERE address = $1", [m]),
    ).toEqual({
      name: "shop.example",
      claimed: true,
      frozen: true,
    });
  });

  it("accepts a repeated identical line once and ignores blank lines", async () => {
    analytics = await tempAnalytics();
    const p = good();
    await importNdjson(analytics, ndjsonFile([p, "", "   ", p]));
    expect((await counts(analytics))?.payments).toBe(1n);
  });
});

describe("import errors keep nothing", () => {
  it("names the line of malformed JSON, counting blank lines", async () => {
    const error = await importError([good(), "", '{"type": "payment", oops}']);
    expect(error.message).toMatch(/^line 3: not valid JSON/);
    expect(error.line).toBe(3);
  });

  it("rejects a line that is not an object", async () => {
    expect((await importError([good(), "[1, 2]"])).message).toBe("line 2: expected a JSON object");
  });

  it("names a missing field", async () => {
    const { payer: _, ...noPayer } = good();
    expect((await importError([good(), good(), noPayer])).message).toBe('line 3: missing field "payer"');
  });

  it("rejects an unknown or missing type", async () => {
    expect((await importError([{ ...good(), type: "refund" }])).message).toMatch(
      /^line 1: unknown type "refund"/,
    );
    expect((await importError([{ chain: "base" }])).message).toBe('line 1: missing field "type"');
  });

  it("rejects bad addresses, hashes, amounts, times and chains", async () => {
    expect((await importError([{ ...good(), payer: "0x123" }])).message).toMatch(
      /line 1: "payer" must be an address/,
    );
    expect((await importError([{ ...good(), tx_hash: "0xzz" }])).message).toMatch(/"tx_hash" must be 0x/);
    expect((await importError([{ ...good(), amount: "-5" }])).message).toMatch(
      /"amount" must be a non-negative integer/,
    );
    expect((await importError([{ ...good(), amount: 1.5 }])).message).toMatch(/"amount"/);
    expect((await importError([{ ...good(), amount: "99999999999999999999" }])).message).toMatch(
      /below 2\^63/,
    );
    expect((await importError([{ ...good(), block_time: "yesterday" }])).message).toMatch(
      /"block_time" must be/,
    );
    expect((await importError([{ ...good(), chain: "ethereum" }])).message).toBe(
      'line 1: "chain" must be "base"',
    );
    expect(
      (
        await importError([
          { type: "listing", pay_to: addr("m"), resource: "ftp://x", price_usd: 1, description: "" },
        ])
      ).message,
    ).toMatch(/"resource" must be a full http\(s\) URL/);
    expect((await importError([{ type: "merchant", address: addr("m"), claimed: "yes" }])).message).toMatch(
      /"claimed" must be true or false/,
    );
  });

  it("rejects the same payment twice with different fields, naming the second line", async () => {
    const p = good();
    expect((await importError([p, good(), { ...p, amount: "2" }])).message).toMatch(
      /^line 3: payment 0x[0-9a-f]+ log 0 appears earlier/,
    );
  });

  // The bulk way takes new blocks; a repeat, an overlap or a bad line sends the file the exact way.
  describe("both ways", () => {
    const week = () => [
      { type: "merchant", address: addr("m"), name: "a.example", claimed: true },
      payment({ payer: addr("p"), payTo: addr("m"), amount: 1000, block: 39_000_000 }),
      payment({
        payer: addr("q").toUpperCase().replace("0X", "0X"),
        payTo: addr("m2"),
        amount: 7,
        block: 39_000_001,
      }),
      transfer(addr("m"), addr("p"), 5, 39_000_002),
      { type: "listing", pay_to: addr("m3"), resource: "https://c.example/", price_usd: 1, description: "c" },
      { type: "merchant", address: addr("m2"), frozen: true },
      checkpoint(39_000_010),
    ];
    const tables = ["payments", "transfers", "listings", "merchants", "checkpoints"];
    /** Which way an import ended: the exact way stages every record, payments included. */
    const watch = (s: Analytics) => {
      const staged: string[] = [];
      const run = s.run.bind(s);
      s.run = (sql, params) => {
        if (/^CREATE TEMP TABLE import_raw/.test(sql.trim())) staged.push(sql);
        return run(sql, params);
      };
      return () => (staged.some((q) => !q.includes(`IS DISTINCT FROM 'payment'`)) ? "exact" : "bulk");
    };
    const dump = async (s: Analytics) => {
      const out: Record<string, unknown> = {};
      for (const t of tables) out[t] = await s.all(`SELECT * FROM ${t} ORDER BY ALL`);
      return out;
    };

    it("keep the same rows: a fresh week (bulk) and the same week with a repeated line (exact)", async () => {
      const records = week();
      analytics = await tempAnalytics();
      let way = watch(analytics);
      const bulk = await importNdjson(analytics, ndjsonFile(records));
      expect(way()).toBe("bulk");
      const viaBulk = await dump(analytics);
      analytics.close();
      analytics = await tempAnalytics();
      way = watch(analytics);
      const exact = await importNdjson(analytics, ndjsonFile([...records, records[1] as object]));
      expect(way()).toBe("exact");
      expect(await dump(analytics)).toEqual(viaBulk);
      expect(exact.payment).toEqual({ read: 3, added: 2 });
      expect(bulk.payment).toEqual({ read: 2, added: 2 });
      expect(bulk.merchant).toEqual(exact.merchant);
      expect(viaBulk.merchants).toHaveLength(3);
      expect((viaBulk.payments as { payer: string }[]).map((p) => p.payer)).toContain(addr("q"));
    });

    it("see one transfer in two spellings of its key", async () => {
      analytics = await tempAnalytics();
      const t = transfer(addr("m"), addr("p"), 5, 39_000_002);
      const again = { ...t, tx_hash: t.tx_hash.toUpperCase().replace("0X", "0x"), log_index: "01" };
      expect((await importNdjson(analytics, ndjsonFile([{ ...t, log_index: 1 }, again]))).transfer).toEqual({
        read: 2,
        added: 1,
      });
    });

    it("add a later week to an analytics database that holds an earlier one, and its paid wallets as merchants", async () => {
      analytics = await tempAnalytics();
      await importNdjson(analytics, ndjsonFile(week()));
      const way = watch(analytics);
      const later = [payment({ payer: addr("p"), payTo: addr("new"), amount: 3, block: 39_500_000 })];
      expect((await importNdjson(analytics, ndjsonFile(later))).payment).toEqual({ read: 1, added: 1 });
      expect(way()).toBe("bulk");
      expect(
        await analytics.one("SELECT count(*) AS n FROM merchants WHERE address = $a", { a: addr("new") }),
      ).toEqual({
        n: 1n,
      });
    });

    it("name the line of a bad payment after good ones, and keep nothing", async () => {
      const bad = { ...payment({ payer: addr("p"), payTo: addr("m"), amount: 1 }), pay_to: "0x12" };
      expect((await importError([good(), good(), "", bad, good()])).message).toMatch(
        /^line 4: "pay_to" must be an address/,
      );
      expect((await importError([good(), { ...good(), tx_hash: "0xzz" }])).message).toMatch(
        /^line 2: "tx_hash"/,
      );
    });
  });

  it("reports an unreadable file in one line", async () => {
    analytics = await tempAnalytics();
    await expect(importNdjson(analytics, "/nonexistent/file.ndjson")).rejects.toThrow(
      /^cannot read \/nonexistent\/file.ndjson/,
    );
  });
});
