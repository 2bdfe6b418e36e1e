import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cutDescription } from "../../src/reports/listings.ts";
import { apportionCents, ratio, toCents, usd2 } from "../../src/reports/money.ts";
import { rankByRealRevenue } from "../../src/reports/rank.ts";

describe("money", () => {
  it("rounds atomic units to cents half up", () => {
    expect(toCents(4_999n)).toBe(0n);
    expect(toCents(5_000n)).toBe(1n);
    expect(usd2(1_234_565_000n)).toBe(1234.57);
  });

  it("rounds ratios half up and treats an empty whole as 0", () => {
    expect(ratio(1n, 3n, 4)).toBe(0.3333);
    expect(ratio(2n, 3n, 4)).toBe(0.6667);
    expect(ratio(1n, 0n, 4)).toBe(0);
  });

  it("apportions cents so the parts always add up to usd minus real_usd", () => {
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 0n, max: 10n ** 12n }), { maxLength: 8 }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        (parts, real) => {
          const total = parts.reduce((a, b) => a + b, real);
          const cents = apportionCents(parts, toCents(total) - toCents(real));
          expect(cents.reduce((a, b) => a + b, 0n)).toBe(toCents(total) - toCents(real));
          for (const [i, c] of cents.entries()) {
            expect(c).toBeGreaterThanOrEqual(0n);
            expect(c * 10_000n - (parts[i] ?? 0n)).toBeLessThan(10_000n);
          }
        },
      ),
    );
  });
});

describe("descriptions", () => {
  it("leaves short text alone and collapses white space", () => {
    expect(cutDescription("  a   b\n c ")).toBe("a b c");
  });

  it("cuts at a word boundary near the limit", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 30, maxLength: 80 }), (words) => {
        const text = words.join(" ");
        const cut = cutDescription(text);
        if (text.length <= 240) {
          expect(cut).toBe(text);
          return;
        }
        expect(cut.endsWith("…")).toBe(true);
        expect(cut.length).toBeLessThanOrEqual(241);
        expect(cut.length).toBeGreaterThan(160);
        expect(text.startsWith(cut.slice(0, -1))).toBe(true);
        expect(text[cut.length - 1]).toBe(" ");
      }),
    );
  });

  it("cuts a single endless word hard", () => {
    expect(cutDescription("x".repeat(500))).toBe(`${"x".repeat(239)}…`);
  });
});

describe("rank", () => {
  it("shares a rank between equal revenues", () => {
    const ranks = rankByRealRevenue([
      { address: "a", realAmount: 50_000n, frozen: false },
      { address: "b", realAmount: 90_000n, frozen: false },
      { address: "c", realAmount: 50_000n, frozen: false },
      { address: "d", realAmount: 5_000n, frozen: false },
      { address: "e", realAmount: 4_999n, frozen: false },
      { address: "f", realAmount: 0n, frozen: false },
      { address: "g", realAmount: 100_000n, frozen: true },
    ]);
    expect(Object.fromEntries(ranks)).toEqual({ b: 1, a: 2, c: 2, d: 4, e: null, f: null, g: null });
  });
});
