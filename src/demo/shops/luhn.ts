import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

const LuhnInput = z.object({
  number: z
    .string()
    .trim()
    .max(40)
    .regex(/^[\d -]+$/, "digits only (spaces and dashes are ignored)")
    .transform((s) => s.replace(/[ -]/g, ""))
    .refine((s) => s.length >= 2 && s.length <= 32, "2 to 32 digits")
    .describe(
      "A card number, IMEI or other Luhn-checked number; spaces and dashes are ignored. 2-32 digits.",
    ),
});

const LuhnOutput = z.object({
  digits: z.string().describe("The number as checked, digits only."),
  valid: z.boolean().describe("Whether the last digit is the right Luhn check digit."),
  expected_check_digit: z.number().int().describe("The check digit the other digits call for."),
  brand: z
    .enum(["visa", "mastercard", "amex", "discover", "unknown"])
    .describe("Card network guessed from the prefix and length (no lookup)."),
});

/** The Luhn check digit for a payload (the number without its check digit). */
export function luhnCheckDigit(payload: string): number {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    let d = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export function cardBrand(digits: string): z.output<typeof LuhnOutput>["brand"] {
  const len = digits.length;
  const p2 = Number(digits.slice(0, 2));
  const p4 = Number(digits.slice(0, 4));
  if (digits.startsWith("4") && [13, 16, 19].includes(len)) return "visa";
  if (len === 16 && ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720))) return "mastercard";
  if (len === 15 && (p2 === 34 || p2 === 37)) return "amex";
  if ((len === 16 || len === 19) && (digits.startsWith("6011") || p2 === 65)) return "discover";
  return "unknown";
}

export const luhn = defineEndpoint({
  method: "GET",
  path: "/luhn",
  price: "0.002",
  description:
    "Checks a card number (or any Luhn-checked number) with the Luhn algorithm, gives the expected check digit and guesses the card network.",
  input: LuhnInput,
  output: LuhnOutput,
  example: {
    input: { number: "4111 1111 1111 1111" },
    output: { digits: "4111111111111111", valid: true, expected_check_digit: 1, brand: "visa" },
  },
  handler: async (q) => {
    const expected = luhnCheckDigit(q.number.slice(0, -1));
    return {
      digits: q.number,
      valid: expected === Number(q.number.slice(-1)),
      expected_check_digit: expected,
      brand: cardBrand(q.number),
    };
  },
});
