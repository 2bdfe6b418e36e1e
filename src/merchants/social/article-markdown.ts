/**
 * An X article's body, stored by X as Draft.js's raw content state, as Markdown (`article_content` of
 * `/articles/by/id`, docs/social.md): headings, paragraphs, bold, italic, code and struck-through text, links,
 * lists (nested by depth, ordered ones numbered), quotes, code blocks, images and dividers.
 *
 * Text is escaped where Markdown would read it as syntax, so an article that talks about `*stars*` keeps
 * its stars. An entity's data is read by the names X's web app and the providers use: a link's `url`
 * (or `href`); an image's `url` (or `src`, `mediaUrl`) with `caption` (or `alt`); a tweet's `tweetId`.
 */
import type { DraftBlock, DraftContentState, DraftEntity } from "./model.ts";

const HEADINGS: Record<string, string> = {
  "header-one": "#",
  "header-two": "##",
  "header-three": "###",
  "header-four": "####",
  "header-five": "#####",
  "header-six": "######",
};

const MARKERS: Record<string, string> = { BOLD: "**", ITALIC: "_", CODE: "`", STRIKETHROUGH: "~~" };
/** Nesting order of the markers: the outermost first, so `**_x_**` closes as it opens. */
const ORDER = ["BOLD", "ITALIC", "STRIKETHROUGH", "CODE"];

/** Escapes what Markdown would take for syntax inside a line. */
function escapeInline(text: string): string {
  return text.replace(/([\\`*_[\]<>~|])/g, "\\$1");
}

/** Escapes what would start a block at the beginning of a line (`# `, `> `, `- `, `1. `). */
function escapeLineStart(line: string): string {
  return line.replace(/^(\s*)([#>+-]|\d+[.)])(?=\s|$)/, (_, space: string, mark: string) =>
    mark.length > 1 ? `${space}${mark.slice(0, -1)}\\${mark.slice(-1)}` : `${space}\\${mark}`,
  );
}

const str = (value: unknown): string | undefined =>
  typeof value === "string" && value !== "" ? value : undefined;

function entityOf(state: DraftContentState, key: number | string): DraftEntity | undefined {
  return state.entityMap[String(key)];
}

function linkUrl(entity: DraftEntity | undefined): string | undefined {
  if (entity?.type.toUpperCase() !== "LINK") return undefined;
  return str(entity.data.url) ?? str(entity.data.href);
}

/** A block's text with its inline styles and links, as one line of Markdown. */
function inline(block: DraftBlock, state: DraftContentState): string {
  const { text } = block;
  const cuts = new Set([0, text.length]);
  for (const r of block.inlineStyleRanges) cuts.add(r.offset).add(Math.min(text.length, r.offset + r.length));
  for (const r of block.entityRanges) cuts.add(r.offset).add(Math.min(text.length, r.offset + r.length));
  const points = [...cuts].filter((c) => c >= 0 && c <= text.length).sort((a, b) => a - b);
  const pieces: { text: string; styles: string[]; link?: string }[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const start = points[i] as number;
    const end = points[i + 1] as number;
    const covers = (r: { offset: number; length: number }) => r.offset <= start && r.offset + r.length >= end;
    const styles = ORDER.filter((s) =>
      block.inlineStyleRanges.some((r) => r.style.toUpperCase() === s && covers(r)),
    );
    const range = block.entityRanges.find(covers);
    const link = range ? linkUrl(entityOf(state, range.key)) : undefined;
    pieces.push({ text: text.slice(start, end), styles, ...(link && { link }) });
  }
  let out = "";
  for (let i = 0; i < pieces.length; ) {
    // A link spans its run of pieces: its text styled inside the brackets.
    const link = pieces[i]?.link;
    let j = i + 1;
    while (link && j < pieces.length && pieces[j]?.link === link) j++;
    const run = pieces
      .slice(i, j)
      .map((p) => styled(p.text, p.styles))
      .join("");
    out += link ? `[${run}](${link.replace(/[()\s]/g, encodeURIComponent)})` : run;
    i = j;
  }
  return out;
}

/** `text` in its markers, whitespace kept outside them (Markdown ignores `** bold**`). */
function styled(text: string, styles: readonly string[]): string {
  const code = styles.includes("CODE");
  const body = code ? text : escapeInline(text);
  if (styles.length === 0 || text.trim() === "") return body;
  const [, lead = "", core = "", trail = ""] = /^(\s*)([\s\S]*?)(\s*)$/.exec(body) ?? [];
  const open = styles.map((s) => MARKERS[s]).join("");
  const close = [...styles]
    .reverse()
    .map((s) => MARKERS[s])
    .join("");
  return `${lead}${open}${core}${close}${trail}`;
}

/** An atomic block: an image, a divider, an embedded tweet. */
function atomic(block: DraftBlock, state: DraftContentState): string {
  const range = block.entityRanges[0];
  const entity = range ? entityOf(state, range.key) : undefined;
  if (!entity) return "";
  const type = entity.type.toUpperCase();
  if (type === "DIVIDER") return "---";
  if (type === "TWEET") {
    const id = str(entity.data.tweetId) ?? str(entity.data.id);
    return id ? `https://x.com/i/status/${id}` : "";
  }
  const url = str(entity.data.url) ?? str(entity.data.src) ?? str(entity.data.mediaUrl);
  if (!url) return "";
  const alt = str(entity.data.caption) ?? str(entity.data.alt) ?? "";
  return `![${escapeInline(alt)}](${url.replace(/[()\s]/g, encodeURIComponent)})`;
}

/** The article body as Markdown: blocks separated by blank lines, list items and code lines kept together. */
export function articleMarkdown(state: DraftContentState): string {
  const out: string[] = [];
  /** Per depth, the next number of an ordered list; reset by anything that is not an ordered item. */
  let numbers: number[] = [];
  let previous: string | undefined;
  for (const block of state.blocks) {
    const type = block.type;
    if (previous === "code-block" && type !== "code-block") out.push("```");
    const list = type === "unordered-list-item" || type === "ordered-list-item";
    const depth = Math.max(0, Math.min(8, block.depth ?? 0));
    if (type !== "ordered-list-item") numbers = numbers.slice(0, list ? depth + 1 : 0);
    // Items of one list, and lines of one code block, stay together; everything else gets a blank line.
    const together =
      (list && previous?.endsWith("list-item")) || (type === "code-block" && previous === "code-block");
    if (out.length > 0 && !together) out.push("");
    previous = type;
    if (type === "code-block") {
      if (!together) out.push("```");
      out.push(block.text);
      continue;
    }
    if (HEADINGS[type]) out.push(`${HEADINGS[type]} ${inline(block, state)}`);
    else if (type === "unordered-list-item") out.push(`${"  ".repeat(depth)}- ${inline(block, state)}`);
    else if (type === "ordered-list-item") {
      numbers = numbers.slice(0, depth + 1);
      const n = (numbers[depth] ?? 0) + 1;
      numbers[depth] = n;
      out.push(`${"   ".repeat(depth)}${n}. ${inline(block, state)}`);
    } else if (type === "blockquote") out.push(`> ${inline(block, state)}`);
    else if (type === "atomic") out.push(atomic(block, state));
    else out.push(escapeLineStart(inline(block, state)));
  }
  if (previous === "code-block") out.push("```");
  return `${out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()}\n`;
}
