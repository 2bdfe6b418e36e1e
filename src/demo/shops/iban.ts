import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

/** IBAN length per country (ISO 13616 registry), for the countries most often seen. */
export const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  TN: 24,
  TR: 26,
  UA: 29,
  VG: 24,
  XK: 20,
};

const IbanInput = z.object({
  iban: z
    .string()
    .trim()
    .max(50)
    .regex(/^[A-Za-z0-9 ]+$/, "letters, digits and spaces only")
    .describe("The IBAN, with or without spaces, e.g. GB82 WEST 1234 5698 7654 32."),
});

const IbanOutput = z.object({
  iban: z.string().describe("Electronic form: upper-case, no spaces."),
  formatted: z.string().describe("Print form: groups of four."),
  valid: z.boolean(),
  reason: z.string().nullable().describe("Why it is not valid, or null."),
  country: z.string(),
  check_digits: z.string(),
  bban: z.string().describe("The domestic account number part."),
});

/** The ISO 7064 mod 97-10 remainder of an IBAN (1 for a valid one). */
export function ibanRemainder(iban: string): number {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let rem = 0;
  for (const ch of rearranged) {
    const v = ch >= "A" && ch <= "Z" ? String(ch.charCodeAt(0) - 55) : ch;
    for (const d of v) rem = (rem * 10 + Number(d)) % 97;
  }
  return rem;
}

export function checkIban(input: string): z.output<typeof IbanOutput> {
  const iban = input.replace(/\s+/g, "").toUpperCase();
  const country = iban.slice(0, 2);
  const expected = IBAN_LENGTHS[country];
  let reason: string | null = null;
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban))
    reason = "an IBAN starts with a country code and two check digits";
  else if (expected === undefined) reason = `unknown IBAN country ${country}`;
  else if (iban.length !== expected)
    reason = `${country} IBANs have ${expected} characters, not ${iban.length}`;
  else if (ibanRemainder(iban) !== 1) reason = "the check digits do not match (mod 97)";
  return {
    iban,
    formatted: iban.replace(/(.{4})/g, "$1 ").trim(),
    valid: reason === null,
    reason,
    country,
    check_digits: iban.slice(2, 4),
    bban: iban.slice(4),
  };
}

export const iban = defineEndpoint({
  method: "GET",
  path: "/iban",
  price: "0.02",
  description:
    "Validates an IBAN: country, length and the mod 97 check digits, and gives its electronic and print forms.",
  input: IbanInput,
  output: IbanOutput,
  example: {
    input: { iban: "GB82 WEST 1234 5698 7654 32" },
    output: {
      iban: "GB82WEST12345698765432",
      formatted: "GB82 WEST 1234 5698 7654 32",
      valid: true,
      reason: null,
      country: "GB",
      check_digits: "82",
      bban: "WEST12345698765432",
    },
  },
  handler: async (q) => checkIban(q.iban),
});
