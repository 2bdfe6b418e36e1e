import { createHash } from "node:crypto";
import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

/** Traditional proverbs, all in the public domain. */
export const PROVERBS: readonly string[] = [
  "A journey of a thousand miles begins with a single step.",
  "Fortune favours the bold.",
  "Still waters run deep.",
  "Actions speak louder than words.",
  "The early bird catches the worm.",
  "Where there's a will, there's a way.",
  "A rolling stone gathers no moss.",
  "Many hands make light work.",
  "Rome was not built in a day.",
  "Every cloud has a silver lining.",
  "Better late than never.",
  "Look before you leap.",
  "Slow and steady wins the race.",
  "When in Rome, do as the Romans do.",
  "Necessity is the mother of invention.",
  "The pen is mightier than the sword.",
  "Practice makes perfect.",
  "Patience is a virtue.",
  "Fall seven times, stand up eight.",
  "A friend in need is a friend indeed.",
  "Knowledge is power.",
  "Time and tide wait for no man.",
  "Two heads are better than one.",
  "Honesty is the best policy.",
  "An apple a day keeps the doctor away.",
  "Don't count your chickens before they hatch.",
  "Great oaks from little acorns grow.",
  "He who hesitates is lost.",
  "It is better to light a candle than to curse the darkness.",
  "Birds of a feather flock together.",
  "Make hay while the sun shines.",
  "The best things in life are free.",
  "Hope for the best, prepare for the worst.",
  "Where there is smoke, there is fire.",
  "A watched pot never boils.",
  "Beggars can't be choosers.",
  "Curiosity killed the cat, but satisfaction brought it back.",
  "Don't put all your eggs in one basket.",
  "Every dog has its day.",
  "Good things come to those who wait.",
  "If the shoe fits, wear it.",
  "Laughter is the best medicine.",
  "Little strokes fell great oaks.",
  "The squeaky wheel gets the grease.",
];

const FortuneInput = z.object({
  seed: z
    .string()
    .min(1)
    .max(100)
    .describe("Any text, e.g. your name or today's date: the same seed always draws the same fortune."),
});

const FortuneOutput = z.object({
  seed: z.string(),
  number: z.number().int().describe(`Which of the ${PROVERBS.length} proverbs was drawn, from 1.`),
  fortune: z.string().describe("The proverb."),
  lucky_numbers: z.array(z.number().int()).describe("Six distinct lucky numbers from 1 to 49, ascending."),
});

export function fortuneFor(seed: string): z.output<typeof FortuneOutput> {
  const digest = createHash("sha256").update(seed, "utf8").digest();
  const index = digest.readUInt32BE(0) % PROVERBS.length;
  const lucky = new Set<number>();
  for (let i = 4; i < digest.length && lucky.size < 6; i++) lucky.add(((digest[i] ?? 0) % 49) + 1);
  for (let n = 1; lucky.size < 6; n++) lucky.add(n);
  return {
    seed,
    number: index + 1,
    fortune: PROVERBS[index] ?? "",
    lucky_numbers: [...lucky].sort((a, b) => a - b),
  };
}

export const fortune = defineEndpoint({
  method: "GET",
  path: "/fortune",
  price: "0.001",
  description:
    "Draws a fortune (a traditional proverb) and six lucky numbers from a seed; the same seed always gives the same fortune.",
  input: FortuneInput,
  output: FortuneOutput,
  example: { input: { seed: "alice" }, output: fortuneFor("alice") },
  handler: async (q) => fortuneFor(q.seed),
});
