import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

/** Silent reading speed of adults (Brysbaert 2019), and a typical speaking pace, in words per minute. */
const READING_WPM = 238;
const SPEAKING_WPM = 150;

const STOP_WORDS = new Set(
  "a an and are as at be but by for from had has have he her his i in is it its of on or our she so that the their them they this to was we were what which who will with you your".split(
    " ",
  ),
);

const TextInput = z.object({
  text: z.string().min(1).max(200_000).describe("The text to analyse, up to 200,000 characters."),
});

const CountOutput = z.object({
  characters: z.number().int().describe("Unicode characters (code points)."),
  characters_no_spaces: z.number().int(),
  words: z.number().int(),
  sentences: z.number().int(),
  paragraphs: z.number().int().describe("Blocks separated by a blank line."),
  reading_time_seconds: z.number().int().describe(`At ${READING_WPM} words per minute.`),
  speaking_time_seconds: z.number().int().describe(`At ${SPEAKING_WPM} words per minute.`),
});

export function wordsOf(text: string): string[] {
  return text.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? [];
}

export function countText(text: string): z.output<typeof CountOutput> {
  const words = wordsOf(text).length;
  const sentences = text.split(/(?<=[.!?…])\s+|\n{2,}/u).filter((s) => /[\p{L}\p{N}]/u.test(s)).length;
  return {
    characters: [...text].length,
    characters_no_spaces: [...text.replace(/\s+/gu, "")].length,
    words,
    sentences,
    paragraphs: text.split(/\n\s*\n/).filter((p) => p.trim()).length,
    reading_time_seconds: Math.ceil((words / READING_WPM) * 60),
    speaking_time_seconds: Math.ceil((words / SPEAKING_WPM) * 60),
  };
}

/** English syllables by the usual vowel-group heuristic, at least one per word. */
export function syllables(word: string): number {
  const w = word.toLowerCase().replace(/[^a-z]/g, "");
  if (!w) return 1;
  if (w.length <= 3) return 1;
  const trimmed = w.replace(/(?:[^laeiouy]es|[^laeiouy]ed|[^laeiouy]e)$/, "").replace(/^y/, "");
  return Math.max(1, trimmed.match(/[aeiouy]+/g)?.length ?? 0);
}

function longestWord(words: readonly string[]): string {
  let best = "";
  let bestLength = 0;
  for (const w of words) {
    const n = [...w].length;
    if (n > bestLength) {
      best = w;
      bestLength = n;
    }
  }
  return best;
}

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

const ReportOutput = CountOutput.extend({
  syllables: z.number().int(),
  unique_words: z.number().int().describe("Distinct words, case-insensitive."),
  lexical_diversity: z.number().describe("unique_words / words, 3 decimals."),
  average_word_length: z.number().describe("Letters per word, 1 decimal."),
  average_sentence_length: z.number().describe("Words per sentence, 1 decimal."),
  longest_word: z.string(),
  flesch_reading_ease: z.number().describe("0-100ish, higher is easier; 60-70 is plain English. 1 decimal."),
  flesch_kincaid_grade: z.number().describe("US school grade level, 1 decimal."),
  top_words: z
    .array(z.object({ word: z.string(), count: z.number().int() }))
    .describe("The 10 most frequent words, common English stop words left out; ties alphabetical."),
});

export function textReport(text: string): z.output<typeof ReportOutput> {
  const counts = countText(text);
  const words = wordsOf(text);
  const lower = words.map((w) => w.toLowerCase());
  const syl = words.reduce((n, w) => n + syllables(w), 0);
  const wordCount = Math.max(1, words.length);
  const sentenceCount = Math.max(1, counts.sentences);
  const freq = new Map<string, number>();
  for (const w of lower) if (!STOP_WORDS.has(w)) freq.set(w, (freq.get(w) ?? 0) + 1);
  const top = [...freq]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, 10)
    .map(([word, count]) => ({ word, count }));
  const unique = new Set(lower).size;
  return {
    ...counts,
    syllables: syl,
    unique_words: unique,
    lexical_diversity: round(unique / wordCount, 3),
    average_word_length: round(words.reduce((n, w) => n + [...w].length, 0) / wordCount),
    average_sentence_length: round(words.length / sentenceCount),
    longest_word: longestWord(words),
    flesch_reading_ease: round(206.835 - 1.015 * (wordCount / sentenceCount) - 84.6 * (syl / wordCount)),
    flesch_kincaid_grade: round(0.39 * (wordCount / sentenceCount) + 11.8 * (syl / wordCount) - 15.59),
    top_words: top,
  };
}

const SAMPLE =
  "The quick brown fox jumps over the lazy dog. The dog sleeps.\n\nA fox is quick! Is the dog lazy?";

export const count = defineEndpoint({
  method: "POST",
  path: "/count",
  price: "0.005",
  description:
    "Counts characters, words, sentences and paragraphs of a text, with reading and speaking time.",
  input: TextInput,
  output: CountOutput,
  example: { input: { text: SAMPLE }, output: countText(SAMPLE) },
  handler: async (b) => countText(b.text),
});

export const report = defineEndpoint({
  method: "POST",
  path: "/report",
  price: "0.25",
  description:
    "Full text statistics report: counts, reading time, syllables, lexical diversity, Flesch reading ease, Flesch-Kincaid grade and the most frequent words.",
  input: TextInput,
  output: ReportOutput,
  example: { input: { text: SAMPLE }, output: textReport(SAMPLE) },
  handler: async (b) => textReport(b.text),
});
