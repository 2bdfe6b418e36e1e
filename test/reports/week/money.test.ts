import { DuckDBInstance } from "@duckdb/node-api";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlHost } from "../../../src/analytics/sql-host.ts";
import { sqlCleanText, sqlCutDescription } from "../../../src/reports/week/listings.ts";
import {
  sqlApportionedCents,
  sqlCents,
  sqlRatio,
  sqlUsd,
  sqlUsd6,
  sqlUsdText,
} from "../../../src/reports/week/money.ts";
import { sqlRank } from "../../../src/reports/week/rank.ts";

// The report is assembled in SQL: its building blocks are checked in an in-memory DuckDB.
let db: DuckDBInstance;
beforeAll(async () => {
  db = await DuckDBInstance.create(":memory:");
});
afterAll(() => db.closeSync());

async function value(expression: string, params: Record<string, string | number> = {}): Promise<unknown> {
  const connection = await db.connect();
  try {
    const reader = await connection.runAndReadAll(`SELECT ${expression} AS v`, params);
    return reader.getRowObjectsJS()[0]?.v;
  } finally {
    connection.closeSync();
  }
}

const cut = (text: string) => value(sqlCutDescription(`(${sqlCleanText("$text::VARCHAR")})`), { text });

describe("money", () => {
  it("apportions cents by largest remainder so that the rows add up to their rounded total", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 3_000_000 }), { minLength: 1, maxLength: 12 }),
        async (amounts) => {
          const connection = await db.connect();
          try {
            const rows = amounts.map((a, i) => `(${i}, ${a})`).join(", ");
            const cents = sqlApportionedCents({
              amount: "amount",
              totalCents: sqlCents("sum(amount) OVER ()"),
              partition: "1",
              tieBreak: "i",
            });
            const reader = await connection.runAndReadAll(
              `SELECT i, amount, ${cents} AS c FROM (VALUES ${rows}) t(i, amount) ORDER BY i`,
            );
            const got = reader.getRowObjectsJS().map((r) => Number(r.c));
            const total = amounts.reduce((s, a) => s + a, 0);
            expect(got.reduce((s, c) => s + c, 0)).toBe(Math.floor((total + 5_000) / 10_000));
            // Each row is its amount rounded down or up, never further off.
            for (const [k, a] of amounts.entries())
              expect([Math.floor(a / 10_000), Math.ceil(a / 10_000)]).toContain(got[k]);
          } finally {
            connection.closeSync();
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("rounds atomic units to cents half up", async () => {
    expect(await value(sqlCents("4999"))).toBe(0n);
    expect(await value(sqlCents("5000"))).toBe(1n);
    expect(await value(sqlUsd(sqlCents("1234565000::BIGINT")))).toBe(1234.57);
  });

  it("writes dollars with two decimals, as JavaScript's toFixed(2) does", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 10 ** 12 }), async (cents) => {
        expect(await value(sqlUsdText(`${cents}::BIGINT`))).toBe((cents / 100).toFixed(2));
      }),
      { numRuns: 50 },
    );
  });

  it("rounds paid figures to USDC precision", async () => {
    expect(await value(sqlUsd6("1500.5::DOUBLE"))).toBe(0.001501);
    expect(await value(sqlUsd6("0::DOUBLE"))).toBe(0);
  });

  it("rounds ratios half up exactly and treats an empty whole as 0", async () => {
    expect(await value(sqlRatio("1", "3", 4))).toBe(0.3333);
    expect(await value(sqlRatio("2", "3", 4))).toBe(0.6667);
    expect(await value(sqlRatio("1", "8", 2))).toBe(0.13);
    expect(await value(sqlRatio("1", "0", 4))).toBe(0);
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: 1n, max: 10n ** 15n }),
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        async (whole, p) => {
          const part = p % (whole + 1n);
          const expected = Number((part * 20_000n + whole) / (whole * 2n)) / 10_000;
          expect(await value(sqlRatio(`${part}::BIGINT`, `${whole}::BIGINT`, 4))).toBe(expected);
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe("descriptions", () => {
  it("leaves short text alone and collapses white space, Unicode spaces too", async () => {
    expect(await cut("  a   b\n c ")).toBe("a b c");
    expect(await cut("a\u00a0\u2003b\u3000c")).toBe("a b c");
  });

  it("cuts at a word boundary near the limit", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 30, maxLength: 80 }),
        async (words) => {
          const text = words.join(" ");
          const result = (await cut(text)) as string;
          if (text.length <= 240) {
            expect(result).toBe(text);
            return;
          }
          expect(result.endsWith("…")).toBe(true);
          expect(result.length).toBeLessThanOrEqual(241);
          expect(result.length).toBeGreaterThan(160);
          expect(text.startsWith(result.slice(0, -1))).toBe(true);
          expect(text[result.length - 1]).toBe(" ");
        },
      ),
      { numRuns: 60 },
    );
  });

  it("drops punctuation before the mark and cuts a single endless word hard", async () => {
    expect(await cut(`${"word ".repeat(40)}end, ${"x".repeat(60)}`)).toBe(`${"word ".repeat(40)}end…`);
    expect(await cut("x".repeat(500))).toBe(`${"x".repeat(239)}…`);
  });
});

describe("listing hosts", () => {
  it("reads the host of a URL, without user, port or path, in lower case", async () => {
    const host = (url: string) => value(sqlHost("$url::VARCHAR"), { url });
    expect(await host("https://API.Example.com/v1?q=1")).toBe("api.example.com");
    expect(await host("http://user:pw@shop.example:8080/x")).toBe("shop.example");
    expect(await host("http://[::1]:3000/")).toBe("[::1]");
  });
});

describe("rank", () => {
  it("shares a rank between equal revenues and leaves held and sub-cent merchants unranked", async () => {
    const connection = await db.connect();
    try {
      const reader = await connection.runAndReadAll(
        `SELECT address, ${sqlRank()} AS rank FROM (VALUES ('a', 50000, false), ('b', 90000, false),
          ('c', 50000, false), ('d', 5000, false), ('e', 4999, false), ('f', 0, false), ('g', 100000, true))
          m(address, real_amount, held) ORDER BY address`,
      );
      const ranks = Object.fromEntries(reader.getRowObjectsJS().map((r) => [r.address, r.rank]));
      expect(ranks).toEqual({ a: 2n, b: 1n, c: 2n, d: 4n, e: null, f: null, g: null });
    } finally {
      connection.closeSync();
    }
  });
});
