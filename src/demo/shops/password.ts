import { randomInt } from "node:crypto";
import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";
import { queryFlag, queryInt } from "./common.ts";

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
const SYMBOLS = "!#$%&*+-=?@^_~";

const PasswordInput = z.object({
  length: queryInt(8, 128).default(20).describe("Characters per password, 8-128. Default 20."),
  count: queryInt(1, 10).default(1).describe("How many passwords, 1-10. Default 1."),
  digits: queryFlag().default(true).describe("Include digits 0-9: true or false. Default true."),
  symbols: queryFlag().default(true).describe(`Include the symbols ${SYMBOLS}: true or false. Default true.`),
});

const PasswordOutput = z.object({
  passwords: z.array(z.string()),
  alphabet_size: z.number().int().describe("How many distinct characters each position is drawn from."),
  entropy_bits: z.number().describe("length × log2(alphabet_size), rounded to 1 decimal."),
});

/** The alphabet, and a password drawing uniformly from it with at least one character of every class. */
export function makePassword(length: number, classes: readonly string[]): string {
  const alphabet = classes.join("");
  const chars = classes.map((c) => c[randomInt(c.length)] as string);
  while (chars.length < length) chars.push(alphabet[randomInt(alphabet.length)] as string);
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j] as string, chars[i] as string];
  }
  return chars.join("");
}

export const password = defineEndpoint({
  method: "GET",
  path: "/password",
  price: "0.003",
  description:
    "Strong random passwords (letters, optionally digits and symbols, at least one of each class) from a cryptographic source, with their entropy.",
  input: PasswordInput,
  output: PasswordOutput,
  example: {
    input: { length: "16", symbols: "false" },
    output: { passwords: ["q7GmT2vXbN4kLp9R"], alphabet_size: 62, entropy_bits: 95.3 },
  },
  handler: async (q) => {
    const classes = [LOWER, UPPER, ...(q.digits ? [DIGITS] : []), ...(q.symbols ? [SYMBOLS] : [])];
    const size = classes.join("").length;
    return {
      passwords: Array.from({ length: q.count }, () => makePassword(q.length, classes)),
      alphabet_size: size,
      entropy_bits: Math.round(q.length * Math.log2(size) * 10) / 10,
    };
  },
});
