/**
 * The icon index behind `GET /api/icon/search` and `POST /api/icon/generate`: every icon of Font Awesome
 * Free (the installed `@fortawesome/fontawesome-free`), read once from its `metadata/icon-families.json`,
 * with its free styles (solid, regular, brands), search terms, label, aliases and one SVG path per style.
 *
 * Ranking (`searchIcons`), highest tier first; within a tier a closer match scores higher, and ties are
 * broken by name, so the same query always gives the same list:
 *
 * | score | match |
 * |---|---|
 * | 100 | the name is the query (spaces read as hyphens: "arrow up" = `arrow-up`) |
 * | 95 | an alias (an older name, e.g. `home` for `house`) is the query |
 * | 80-90 | the name starts with the query (shorter names first) |
 * | 75-80 | an alias starts with the query |
 * | 70-75 | the query is a whole hyphen-separated part of the name (`arrow` in `circle-arrow-down`) |
 * | 60 | a search term is the query |
 * | 50-55 | a search term starts with the query, or one of its words is the query |
 * | 40-45 | the label contains the query |
 * | 35 | the name contains the query anywhere |
 * | 30-35 | every word of a multi-word query matches the name, a term or the label (one of the rules above) |
 * | 10-20 | fuzzy: a name part, the name or a term is one edit away (two for queries of 7+ characters) |
 *
 * Icons: Font Awesome Free, CC BY 4.0 (https://fontawesome.com/license/free).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

export const ICON_STYLES = ["solid", "regular", "brands"] as const;
export type IconStyle = (typeof ICON_STYLES)[number];

/** Shown with every search and in every generated SVG. */
export const ICON_LICENSE = {
  name: "CC BY 4.0",
  url: "https://creativecommons.org/licenses/by/4.0/",
  attribution: "Font Awesome Free by Fonticons, Inc. (https://fontawesome.com), icons licensed CC BY 4.0",
} as const;

export const MAX_QUERY_LENGTH = 64;

export interface IconGlyph {
  /** `[minX, minY, width, height]`, as Font Awesome draws it (height 512). */
  viewBox: [number, number, number, number];
  /** SVG path data. */
  path: string;
}

export interface Icon {
  name: string;
  label: string;
  /** Free styles, in the order solid, regular, brands. */
  styles: IconStyle[];
  terms: string[];
  aliases: string[];
  unicode: string;
  glyphs: Partial<Record<IconStyle, IconGlyph>>;
}

export interface IconIndex {
  /** Font Awesome's version, e.g. "7.3.1". */
  version: string;
  /** The licence comment of Font Awesome's own SVG files, kept in every SVG we generate. */
  licenseComment: string;
  icons: Icon[];
  /** Canonical names and aliases, lower-case, to the icon. */
  byName: Map<string, Icon>;
}

export interface IconMatch {
  name: string;
  label: string;
  styles: IconStyle[];
  terms: string[];
  score: number;
}

interface RawIcon {
  aliases?: { names?: string[] };
  search?: { terms?: (string | number)[] };
  unicode: string;
  label: string;
  svgs: Record<string, Record<string, { viewBox: number[]; path: string | string[] }>>;
  familyStylesByLicense: { free: { family: string; style: string }[] };
}

const require = createRequire(import.meta.url);

/** Builds the index from a parsed `icon-families.json` (exported for tests). */
export function buildIconIndex(
  raw: Record<string, RawIcon>,
  version: string,
  licenseComment = `<!--! Font Awesome Free ${version} - https://fontawesome.com License - https://fontawesome.com/license/free (Icons: CC BY 4.0) -->`,
): IconIndex {
  const icons: Icon[] = [];
  for (const [name, entry] of Object.entries(raw)) {
    const glyphs: Partial<Record<IconStyle, IconGlyph>> = {};
    for (const { family, style } of entry.familyStylesByLicense?.free ?? []) {
      if (family !== "classic" || !(ICON_STYLES as readonly string[]).includes(style)) continue;
      const svg = entry.svgs?.[family]?.[style];
      // Duotone icons carry two paths; the free set has none, and one-colour output needs one path.
      if (!svg || typeof svg.path !== "string" || svg.viewBox.length !== 4) continue;
      glyphs[style as IconStyle] = {
        viewBox: svg.viewBox as [number, number, number, number],
        path: svg.path,
      };
    }
    const styles = ICON_STYLES.filter((s) => glyphs[s]);
    if (styles.length === 0) continue;
    icons.push({
      name,
      label: entry.label,
      styles,
      terms: [...new Set((entry.search?.terms ?? []).map((t) => String(t).toLowerCase()))],
      aliases: entry.aliases?.names ?? [],
      unicode: entry.unicode,
      glyphs,
    });
  }
  icons.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = new Map<string, Icon>();
  for (const icon of icons) byName.set(icon.name, icon);
  // Aliases never shadow a canonical name.
  for (const icon of icons) for (const alias of icon.aliases) if (!byName.has(alias)) byName.set(alias, icon);
  return { version, licenseComment, icons, byName };
}

let loaded: IconIndex | undefined;

/** The index of the installed Font Awesome Free, built on first use (about 5 MB of JSON, once per process). */
export function iconIndex(): IconIndex {
  if (!loaded) {
    const pkg = require("@fortawesome/fontawesome-free/package.json") as { version: string };
    const file = require.resolve("@fortawesome/fontawesome-free/metadata/icon-families.json");
    // The licence comment as Font Awesome writes it in its own files (version and copyright year included).
    const sample = readFileSync(
      require.resolve("@fortawesome/fontawesome-free/svgs/solid/circle.svg"),
      "utf8",
    );
    const comment = /<!--![\s\S]*?-->/.exec(sample)?.[0];
    loaded = buildIconIndex(
      JSON.parse(readFileSync(file, "utf8")) as Record<string, RawIcon>,
      pkg.version,
      comment,
    );
  }
  return loaded;
}

/** An icon by its name or one of its aliases (case-insensitive), or undefined. */
export function findIcon(name: string, index: IconIndex = iconIndex()): Icon | undefined {
  return index.byName.get(name.trim().toLowerCase());
}

/** "Arrow  Up" -> "arrow up"; "arrow_up" -> "arrow up". */
function normalizeQuery(query: string): string {
  return query
    .toLowerCase()
    .replace(/[\s_]+/g, " ")
    .trim();
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Levenshtein distance, giving up (returning max + 1) once it must exceed `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    previous = current;
  }
  return previous[b.length] ?? max + 1;
}

/** Score of one word or phrase against an icon by the exact, prefix, term and label rules (0 = none). */
function directScore(icon: Icon, phrase: string, slug: string, label: string): number {
  if (icon.name === slug) return 100;
  if (icon.aliases.includes(slug)) return 95;
  if (icon.name.startsWith(slug)) return 80 + 10 * (slug.length / icon.name.length);
  const alias = icon.aliases.find((a) => a.startsWith(slug));
  if (alias) return 75 + 5 * (slug.length / alias.length);
  if (`-${icon.name}-`.includes(`-${slug}-`)) return 70 + 5 * (slug.length / icon.name.length);
  if (icon.terms.includes(phrase)) return 60;
  let best = 0;
  for (const term of icon.terms) {
    if (term.startsWith(phrase) || term.split(/[\s-]+/).includes(phrase))
      best = Math.max(best, 50 + 5 * (phrase.length / term.length));
  }
  if (best) return best;
  if (label.includes(phrase)) return 40 + 5 * (phrase.length / label.length);
  if (icon.name.includes(slug)) return 35;
  return 0;
}

function fuzzyScore(icon: Icon, slug: string): number {
  if (slug.length < 4) return 0;
  const max = slug.length >= 7 ? 2 : 1;
  let best = max + 1;
  const candidates = [icon.name, ...icon.name.split("-"), ...icon.terms];
  for (const candidate of candidates) {
    if (candidate.length < 3) continue;
    best = Math.min(best, editDistance(slug, candidate.replace(/ /g, "-"), max));
    if (best === 0) break;
  }
  return best <= max ? 20 - 5 * best : 0;
}

/** The score of an icon for a query (0 = no match); see the table at the top of this file. */
export function scoreIcon(icon: Icon, query: string): number {
  const phrase = normalizeQuery(query);
  if (!phrase) return 0;
  const slug = phrase.replace(/ /g, "-");
  const label = icon.label.toLowerCase();
  const direct = directScore(icon, phrase, slug, label);
  if (direct) return round2(direct);
  const words = phrase.split(" ");
  if (words.length > 1) {
    const scores = words.map((w) => directScore(icon, w, w, label));
    if (scores.every((s) => s > 0))
      return round2(30 + 5 * (scores.reduce((a, b) => a + b, 0) / words.length / 100));
  }
  return round2(fuzzyScore(icon, slug));
}

export interface SearchOptions {
  style?: IconStyle | undefined;
  limit?: number;
}

/** The best `limit` icons for a query, highest score first, then by name. */
export function searchIcons(
  query: string,
  options: SearchOptions = {},
  index: IconIndex = iconIndex(),
): {
  total: number;
  icons: IconMatch[];
} {
  const { style, limit = 10 } = options;
  const matches: IconMatch[] = [];
  for (const icon of index.icons) {
    if (style && !icon.glyphs[style]) continue;
    const score = scoreIcon(icon, query);
    if (score > 0)
      matches.push({ name: icon.name, label: icon.label, styles: icon.styles, terms: icon.terms, score });
  }
  matches.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { total: matches.length, icons: matches.slice(0, limit) };
}
