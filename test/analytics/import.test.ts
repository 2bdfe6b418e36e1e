import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { ImportError, importNdjson } from "../../src/analytics/import.ts";
import { BASE_GENESIS_TIME, BASE_USDC, MAX_USDC_AMOUNT } from "../../src/chain/base.ts";
import { BASE_DENIM_BLOCK, BASE_MAINNET_CLOCK } from "../../src/chain/block-clock.ts";
import {
  addr,
  checkpoint,
  END,
  emptyStoreAt,
  ndjsonFile,
  payment,
  START,
  tempAnalytics,
  timeOf,
  transfer,
} from "../helpers/data.ts";
import { removedTempDir } from "../helpers/temp-dirs.ts";

let analytics: Analytics;
afterEach(() => analytics?.close());

async function counts(s: Analytics) {
  return s.one<Record<string, bigint>>(`SELECT
    (SELECT count(*) FROM payments) AS payments, (SELECT count(*) FROM transfers) AS transfers,
    (SELECT count(*) FROM listings) AS listings, (SELECT count(*) FROM merchants) AS merchants,
    (SELECT count(*) FROM checkpoints) AS checkpoints, (SELECT count(*) FROM balances) AS balances`);
}

const balance = (wallet: string, block: number, amount: number | string) => ({
  type: "balance",
  chain: "base",
  wallet,
  block_number: block,
  amount,
});

/**
 * Imports `records` into a fresh analytics database, expecting a refusal that keeps nothing, and checks
 * its one line names the file and the line: `FILE:LINE: reason`. Returns "line LINE: reason".
 */
async function importError(records: (object | string)[]): Promise<{ message: string; line?: number }> {
  analytics = await tempAnalytics();
  const before = await counts(analytics);
  const file = ndjsonFile(records);
  const error = await importNdjson(analytics, file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportError);
  const { line, reason, message } = error as ImportError;
  expect(message).toBe(`${file}:${line}: ${reason}`);
  expect(message).not.toContain("\n");
  expect(await counts(analytics)).toEqual(before);
  return { message: `line ${line}: ${reason}`, line };
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
      balance(addr("p"), START - 1, "5000"),
    ]);
    const first = await importNdjson(analytics, file);
    expect(first.payment).toEqual({ read: 1, added: 1 });
    expect(first.transfer).toEqual({ read: 1, added: 1 });
    expect(first.balance).toEqual({ read: 1, added: 1 });
    const after = await counts(analytics);
    const second = await importNdjson(analytics, file);
    expect(second.payment.added).toBe(0);
    expect(second.transfer.added).toBe(0);
    expect(second.balance.added).toBe(0);
    expect(await counts(analytics)).toEqual(after);
    expect(after).toEqual({
      payments: 1n,
      transfers: 1n,
      listings: 1n,
      merchants: 1n,
      checkpoints: 1n,
      balances: 1n,
    });
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
      ndjsonFile([{ type: "merchant", address: m.toUpperCase().replace("0X", "0x"), held: true }, good()]),
    );
    expect(await analytics.one("SELECT name, claimed, held FROM merchants WHERE address = $1", [m])).toEqual({
      name: "shop.example",
      claimed: true,
      held: true,
    });
  });

  it("takes the operator's hold as held, or as frozen, its deprecated alias", async () => {
    analytics = await tempAnalytics();
    const [a, b, c] = [addr("held-a"), addr("held-b"), addr("held-c")];
    const held = async () =>
      Object.fromEntries(
        (await analytics.all<{ address: string; held: boolean }>("SELECT address, held FROM merchants")).map(
          (r) => [r.address, r.held],
        ),
      );
    await importNdjson(
      analytics,
      ndjsonFile([
        { type: "merchant", address: a, held: true },
        { type: "merchant", address: b, frozen: true },
        { type: "merchant", address: c, held: false, frozen: false },
      ]),
    );
    expect(await held()).toEqual({ [a]: true, [b]: true, [c]: false });
    // Either name clears or sets it; a line that agrees with itself is fine; a line with neither leaves it.
    await importNdjson(
      analytics,
      ndjsonFile([
        { type: "merchant", address: a, frozen: false },
        { type: "merchant", address: b, name: "b.example" },
        { type: "merchant", address: c, held: true, frozen: true },
      ]),
    );
    expect(await held()).toEqual({ [a]: false, [b]: true, [c]: true });
  });

  it("refuses a merchant line whose held and frozen disagree, or a hold that is not true or false", async () => {
    expect(
      (await importError([good(), { type: "merchant", address: addr("m"), held: true, frozen: false }]))
        .message,
    ).toBe('line 2: "held" and "frozen" (its deprecated alias) must not disagree: give "held" alone');
    expect((await importError([{ type: "merchant", address: addr("m"), held: "yes" }])).message).toBe(
      'line 1: "held" must be true or false',
    );
    expect((await importError([{ type: "merchant", address: addr("m"), frozen: 1 }])).message).toBe(
      'line 1: "frozen" must be true or false',
    );
  });

  it("accepts a repeated identical line once and ignores blank lines", async () => {
    analytics = await tempAnalytics();
    const p = good();
    await importNdjson(analytics, ndjsonFile([p, "", "   ", p]));
    expect((await counts(analytics))?.payments).toBe(1n);
  });
});

describe("balances", () => {
  it("stores a wallet's balance at a block once, however often the file or the store repeats it", async () => {
    analytics = await tempAnalytics();
    const upper = `0x${addr("w").slice(2).toUpperCase()}`;
    const counted = await importNdjson(
      analytics,
      ndjsonFile([
        balance(addr("w"), 100, "9007199254740993"),
        balance(upper, 100, "9007199254740993"),
        balance(addr("w"), 101, 0),
      ]),
    );
    expect(counted.balance).toEqual({ read: 3, added: 2 });
    const again = await importNdjson(analytics, ndjsonFile([balance(addr("w"), 101, 0)]));
    expect(again.balance).toEqual({ read: 1, added: 0 });
    const rows = await analytics.all<{ wallet: string; block_number: bigint; amount: bigint }>(
      "SELECT wallet, block_number, amount FROM balances ORDER BY block_number",
    );
    expect(rows.map((r) => [r.wallet, Number(r.block_number), BigInt(r.amount)])).toEqual([
      [addr("w"), 100, 9_007_199_254_740_993n],
      [addr("w"), 101, 0n],
    ]);
  });

  it("refuses a bad balance line, or one key with two amounts, naming the line and keeping nothing", async () => {
    const ok = balance(addr("w"), 100, 5);
    const bad = async (line: object) => (await importError([good(), ok, line])).message;
    expect(await bad({ ...ok, wallet: "0x12" })).toMatch(/^line 3: "wallet" must be an address/);
    expect(await bad({ ...ok, wallet: undefined })).toBe('line 3: missing field "wallet"');
    expect(await bad({ ...ok, block_number: -1 })).toMatch(
      /^line 3: "block_number" must be a non-negative integer/,
    );
    expect(await bad({ ...ok, amount: "1.5" })).toMatch(/^line 3: "amount" must be a whole number/);
    expect(await bad({ ...ok, amount: (MAX_USDC_AMOUNT + 1n).toString() })).toMatch(/^line 3: "amount"/);
    expect(await bad({ ...ok, chain: "ethereum" })).toBe(
      'line 3: "chain" must be one of "base", "polygon", "arbitrum", "solana"',
    );
    expect(await bad({ ...ok, amount: 6 })).toBe(
      `line 3: balance of ${addr("w")} at block 100 appears earlier in the file with another amount`,
    );
  });
});

/**
 * Imports `stored` into a fresh analytics database, then `records`, expecting a refusal that keeps nothing of
 * the second file. Returns "line LINE: reason".
 */
async function refusedOver(stored: object[], records: object[]): Promise<string> {
  analytics = await tempAnalytics();
  await importNdjson(analytics, ndjsonFile(stored));
  const tables = ["payments", "transfers", "balances", "merchants", "checkpoints", "payment_days", "meta"];
  const dump = async () => Promise.all(tables.map((t) => analytics.all(`SELECT * FROM ${t} ORDER BY ALL`)));
  const before = await dump();
  const file = ndjsonFile(records);
  const error = await importNdjson(analytics, file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportError);
  const { line, reason, message } = error as ImportError;
  expect(message).toBe(`${file}:${line}: ${reason}`);
  expect(await dump()).toEqual(before);
  return `line ${line}: ${reason}`;
}

describe("a record the analytics database holds otherwise", () => {
  const p = good();
  const stored = [p, transfer(addr("m"), addr("p"), 5, END - 3000), balance(addr("p"), END - 3000, 70)];
  const [, t] = stored as [unknown, ReturnType<typeof transfer>];
  const fresh = () => payment({ payer: addr("q"), payTo: addr("m2"), amount: 9, block: END - 500 });

  it("is refused, naming the line and what differs, and nothing of the file is kept", async () => {
    expect(await refusedOver(stored, [fresh(), { ...p, amount: "5" }])).toBe(
      `line 2: payment ${p.tx_hash} log 0 is in the analytics database with different fields: amount 1000 there, 5 here`,
    );
    analytics.close();
    expect(await refusedOver(stored, [fresh(), { ...p, pay_to: addr("m2"), asset: addr("token") }])).toBe(
      `line 2: payment ${p.tx_hash} log 0 is in the analytics database with different fields: ` +
        `pay_to ${addr("m")} there, ${addr("m2")} here; asset ${BASE_USDC} there, ${addr("token")} here`,
    );
    analytics.close();
    expect(await refusedOver(stored, [{ ...t, to: addr("q") }])).toBe(
      `line 1: transfer ${t.tx_hash} log 1 is in the analytics database with different fields: to_address ${addr("p")} there, ${addr("q")} here`,
    );
    analytics.close();
    expect(await refusedOver(stored, [fresh(), balance(addr("p"), END - 3000, 71)])).toBe(
      `line 2: balance of ${addr("p")} at block ${END - 3000} is in the analytics database with another amount: 70 there, 71 here`,
    );
  });

  it("is refused in another block than the stored one, where the new blocks would have gone in the bulk way", async () => {
    // Block END - 10 is new to the store: without the key's other block, the file would go in whole.
    const moved = { ...p, block_number: END - 10, block_time: timeOf(END - 10) };
    expect(await refusedOver(stored, [fresh(), moved])).toBe(
      `line 2: payment ${p.tx_hash} log 0 is in the analytics database with different fields: ` +
        `block_number ${END - 1000} there, ${END - 10} here; ` +
        `block_time 2026-11-21 23:26:40 there, 2026-11-21 23:59:40 here`,
    );
    analytics.close();
    const later = { ...t, block_number: END - 20, block_time: timeOf(END - 20) };
    expect(await refusedOver(stored, [fresh(), later])).toMatch(
      new RegExp(
        `^line 2: transfer ${t.tx_hash} log 1 is in the analytics database with different fields: block_number`,
      ),
    );
  });

  it("is a repeat that adds nothing when it agrees, in any spelling", async () => {
    analytics = await tempAnalytics();
    await importNdjson(analytics, ndjsonFile(stored));
    const again = await importNdjson(
      analytics,
      ndjsonFile([
        { ...p, payer: p.payer.toUpperCase().replace("0X", "0x"), amount: 1000 },
        ...stored.slice(1),
        fresh(),
      ]),
    );
    expect(again.payment).toEqual({ read: 2, added: 1 });
    expect(again.transfer.added + again.balance.added).toBe(0);
  });
});

describe("import errors keep nothing", () => {
  it("names a line longer than a record may be", async () => {
    const huge = `{"type":"listing","description":"${"x".repeat(40 * 1024 * 1024)}"}`;
    expect((await importError([good(), huge])).message).toBe(
      "line 2: the line is 40.0 MiB, more than a record may be (16.0 MiB)",
    );
  });

  it("reads the file it is given, whatever glob characters its path holds", async () => {
    const dir = removedTempDir("x402m-glob-");
    const files = {
      "a*.ndjson": "star",
      "ab.ndjson": "plain",
      "[a]b.ndjson": "brackets",
      "a?.ndjson": "question",
    };
    for (const [name, payer] of Object.entries(files))
      fs.writeFileSync(path.join(dir, name), `${JSON.stringify({ ...good(), payer: addr(payer) })}\n`);
    for (const [name, payer] of Object.entries(files)) {
      analytics = await tempAnalytics();
      await importNdjson(analytics, path.join(dir, name));
      expect(await analytics.all("SELECT payer FROM payments"), name).toEqual([{ payer: addr(payer) }]);
      analytics.close();
    }
  });

  it("names the line of malformed JSON, counting blank lines", async () => {
    const error = await importError([good(), "", '{"type": "payment", oops}']);
    expect(error.message).toMatch(/^line 3: not valid JSON/);
    expect(error.line).toBe(3);
  });

  it("refuses a file that holds no records, keeping nothing", async () => {
    analytics = await tempAnalytics();
    const before = await counts(analytics);
    for (const file of [ndjsonFile([]), ndjsonFile(["", "   "])]) {
      const error = await importNdjson(analytics, file).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ImportError);
      expect((error as ImportError).message).toBe(`${file}: it holds no records (the file is empty)`);
    }
    expect(await counts(analytics)).toEqual(before);
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
      /"amount" must be a whole number of atomic units/,
    );
    expect((await importError([{ ...good(), amount: 1.5 }])).message).toMatch(/"amount"/);
    expect((await importError([{ ...good(), amount: "99999999999999999999" }])).message).toMatch(
      /from 0 to 10000000000000000 \(\$10,000,000,000\)$/,
    );
    expect((await importError([{ ...good(), block_time: "yesterday" }])).message).toMatch(
      /"block_time" must be/,
    );
    expect((await importError([{ ...good(), chain: "ethereum" }])).message).toBe(
      'line 1: "chain" must be one of "base", "polygon", "arbitrum", "solana"',
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

  it("keeps a payment's builder codes and refuses any outside the spec's alphabet", async () => {
    const codes = {
      builder_app: "shop_app",
      builder_wallet: "x402_merchants",
      builder_services: "agent,cdp_sdk",
    };
    analytics = await tempAnalytics();
    await importNdjson(analytics, ndjsonFile([{ ...good(), ...codes }]));
    expect(await analytics.all("SELECT builder_app, builder_wallet, builder_services FROM payments")).toEqual(
      [codes],
    );
    analytics.close();
    expect((await importError([{ ...good(), builder_app: "Shop" }])).message).toBe(
      'line 1: "builder_app" must be a builder code: 1 to 32 lower-case letters, digits or _',
    );
    expect((await importError([{ ...good(), builder_wallet: "x".repeat(33) }])).message).toMatch(
      /"builder_wallet" must be a builder code/,
    );
    expect((await importError([{ ...good(), builder_services: "agent,,x" }])).message).toMatch(
      /"builder_services" must be builder codes .* separated by commas/,
    );
  });

  it("rejects the same payment twice with different fields, naming the second line and what differs", async () => {
    const p = good();
    expect((await importError([p, good(), { ...p, amount: "2" }])).message).toBe(
      `line 3: payment ${p.tx_hash} log 0 appears earlier in the file (line 1) with different fields: amount 1000 there, 2 here`,
    );
    const other = { ...p, payer: addr("other"), scheme: "exact" };
    expect((await importError([p, "", other])).message).toBe(
      `line 3: payment ${p.tx_hash} log 0 appears earlier in the file (line 1) with different fields: ` +
        `payer ${p.payer} there, ${addr("other")} here; scheme none there, exact here`,
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
      { type: "merchant", address: addr("m2"), held: true },
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
      /^\/nonexistent\/file.ndjson: cannot read it \(ENOENT/,
    );
  });
});

describe("amounts", () => {
  it("takes up to MAX_USDC_AMOUNT (10^16 atomic units) in a payment or a transfer and refuses more", async () => {
    analytics = await tempAnalytics();
    const most = String(MAX_USDC_AMOUNT);
    await importNdjson(
      analytics,
      ndjsonFile([
        { ...good(), amount: most },
        { ...transfer(addr("m"), addr("p"), 1), amount: most },
      ]),
    );
    expect(await analytics.all("SELECT amount FROM payments UNION ALL SELECT amount FROM transfers")).toEqual(
      [{ amount: MAX_USDC_AMOUNT }, { amount: MAX_USDC_AMOUNT }],
    );
    analytics.close();
    const above = String(MAX_USDC_AMOUNT + 1n);
    const refusal = /^line 2: "amount" must be a whole number of atomic units .* from 0 to 10000000000000000/;
    expect((await importError([good(), { ...good(), amount: above }])).message).toMatch(refusal);
    expect(
      (await importError([good(), { ...transfer(addr("m"), addr("p"), 1), amount: above }])).message,
    ).toMatch(refusal);
    // Two of these made every later report fail (their sum is past 2^63).
    expect((await importError([good(), { ...good(), amount: String(2n ** 63n - 1n) }])).message).toMatch(
      refusal,
    );
  });
});

/** Several threads, as in production: DuckDB reads a file in parallel then, and one thread hides faults. */
const parallelAnalytics = async (dataDir = removedTempDir("x402m-analytics-")) =>
  Analytics.open({ dataDir: await emptyStoreAt(dataDir), memoryLimit: "1GB", threads: 4 });

/**
 * DuckDB reads an NDJSON file in pieces of 16 MiB (read_json's maximum_object_size, which can be raised but
 * not lowered), several at once, and a table filled from them can hold the pieces out of file order: a
 * record's number must hold past the first piece. Lines of 2 KiB, white space inside the object (valid JSON,
 * one line in an editor), span as many pieces with a sixth of the records that 350-byte lines need. Four
 * pieces and a short fifth, whose thread tends to finish first: the file order is then the least likely one.
 */
const PIECE = 16 * 2 ** 20;
const padded = (record: object) => {
  const json = JSON.stringify(record);
  return `{${" ".repeat(Math.max(0, 2048 - json.length))}${json.slice(1)}`;
};

describe("line numbers", () => {
  it("names the line of a bad row deep in a file of five pieces, the same on every run", async () => {
    // Blank and white-space lines and CRLF endings among them: the line is the one an editor shows.
    const lines: string[] = [];
    for (let i = 0; i < 34_000; i++) {
      if (i % 4_250 === 7) lines.push(i % 8_500 === 7 ? "" : "  \t");
      const p = payment({
        payer: addr(`p${i % 997}`),
        payTo: addr(`m${i % 31}`),
        amount: 1_000 + i,
        block: START + 1 + (i % 21_250),
      });
      lines.push(padded(i === 25_500 ? { ...p, pay_to: "0x12" } : p));
    }
    const bad = lines.findIndex((l) => l.includes('"pay_to":"0x12"')) + 1;
    const dir = removedTempDir("x402m-lines-");
    const file = path.join(dir, "big.ndjson");
    const text = `${lines.slice(0, 1_000).join("\r\n")}\r\n${lines.slice(1_000).join("\n")}\n`;
    fs.writeFileSync(file, text);
    // The bad line in the fourth piece of five.
    expect(Math.floor(text.indexOf('"pay_to":"0x12"') / PIECE)).toBe(3);
    expect(Math.ceil(text.length / PIECE)).toBe(5);
    analytics = await parallelAnalytics(path.join(dir, "data"));
    for (let run = 0; run < 3; run++) {
      const error = await importNdjson(analytics, file).then(
        () => undefined,
        (e: unknown) => e as ImportError,
      );
      expect(error?.message).toBe(
        `${file}:${bad}: "pay_to" must be an address: 0x followed by 40 hex digits (on Solana: a base58 public key)`,
      );
      expect(await counts(analytics)).toEqual({
        payments: 0n,
        transfers: 0n,
        listings: 0n,
        merchants: 0n,
        checkpoints: 0n,
        balances: 0n,
      });
    }
    fs.rmSync(file);
  }, 300_000);

  it("names the line of an object with a key twice, which only DuckDB refuses", async () => {
    const twice = JSON.stringify(good()).replace('"type":"payment",', '"type":"payment","type":"payment",');
    expect((await importError([good(), "", "  ", twice, good()])).message).toMatch(
      /^line 4: not valid NDJSON \(.*duplicate key "type"\)$/,
    );
  });

  it("keeps the last line of a repeated listing, merchant or checkpoint, in file order", async () => {
    // Listings among 34,000 payments, so that the file is read in parallel pieces.
    const lines: (object | string)[] = [];
    for (let i = 0; i < 34_000; i++) {
      lines.push(
        padded(payment({ payer: addr(`p${i % 97}`), payTo: addr("m"), amount: 1_000, block: START + 1 + i })),
      );
      if (i % 170 === 169) {
        lines.push({
          type: "listing",
          pay_to: addr("m"),
          resource: "https://a.example/x",
          price_usd: i,
          description: "d",
        });
        lines.push({ type: "merchant", address: addr("m"), name: `v${i}.example` });
      }
    }
    const file = ndjsonFile(lines);
    expect(Math.ceil(fs.statSync(file).size / PIECE)).toBe(5);
    analytics = await parallelAnalytics();
    await importNdjson(analytics, file);
    expect(await analytics.one("SELECT price_usd FROM listings")).toEqual({ price_usd: 33_999 });
    expect(await analytics.one("SELECT name FROM merchants")).toEqual({ name: "v33999.example" });
    fs.rmSync(file);
  }, 120_000);
});

describe("a UTF-8 byte-order mark", () => {
  const bomFile = (records: (object | string)[]) => {
    const file = ndjsonFile(records);
    fs.writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), fs.readFileSync(file)]));
    return file;
  };

  it("is read as the same file without it, and its copy is removed", async () => {
    const records = [
      { type: "merchant", address: addr("m"), name: "a.example" },
      good(),
      transfer(addr("m"), addr("p"), 5),
      checkpoint(),
    ];
    analytics = await parallelAnalytics();
    const counts = await importNdjson(analytics, bomFile(records));
    expect(counts.merchant).toEqual({ read: 1, added: 1 });
    expect(counts.payment).toEqual({ read: 1, added: 1 });
    expect(await analytics.one("SELECT name FROM merchants WHERE address = $1", [addr("m")])).toEqual({
      name: "a.example",
    });
    expect(fs.readdirSync(analytics.dataDir).filter((f) => f.startsWith("import-"))).toEqual([]);
  });

  it("does not move line numbers, and messages name the file given", async () => {
    analytics = await parallelAnalytics();
    const file = bomFile([good(), "", { ...good(), payer: "0x12" }]);
    await expect(importNdjson(analytics, file)).rejects.toThrow(`${file}:3: "payer" must be an address`);
    const broken = bomFile(['{"type": "payment"', good()]);
    await expect(importNdjson(analytics, broken)).rejects.toThrow(`${broken}:1: not valid JSON`);
  });
});

describe("text that is not UTF-8", () => {
  it("is refused naming its own line, not DuckDB's count, and nothing is kept", async () => {
    analytics = await parallelAnalytics();
    const file = ndjsonFile([good(), "", { ...good(), payer: "LATIN1" }, good()]);
    const text = fs.readFileSync(file);
    const at = text.indexOf("LATIN1");
    // "0xééé" as Latin-1 writes it: bytes no UTF-8 text holds.
    fs.writeFileSync(
      file,
      Buffer.concat([
        text.subarray(0, at),
        Buffer.from([0x30, 0x78, 0xe9, 0xe9, 0xe9, 0x31]),
        text.subarray(at + 6),
      ]),
    );
    await expect(importNdjson(analytics, file)).rejects.toThrow(
      `${file}:3: not UTF-8 text (save the file as UTF-8)`,
    );
    expect(await analytics.one("SELECT count(*) AS n FROM payments")).toEqual({ n: 0n });
  });
});

describe("block times", () => {
  const at = (block: number, time: number | string = timeOf(block)) => ({
    ...payment({ payer: addr("p"), payTo: addr("m"), amount: 1, block }),
    block_time: time,
  });
  const rule = (line: number, block: number, time: number, anchor: number, where: string) =>
    `line ${line}: block ${block} has time ${time}, but Base's 2 s rule from block ${anchor} (time ${timeOf(anchor)}) ` +
    `gives ${timeOf(block)} (block ${anchor} is ${where})`;

  it("refuses two times for one block, naming the later line", async () => {
    const b = END - 1000;
    expect((await importError([at(b), checkpoint(), at(b, timeOf(b) + 2)])).message).toBe(
      rule(3, b, timeOf(b) + 2, b, "on line 1"),
    );
  });

  it("refuses times that break the 2 s rule, in payments, transfers and checkpoints", async () => {
    const b = END - 1000;
    expect((await importError([at(b), at(b + 1, timeOf(b) + 1)])).message).toBe(
      rule(2, b + 1, timeOf(b) + 1, b, "on line 1"),
    );
    const late = { ...transfer(addr("m"), addr("p"), 5, b + 10), block_time: timeOf(b + 10) + 60 };
    expect((await importError([at(b), late])).message).toBe(
      rule(2, b + 10, timeOf(b + 10) + 60, b, "on line 1"),
    );
    expect((await importError([at(b), { ...checkpoint(), block_time: timeOf(END) - 2 }])).message).toBe(
      rule(2, END, timeOf(END) - 2, b, "on line 1"),
    );
    // ISO 8601 with an offset is the same instant as unix seconds.
    const iso = new Date(timeOf(b + 5) * 1000).toISOString().replace("Z", "+00:00");
    analytics = await tempAnalytics();
    expect((await importNdjson(analytics, ndjsonFile([at(b), at(b + 5, iso)]))).payment.added).toBe(2);
  });

  it("takes Base Mainnet's blocks across Denim at their 200 ms times, and refuses one still on 2 s", async () => {
    const denim = (block: number, time = BASE_MAINNET_CLOCK.timeOf(block)) => ({
      ...payment({ payer: addr("p"), payTo: addr("m"), amount: 1, block }),
      block_time: time,
    });
    const blocks = [BASE_DENIM_BLOCK - 1, BASE_DENIM_BLOCK, BASE_DENIM_BLOCK + 4, BASE_DENIM_BLOCK + 5];
    analytics = await tempAnalytics();
    expect((await importNdjson(analytics, ndjsonFile(blocks.map((b) => denim(b))))).payment.added).toBe(4);
    const stale = BASE_DENIM_BLOCK + 10;
    expect(
      (
        await importError([
          denim(BASE_DENIM_BLOCK - 1),
          denim(stale, BASE_MAINNET_CLOCK.timeOf(BASE_DENIM_BLOCK - 1) + 22),
        ])
      ).message,
    ).toBe(
      `line 2: block ${stale} has time ${BASE_MAINNET_CLOCK.timeOf(BASE_DENIM_BLOCK - 1) + 22}, but Base's 2 s rule from block 0 ` +
        `(time ${BASE_GENESIS_TIME}), then 200 ms a block from block ${BASE_DENIM_BLOCK} gives ${BASE_MAINNET_CLOCK.timeOf(stale)} ` +
        `(block ${BASE_DENIM_BLOCK - 1} is on line 1)`,
    );
  });

  it("refuses times that disagree with the blocks already stored, in payments or transfers", async () => {
    for (const first of [at(END - 5000), transfer(addr("m"), addr("p"), 5, END - 5000)]) {
      analytics = await tempAnalytics();
      await importNdjson(analytics, ndjsonFile([first]));
      const before = await counts(analytics);
      const off = at(END - 100, timeOf(END - 100) + 3_600);
      const error = (await importNdjson(analytics, ndjsonFile([good(), off])).catch(
        (e: unknown) => e,
      )) as ImportError;
      expect(error).toBeInstanceOf(ImportError);
      expect(`line ${error.line}: ${error.reason}`).toBe(
        rule(2, END - 100, timeOf(END - 100) + 3_600, END - 5000, "in the analytics database"),
      );
      expect(await counts(analytics)).toEqual(before);
      // The same blocks at their right times go in.
      expect((await importNdjson(analytics, ndjsonFile([good(), at(END - 100)]))).payment.added).toBe(2);
      analytics.close();
    }
  });
});
