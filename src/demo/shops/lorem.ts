import { createHash } from "node:crypto";
import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";
import { queryInt } from "./common.ts";

const WORDS = (
  "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore " +
  "magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo " +
  "consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint " +
  "occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum"
).split(" ");

const LoremInput = z.object({
  paragraphs: queryInt(1, 10).default(1).describe("Paragraphs, 1-10. Default 1."),
  sentences: queryInt(1, 12).default(4).describe("Sentences per paragraph, 1-12. Default 4."),
  seed: z.string().min(1).max(100).default("lorem").describe('Same seed, same text. Default "lorem".'),
});

const LoremOutput = z.object({
  paragraphs: z.array(z.string()),
  words: z.number().int().describe("Total words."),
});

/** mulberry32: a small deterministic generator, seeded from the SHA-256 of the seed. */
function generator(seed: string): () => number {
  let a = createHash("sha256").update(seed).digest().readUInt32BE(0);
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function lorem(paragraphs: number, sentences: number, seed: string): z.output<typeof LoremOutput> {
  const rand = generator(seed);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)] as string;
  const out: string[] = [];
  let total = 0;
  for (let p = 0; p < paragraphs; p++) {
    const ss: string[] = [];
    for (let s = 0; s < sentences; s++) {
      const n = 6 + Math.floor(rand() * 9);
      const words = p === 0 && s === 0 ? ["lorem", "ipsum", "dolor", "sit", "amet"] : [];
      while (words.length < n) words.push(pick());
      if (words.length > 8 && rand() < 0.5) words[3] = `${words[3]},`;
      total += words.length;
      const sentence = words.join(" ");
      ss.push(`${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`);
    }
    out.push(ss.join(" "));
  }
  return { paragraphs: out, words: total };
}

export const loremEndpoint = defineEndpoint({
  method: "GET",
  path: "/lorem",
  price: "0.003",
  description:
    "Lorem ipsum placeholder text: 1-10 paragraphs of 1-12 sentences, reproducible from a seed, starting with 'Lorem ipsum dolor sit amet'.",
  input: LoremInput,
  output: LoremOutput,
  example: {
    input: { paragraphs: "1", sentences: "2" },
    output: lorem(1, 2, "lorem"),
  },
  handler: async (q) => lorem(q.paragraphs, q.sentences, q.seed),
});
