/** Longest OpenAPI summary: tools show it on one line; a longer first sentence is cut at a word. */
export const MAX_SUMMARY_LENGTH = 120;

/** Abbreviations whose period ends no sentence: splitting at "(e.g. " cut /api/calc's summary mid-way. */
const ABBREVIATION = /(?:^|[\s(])(?:e\.g|i\.e|vs|cf|approx|incl)\.$/i;

/**
 * The operation's summary: the description's first sentence, that is up to a `.`, `!` or `?` followed by
 * a space, outside parentheses and not the period of an abbreviation. When longer than MAX_SUMMARY_LENGTH,
 * the part before its colon, else cut at the last whole word (with "…"). Never ends mid-word or inside an unclosed parenthesis.
 */
export function summaryOf(description: string): string {
  const text = description.trim();
  let depth = 0;
  let end = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(" || c === "[") depth++;
    else if ((c === ")" || c === "]") && depth > 0) depth--;
    else if (
      depth === 0 &&
      (c === "." || c === "!" || c === "?") &&
      /\s/.test(text[i + 1] ?? "") &&
      !ABBREVIATION.test(text.slice(0, i + 1))
    ) {
      end = i + 1;
      break;
    }
  }
  const sentence = text.slice(0, end);
  if (sentence.length <= MAX_SUMMARY_LENGTH) return sentence;
  // Most descriptions are "what: the details": the part before the colon is the summary.
  // Not the colon of a URI scheme ("a data: URI"), nor one inside parentheses.
  const colon = sentence.search(/(?<!\b(?:data|mailto|https?)): /);
  const head = sentence.slice(0, colon);
  if (colon >= 20 && colon < MAX_SUMMARY_LENGTH && head.split("(").length === head.split(")").length) {
    return head;
  }
  const cut = sentence.slice(0, MAX_SUMMARY_LENGTH).replace(/\s+\S*$/, "");
  // A cut inside "(...)" or after a comma reads badly: back to before the parenthesis, drop the comma.
  const open = cut.lastIndexOf("(");
  const whole = open > cut.lastIndexOf(")") && open > 0 ? cut.slice(0, open) : cut;
  return `${whole.replace(/[\s,;:–—-]+$/, "")}…`;
}
