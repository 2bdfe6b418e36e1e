import { describe, expect, it } from "vitest";
import { BadInputError } from "../../../src/common/errors.ts";
import { cardBrand, luhn, luhnCheckDigit } from "../../../src/demo/shops/luhn.ts";
import { numberToWords, words } from "../../../src/demo/shops/number-words.ts";
import { factor, factorize, isPrime } from "../../../src/demo/shops/primes.ts";
import { fromRoman, fromRomanEndpoint, toRoman, toRomanEndpoint } from "../../../src/demo/shops/roman.ts";
import { call } from "./helpers.ts";

describe("roman numerals", () => {
  it("converts both ways", async () => {
    expect(await call(toRomanEndpoint, { number: "1994" })).toEqual({ number: 1994, roman: "MCMXCIV" });
    expect(await call(fromRomanEndpoint, { roman: "mcmxciv" })).toEqual({ number: 1994, roman: "MCMXCIV" });
    expect(toRoman(3999)).toBe("MMMCMXCIX");
    for (let n = 1; n <= 3999; n++) expect(fromRoman(toRoman(n))).toBe(n);
  });

  it("refuses non-standard numerals and out-of-range numbers", async () => {
    expect(() => fromRoman("IIII")).toThrow(BadInputError);
    expect(() => fromRoman("IC")).toThrow(BadInputError);
    await expect(call(fromRomanEndpoint, { roman: "MMMM" })).rejects.toThrow(BadInputError);
    expect(fromRomanEndpoint.input.safeParse({ roman: "ABC" }).success).toBe(false);
    expect(toRomanEndpoint.input.safeParse({ number: "0" }).success).toBe(false);
    expect(toRomanEndpoint.input.safeParse({ number: "4000" }).success).toBe(false);
    expect(toRomanEndpoint.input.safeParse({ number: "1e3" }).success).toBe(false);
  });
});

describe("prime factory", () => {
  it("factors 360", async () => {
    expect(await call(factor, { n: "360" })).toMatchObject({
      is_prime: false,
      factorization: "2^3 × 3^2 × 5",
      divisor_count: 24,
    });
  });

  it("knows primes and factors large numbers up to 2^53", async () => {
    expect(isPrime(9007199254740881n)).toBe(true);
    expect(isPrime(9007199254740991n)).toBe(false);
    expect([...factorize(9007199254740991n)]).toEqual([
      [6361n, 1],
      [69431n, 1],
      [20394401n, 1],
    ]);
    // A product of two primes near 2^26.5: the hardest case.
    expect([...factorize(94906171n * 94906249n)]).toEqual([
      [94906171n, 1],
      [94906249n, 1],
    ]);
    expect(await call(factor, { n: String(2 ** 53) })).toMatchObject({
      factorization: "2^53",
      divisor_count: 54,
    });
    expect(await call(factor, { n: "9007199254740881" })).toMatchObject({ is_prime: true });
  });

  it("agrees with trial division on small numbers", () => {
    for (let n = 2; n < 3000; n++) {
      const product = [...factorize(BigInt(n))].reduce((acc, [p, e]) => acc * Number(p) ** e, 1);
      expect(product).toBe(n);
      let prime = true;
      for (let d = 2; d * d <= n; d++) if (n % d === 0) prime = false;
      expect(isPrime(BigInt(n))).toBe(prime);
    }
  });

  it("refuses out-of-range input", () => {
    for (const n of ["1", "0", "-5", "9007199254740993", "12345678901234567", "abc", "1.5"]) {
      expect(factor.input.safeParse({ n }).success).toBe(false);
    }
  });
});

describe("luhn", () => {
  it("accepts a valid card number and rejects a typo", async () => {
    expect(await call(luhn, { number: "4539 1488 0343 6467" })).toMatchObject({ valid: true, brand: "visa" });
    expect(await call(luhn, { number: "4539-1488-0343-6468" })).toMatchObject({
      valid: false,
      expected_check_digit: 7,
    });
    expect(luhnCheckDigit("7992739871")).toBe(3);
    expect(cardBrand("378282246310005")).toBe("amex");
    expect(cardBrand("5555555555554444")).toBe("mastercard");
  });

  it("refuses non-digits", () => {
    expect(luhn.input.safeParse({ number: "4111x" }).success).toBe(false);
    expect(luhn.input.safeParse({ number: "4" }).success).toBe(false);
  });
});

describe("number speller", () => {
  it("spells numbers", async () => {
    expect(numberToWords(0)).toBe("zero");
    expect(numberToWords(15)).toBe("fifteen");
    expect(numberToWords(100)).toBe("one hundred");
    expect(numberToWords(1_000_001)).toBe("one million one");
    expect(numberToWords(-42)).toBe("minus forty-two");
    expect(numberToWords(999_999_999_999_999)).toBe(
      "nine hundred ninety-nine trillion nine hundred ninety-nine billion nine hundred ninety-nine million nine hundred ninety-nine thousand nine hundred ninety-nine",
    );
    expect(await call(words, { number: "2024" })).toEqual({
      number: 2024,
      words: "two thousand twenty-four",
    });
  });

  it("refuses numbers too large or not whole", () => {
    expect(words.input.safeParse({ number: "1000000000000000" }).success).toBe(false);
    expect(words.input.safeParse({ number: "1.5" }).success).toBe(false);
  });
});
