import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

const MAX = 999_999_999_999_999;

const ONES = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
  "thirteen",
  "fourteen",
  "fifteen",
  "sixteen",
  "seventeen",
  "eighteen",
  "nineteen",
];
const TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];
const SCALES = ["", "thousand", "million", "billion", "trillion"];

function underThousand(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const parts: string[] = [];
  if (hundreds) parts.push(`${ONES[hundreds]} hundred`);
  if (rest >= 20) parts.push(TENS[Math.floor(rest / 10)] + (rest % 10 ? `-${ONES[rest % 10]}` : ""));
  else if (rest) parts.push(ONES[rest] as string);
  return parts.join(" ");
}

/** A whole number in English words (short scale, American style: no "and"). */
export function numberToWords(n: number): string {
  if (n === 0) return "zero";
  if (n < 0) return `minus ${numberToWords(-n)}`;
  const groups: string[] = [];
  let rest = n;
  for (let i = 0; rest > 0; i++) {
    const g = rest % 1000;
    if (g) groups.unshift(SCALES[i] ? `${underThousand(g)} ${SCALES[i]}` : underThousand(g));
    rest = Math.floor(rest / 1000);
  }
  return groups.join(" ");
}

export const words = defineEndpoint({
  method: "GET",
  path: "/words",
  price: "0.005",
  description: "Spells a whole number in English words, e.g. 1234 is 'one thousand two hundred thirty-four'.",
  input: z.object({
    number: z
      .string()
      .trim()
      .regex(/^-?\d{1,15}$/, "a whole number, e.g. 1234")
      .transform(Number)
      .describe(`A whole number between -${MAX.toLocaleString("en-US")} and ${MAX.toLocaleString("en-US")}.`),
  }),
  output: z.object({ number: z.number().int(), words: z.string() }),
  example: {
    input: { number: "1234" },
    output: { number: 1234, words: "one thousand two hundred thirty-four" },
  },
  handler: async (q) => ({ number: q.number, words: numberToWords(q.number) }),
});
