import type { Listing } from "../analytics/listings.ts";
import { type Merchant, resourceUrl } from "./endpoint.ts";

/** The merchant's listings, sorted as reports show them: by price ascending, then by URL. */
export function listingsOf(merchant: Merchant): Listing[] {
  return merchant.endpoints
    .filter((e) => e.listed !== false)
    .map((e) => ({
      payTo: merchant.payTo,
      resource: resourceUrl(merchant, e),
      method: e.method,
      priceUsd: Number(e.price),
      description: e.description,
    }))
    .sort((a, b) => a.priceUsd - b.priceUsd || a.resource.localeCompare(b.resource));
}

/** The listings as import-format NDJSON (`{"type": "listing", ...}` per line; docs/import.md). */
export function listingsNdjson(merchants: readonly Merchant[]): string {
  return merchants
    .flatMap(listingsOf)
    .map(
      (l) =>
        `${JSON.stringify({ type: "listing", pay_to: l.payTo, resource: l.resource, price_usd: l.priceUsd, description: l.description, method: l.method })}\n`,
    )
    .join("");
}
