import { type Merchant, resourceUrl } from "./catalogue.ts";

/** One paid endpoint as the report lists it (spec 2.5), and as the import's `listing` record carries it. */
export interface Listing {
  pay_to: `0x${string}`;
  resource: string;
  price_usd: number;
  description: string;
  method: string;
}

/** The merchant's listings, sorted as reports show them: by price ascending, then by URL. */
export function listingsOf(merchant: Merchant): Listing[] {
  return merchant.endpoints
    .map((e) => ({
      pay_to: merchant.payTo,
      resource: resourceUrl(merchant, e),
      price_usd: Number(e.price),
      description: e.description,
      method: e.method,
    }))
    .sort((a, b) => a.price_usd - b.price_usd || a.resource.localeCompare(b.resource));
}

/** The listings as import-format NDJSON (`{"type": "listing", ...}` per line; README "Import format"). */
export function listingsNdjson(merchants: readonly Merchant[]): string {
  return merchants
    .flatMap(listingsOf)
    .map((l) => `${JSON.stringify({ type: "listing", ...l })}\n`)
    .join("");
}
