import { z } from "zod";
import { BadInputError } from "../../common/errors.ts";
import { defineEndpoint } from "../../merchant-kit/index.ts";
import { queryInt } from "./common.ts";

const TABLE: readonly [number, string][] = [
  [1000, "M"],
  [900, "CM"],
  [500, "D"],
  [400, "CD"],
  [100, "C"],
  [90, "XC"],
  [50, "L"],
  [40, "XL"],
  [10, "X"],
  [9, "IX"],
  [5, "V"],
  [4, "IV"],
  [1, "I"],
];

export function toRoman(n: number): string {
  let rest = n;
  let out = "";
  for (const [value, symbol] of TABLE) {
    while (rest >= value) {
      out += symbol;
      rest -= value;
    }
  }
  return out;
}

const VALUE: Record<string, number> = { I: 1, V: 5, X: 10, L: 50, C: 100, D: 500, M: 1000 };

/** Reads a numeral in the standard subtractive form only: "IIII" or "IC" are refused. */
export function fromRoman(numeral: string): number {
  const s = numeral.toUpperCase();
  let total = 0;
  for (let i = 0; i < s.length; i++) {
    const v = VALUE[s[i] as string] ?? 0;
    const next = VALUE[s[i + 1] as string] ?? 0;
    total += v < next ? -v : v;
  }
  if (total < 1 || total > 3999 || toRoman(total) !== s) {
    throw new BadInputError(`"${numeral}" is not a standard Roman numeral`, "bad_numeral");
  }
  return total;
}

const Pair = z.object({ number: z.number().int(), roman: z.string() });

export const toRomanEndpoint = defineEndpoint({
  method: "GET",
  path: "/to-roman",
  price: "0.001",
  description: "Writes a whole number from 1 to 3999 as a Roman numeral (1994 is MCMXCIV).",
  input: z.object({ number: queryInt(1, 3999).describe("A whole number from 1 to 3999.") }),
  output: Pair,
  example: { input: { number: "1994" }, output: { number: 1994, roman: "MCMXCIV" } },
  handler: async (q) => ({ number: q.number, roman: toRoman(q.number) }),
});

export const fromRomanEndpoint = defineEndpoint({
  method: "GET",
  path: "/from-roman",
  price: "0.001",
  description: "Reads a Roman numeral (standard form, I to MMMCMXCIX) as a number.",
  input: z.object({
    roman: z
      .string()
      .trim()
      .min(1)
      .max(15)
      .regex(/^[IVXLCDM]+$/i, "only the letters I V X L C D M")
      .describe("A Roman numeral, e.g. MCMXCIV; case-insensitive."),
  }),
  output: Pair,
  example: { input: { roman: "MCMXCIV" }, output: { number: 1994, roman: "MCMXCIV" } },
  errors: {
    400: "Letters that are no standard Roman numeral (bad_numeral), found once the payment is verified.",
  },
  handler: async (q) => ({ number: fromRoman(q.roman), roman: q.roman.toUpperCase() }),
});
