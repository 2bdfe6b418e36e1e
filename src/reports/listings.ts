/** A listing record of the report (spec 2.5). */
export interface Listing {
  resource: string;
  price_usd: number;
  description: string;
}

export const DESCRIPTION_LIMIT = 240;

/**
 * Cuts a description to at most 240 characters at a word boundary and marks the cut with "…".
 * White space runs are collapsed first. A single word longer than the limit is cut inside the word.
 */
export function cutDescription(text: string, limit = DESCRIPTION_LIMIT): string {
  const clean = text.replace(/\s+/g, " ").trim();
  if (clean.length <= limit) return clean;
  const room = clean.slice(0, limit);
  const space = room.lastIndexOf(" ");
  // Keep the cut near the limit: a word boundary in the last third, else a hard cut.
  const cut = space >= limit * (2 / 3) ? room.slice(0, space) : room.slice(0, limit - 1);
  return `${cut.replace(/[\s,;:.\-–—]+$/, "")}…`;
}

/** Listings by price ascending, then by resource so the order is stable. */
export function sortListings<T extends Listing>(listings: readonly T[]): T[] {
  return [...listings].sort((a, b) => a.price_usd - b.price_usd || a.resource.localeCompare(b.resource));
}

/** The host most of a merchant's listings live on, or null without listings. */
export function listingHost(listings: readonly Pick<Listing, "resource">[]): string | null {
  const counts = new Map<string, number>();
  for (const l of listings) {
    try {
      const host = new URL(l.resource).hostname;
      counts.set(host, (counts.get(host) ?? 0) + 1);
    } catch {
      // Validated on import; an unparsable URL only loses its vote.
    }
  }
  let best: string | null = null;
  for (const [host, n] of counts) if (best === null || n > (counts.get(best) ?? 0)) best = host;
  return best;
}
