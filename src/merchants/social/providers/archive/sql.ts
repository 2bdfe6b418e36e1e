/**
 * Small SQL helpers the archive's queries share: which strings are IDs the tables can hold, lists of IDs
 * as one jsonb parameter (one form for PGlite and the server, whose drivers pass JS arrays differently),
 * and page sizes.
 */
import type { PageRequest } from "../../provider.ts";

const MAX_ID = 2n ** 63n - 1n;

/**
 * Whether `id` could be an archived object's id. Anything else (letters, 20 digits, past 2^63) is simply
 * not found: casting it to bigint in SQL would be an error instead.
 */
export const isId = (id: string): boolean => /^\d{1,19}$/.test(id) && BigInt(id) <= MAX_ID;

/** `ids` as the parameter `idSet(n)` reads. */
export const idsParam = (ids: Iterable<string>): string => JSON.stringify([...new Set(ids)].filter(isId));

/** SQL for the set of bigint IDs in jsonb parameter `$n`: `WHERE id IN ${idSet(1)}`. */
export const idSet = (n: number): string =>
  `(SELECT value::bigint FROM jsonb_array_elements_text($${n}::jsonb))`;

/** A page's size, at least 1 and at most 200 (the queries read one row more, to know whether a next page exists). */
export function pageLimit(page: PageRequest): number {
  return Math.min(Math.max(Math.trunc(page.size) || 1, 1), 200);
}
