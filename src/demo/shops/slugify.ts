import { z } from "zod";
import { BadInputError } from "../../common/errors.ts";
import { defineEndpoint } from "../../merchant-kit/index.ts";
import { queryInt } from "./common.ts";

const SlugInput = z.object({
  text: z
    .string()
    .min(1)
    .max(1_000)
    .describe("The title or phrase to turn into a slug, up to 1,000 characters."),
  separator: z.enum(["-", "_"]).default("-").describe('Word separator: "-" (default) or "_".'),
  max_length: queryInt(1, 200)
    .default(80)
    .describe("Longest slug, 1-200 characters; cut at a word boundary when possible. Default 80."),
});

const SlugOutput = z.object({
  slug: z.string().describe("Lower-case ASCII letters and digits joined by the separator."),
  length: z.number().int(),
});

export function slugify(text: string, separator = "-", maxLength = 80): string {
  const words = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/ß/g, "ss")
    .replace(/&/g, " and ")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let slug = "";
  for (const word of words) {
    const next = slug ? `${slug}${separator}${word}` : word;
    if (next.length > maxLength) {
      if (!slug) slug = word.slice(0, maxLength);
      break;
    }
    slug = next;
  }
  return slug;
}

export const slug = defineEndpoint({
  method: "GET",
  path: "/slugify",
  price: "0.001",
  description:
    "Turns a title into a URL slug: accents removed, lower-case ASCII words joined by - or _, cut at a word boundary.",
  input: SlugInput,
  output: SlugOutput,
  example: {
    input: { text: "Héllo, Wörld & Friends: 2024 Edition!" },
    output: { slug: "hello-world-and-friends-2024-edition", length: 36 },
  },
  errors: {
    400: "A text with no letter or digit to make a slug from (bad_request), found once the payment is verified.",
  },
  handler: async (q) => {
    const s = slugify(q.text, q.separator, q.max_length);
    if (!s) throw new BadInputError("the text has no letters or digits to make a slug from");
    return { slug: s, length: s.length };
  },
});
