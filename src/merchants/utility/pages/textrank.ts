/**
 * Extractive summary by TextRank (Mihalcea & Tarau, 2004, "TextRank: Bringing Order into Texts"),
 * deterministic and without any model:
 *
 * 1. Sentences: each paragraph is split with `Intl.Segmenter` (Unicode sentence boundaries, in the page's
 *    language), re-joined after common abbreviations ("Dr.", "e.g."); sentences of fewer than `MIN_WORDS` words (headings, captions, bylines) are not candidates.
 * 2. Words: `Intl.Segmenter` word boundaries, lower-cased, stop words dropped, a plural `s` stripped.
 * 3. Similarity of two sentences: shared distinct words / (ln |S1| + ln |S2|) (the paper's measure).
 * 4. Rank: weighted PageRank over that graph, damping 0.85, iterated until no score moves by more than
 *    1e-6 (at most 100 rounds).
 * 5. The `count` best sentences (ties to the earlier one) are returned in document order.
 *
 * Only the first `MAX_SENTENCES` sentences are ranked, which bounds the pairwise graph (O(n^2)).
 */

export const MIN_WORDS = 5;
export const MAX_SENTENCES = 500;
const DAMPING = 0.85;
const EPSILON = 1e-6;
const MAX_ROUNDS = 100;

/** English function words; for other languages shared content words still dominate the similarity. */
const STOP_WORDS = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below " +
    "between both but by can could did do does doing down during each few for from further had has have " +
    "having he her here hers herself him himself his how i if in into is it its itself just me more most " +
    "my myself no nor not now of off on once only or other our ours ourselves out over own same she " +
    "should so some such than that the their theirs them themselves then there these they this those " +
    "through to too under until up very was we were what when where which while who whom why will with " +
    "would you your yours yourself yourselves also may might must shall us one two"
  ).split(" "),
);

export interface RankedSentence {
  /** Position among the candidate sentences, from 0. */
  index: number;
  text: string;
  score: number;
}

export interface TextRankResult {
  /** Every candidate sentence, in document order. */
  sentences: string[];
  /** The chosen ones, in document order. */
  chosen: RankedSentence[];
}

/** Splits `text` (paragraphs separated by blank lines) into candidate sentences. */
export function splitSentences(text: string, lang = "en"): string[] {
  const segmenter = new Intl.Segmenter(safeLocale(lang), { granularity: "sentence" });
  const out: string[] = [];
  for (const paragraph of text.split(/\n{2,}/)) {
    for (const segment of joinAbbreviations(Array.from(segmenter.segment(paragraph), (s) => s.segment))) {
      const sentence = segment.replace(/\s+/g, " ").trim();
      if (words(sentence, lang).length >= MIN_WORDS) out.push(sentence);
      if (out.length >= MAX_SENTENCES) return out;
    }
  }
  return out;
}

/** Titles and abbreviations after which ICU's sentence rules (without suppressions) wrongly break. */
const ABBREVIATION =
  /\b(Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|Mt|Gen|Col|Lt|Capt|Rev|vs|etc|e\.g|i\.e|cf|No|Fig|approx|Inc|Ltd|Co)\.\s*$/i;

/** Glues a segment ending in an abbreviation ("Dr.") to the next one. */
function joinAbbreviations(segments: string[]): string[] {
  const out: string[] = [];
  let pending = "";
  for (const segment of segments) {
    pending += segment;
    if (!ABBREVIATION.test(pending)) {
      out.push(pending);
      pending = "";
    }
  }
  if (pending) out.push(pending);
  return out;
}

/** The word-like segments of a sentence, lower-case. */
export function words(sentence: string, lang = "en"): string[] {
  const segmenter = new Intl.Segmenter(safeLocale(lang), { granularity: "word" });
  return Array.from(segmenter.segment(sentence))
    .filter((s) => s.isWordLike)
    .map((s) => s.segment.toLowerCase());
}

/** The distinct content words of a sentence: stop words dropped, a plural `s` stripped. */
export function contentWords(sentence: string, lang = "en"): Set<string> {
  return new Set(
    words(sentence, lang)
      .filter((w) => !STOP_WORDS.has(w))
      .map((w) => (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w)),
  );
}

/** The paper's sentence similarity. */
export function similarity(a: Set<string>, b: Set<string>): number {
  const denominator = Math.log(a.size) + Math.log(b.size);
  if (denominator <= 0) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared += 1;
  return shared / denominator;
}

/** Ranks the sentences of `text` and keeps the best `count`. */
export function textRank(text: string, count: number, lang = "en"): TextRankResult {
  const sentences = splitSentences(text, lang);
  const bags = sentences.map((s) => contentWords(s, lang));
  const n = sentences.length;
  const weights: number[][] = bags.map((a, i) => bags.map((b, j) => (i === j ? 0 : similarity(a, b))));
  const outSum = weights.map((row) => row.reduce((x, y) => x + y, 0));
  let scores: number[] = new Array(n).fill(1);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const next = scores.map((_, i) => {
      let sum = 0;
      for (let j = 0; j < n; j++) {
        const w = weights[j]?.[i] ?? 0;
        const out = outSum[j] ?? 0;
        if (w > 0 && out > 0) sum += (w / out) * (scores[j] ?? 0);
      }
      return 1 - DAMPING + DAMPING * sum;
    });
    const moved = Math.max(0, ...next.map((s, i) => Math.abs(s - (scores[i] ?? 0))));
    scores = next;
    if (moved < EPSILON) break;
  }
  const chosen = scores
    .map((score, index) => ({ index, score, text: sentences[index] ?? "" }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, count)
    .sort((a, b) => a.index - b.index)
    .map((s) => ({ ...s, score: Math.round(s.score * 1e6) / 1e6 }));
  return { sentences, chosen };
}

function safeLocale(lang: string): string {
  try {
    return Intl.getCanonicalLocales(lang)[0] ?? "en";
  } catch {
    return "en";
  }
}
