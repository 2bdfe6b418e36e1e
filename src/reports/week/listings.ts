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

/**
 * SQL: per merchant (`pay_to`) of the listings that `where` selects, its listings as the report's
 * JSON text: sorted by price ascending, then by URL in byte order so the order is stable;
 * descriptions cleaned and cut.
 */
export function sqlListingsJson(where = "true"): string {
  // Sorted as a list of structs: an ORDER BY inside the aggregate would sort each merchant's rows apart.
  return `SELECT pay_to, '[' || array_to_string(list_transform(list_sort(list({
      'price_usd': price_usd, 'resource': resource,
      'json': json_object('resource', resource, 'price_usd', price_usd,
        'description', ${sqlCutDescription(sqlCleanText("description"))})::VARCHAR
    })), lambda l: l.json), ',') || ']' AS listings
    FROM listings WHERE ${where} GROUP BY pay_to`;
}

/**
 * SQL: per merchant (`pay_to`) with listings, `host`: the host most of them live on (the first by
 * name on a tie), which names a merchant that has no name.
 */
export function sqlListingHosts(): string {
  return `SELECT pay_to, host FROM listings WHERE host <> '' GROUP BY pay_to, host
    QUALIFY row_number() OVER (PARTITION BY pay_to ORDER BY count(*) DESC, host) = 1`;
}
