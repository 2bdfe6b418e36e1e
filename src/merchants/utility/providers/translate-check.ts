/**
 * Checks that a translation kept the text's layout, which models sometimes drop (merging lines,
 * "fixing" list markers, translating code). What is compared, and why it is language-independent:
 * - the number of lines: line breaks are layout, not words;
 * - each line's skeleton: blank or not, indentation, and its leading Markdown marker (heading level,
 *   list bullet or number, blockquote, code fence, table row with its `|` count);
 * - counts in the whole text of `**`, backticks and `](` (bold, code and links).
 * Words themselves are not checked: any faithful translation passes, and a mangled layout fails.
 */

const MARKER = /^(\s*)(#{1,6}(?=\s)|>|[-*+](?=\s)|\d+[.)](?=\s)|```|~~~|\|)?/;

function skeleton(line: string): string {
  if (line.trim() === "") return "blank";
  const m = MARKER.exec(line) as RegExpExecArray;
  const indent = (m[1] ?? "").replace(/\t/g, "    ").length;
  const marker = m[2] ?? "text";
  const pipes = marker === "|" ? `:${(line.match(/\|/g) ?? []).length}` : "";
  return `${indent}:${marker}${pipes}`;
}

const count = (text: string, token: string) => text.split(token).length - 1;

/** Null when the layout matches, else what differs (for the retry prompt and the error). */
export function layoutDifference(source: string, translation: string): string | null {
  const a = source.split("\n");
  const b = translation.split("\n");
  if (a.length !== b.length) return `the text has ${a.length} lines, the translation ${b.length}`;
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [skeleton(a[i] as string), skeleton(b[i] as string)];
    if (x !== y) return `line ${i + 1} should start like the original (${x}), not (${y})`;
  }
  for (const token of ["**", "`", "]("]) {
    const [x, y] = [count(source, token), count(translation, token)];
    if (x !== y) return `the text has ${x} "${token}" markers, the translation ${y}`;
  }
  return null;
}
