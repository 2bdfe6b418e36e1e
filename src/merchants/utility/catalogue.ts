/**
 * The utility API (spec 4.4): the single place its prices, descriptions and schemas are written. Each
 * entry lives in its own file beside this one; the platform builds the routes, the OpenAPI document, the
 * reference page, `/.well-known/x402` and the listings from this list.
 */
import { type AnyEndpoint, aliasOf, type Merchant } from "../../platform/catalogue.ts";
import { calc } from "./calc.ts";

export const UTILITY_TITLE = "Utility API";

/** Every endpoint of the utility API, in the spec's order. */
export const UTILITY_ENDPOINTS: readonly AnyEndpoint[] = [calc];

/** The paths the alias host lists under its own name, same description and price (spec 4.2.3). */
export const UTILITY_ALIAS_PATHS: readonly string[] = ["/api/geo", "/api/scrape"];

export function utilityMerchant(host: { payTo: `0x${string}`; publicUrl: string }): Merchant {
  return { name: "utility", title: UTILITY_TITLE, endpoints: UTILITY_ENDPOINTS, ...host };
}

export function utilityAliasMerchant(host: { payTo: `0x${string}`; publicUrl: string }): Merchant {
  return aliasOf(utilityMerchant(host), { name: "utility-alias", paths: UTILITY_ALIAS_PATHS, ...host });
}
