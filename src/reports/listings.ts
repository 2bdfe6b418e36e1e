/** A listing record of the report (spec 2.5). */
export interface Listing {
  resource: string;
  price_usd: number;
  description: string;
}

export const DESCRIPTION_LIMIT = 240;

// JavaScript's \s: RE2's \s is ASCII only, so add the Unicode separators and the BOM.
const SPACE = "[\\s\\v\\p{Z}\\x{FEFF}]";

/** SQL: text with white space runs collapsed to one space and trimmed. */
export function sqlCleanText(text: string): string {
  return `trim(regexp_replace(${text}, '${SPACE}+', ' ', 'g'))`;
}

/**
 * SQL: a description, already cleaned by `sqlCleanText`, cut to at most 240 characters at a word
 * boundary, the cut marked with "…". Keep the cut near the limit: at the last space in the last third
 * of the limit, else inside the word; trailing punctuation goes before the "…".
 */
export function sqlCutDescription(clean: string, limit = DESCRIPTION_LIMIT): string {
  // Greedy: everything before the last space within the limit ('' without one).
  const beforeSpace = `regexp_extract(left(${clean}, ${limit}), '^(.*) ', 1)`;
  const cut = `CASE WHEN length(${beforeSpace}) >= ${Math.ceil((limit * 2) / 3)} THEN ${beforeSpace} ELSE left(${clean}, ${limit - 1}) END`;
  return `CASE WHEN length(${clean}) <= ${limit} THEN ${clean}
    ELSE regexp_replace(${cut}, '[\\s,;:.\\-–—]+$', '') || '…' END`;
}

/** SQL: the host of a listing's URL, lower case ("api.example.com"; "[::1]" for IPv6). */
export function sqlHost(url: string): string {
  return `lower(regexp_extract(${url}, '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^\\]/?#]*\\]|[^:/?#]*)', 1))`;
}

/** Listings by price ascending, then by URL (byte order) so the order is stable. */
export const LISTING_ORDER = "price_usd, resource";
