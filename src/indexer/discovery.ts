/**
 * Merchants' listings from an x402 Bazaar discovery endpoint: Coinbase's public Bazaar in
 * production (`https://api.cdp.coinbase.com/platform/v2/x402/discovery/resources`), the project's
 * own facilitator on the devnet (`<facilitator>/discovery/resources`).
 *
 * The endpoint pages with `?limit=&offset=` and answers
 * `{x402Version, items: [{resource, type, accepts: [PaymentRequirements], lastUpdated, description?,
 * extensions?}], pagination: {limit, offset, total}}` (x402 v2 Bazaar spec; `DiscoveryResourcesResponse`
 * in @x402/extensions). Requirements carry `amount` in v2 and `maxAmountRequired` in v1, the network as
 * CAIP-2 in v2 ("eip155:8453") and a name in v1 ("base"). Only Base USDC requirements become listings.
 */

import type { Listing } from "../analytics/listings.ts";
import { BASE_CAIP2, BASE_CHAIN, BASE_USDC } from "../chain/base.ts";
import { fetchWithin } from "../common/fetch-within.ts";
import { sleep } from "../common/sleep.ts";
import { timeoutSignal } from "../common/timeout-signal.ts";
import { backoffDelay, DEFAULT_BACKOFF } from "./rpc/backoff.ts";

export interface DiscoveryOptions {
  /** The resources URL (it may carry filters such as `?type=http`; limit and offset are added). */
  url: string;
  /** Items per page. Default 100. */
  pageSize?: number;
  /** Stops after this many pages whatever `total` says. Default 1,000. */
  maxPages?: number;
  timeoutMs?: number;
  attempts?: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

export interface DiscoveryResult {
  listings: Listing[];
  /** Catalogue items read (all networks). */
  items: number;
  pages: number;
}

/** The discovery endpoint failed (after retries) or does not speak the Bazaar format. */
export class DiscoveryError extends Error {
  override name = "DiscoveryError";
}

/** Base by its CAIP-2 id (x402 v2) and by its name (x402 v1, which is Base's slug). */
const BASE_NETWORKS = new Set<string>([BASE_CAIP2, BASE_CHAIN]);
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

/** Reads the whole feed and returns its Base USDC listings, one per (payTo, resource, method). */
export async function fetchListings(options: DiscoveryOptions): Promise<DiscoveryResult> {
  const pageSize = options.pageSize ?? 100;
  const maxPages = options.maxPages ?? 1_000;
  const listings = new Map<string, Listing>();
  let items = 0;
  let pages = 0;
  let offset = 0;
  let firstOfPrevious: string | undefined;
  while (pages < maxPages) {
    const url = new URL(options.url);
    url.searchParams.set("limit", String(pageSize));
    url.searchParams.set("offset", String(offset));
    const page = parsePage(await getJson(url, options), url);
    pages++;
    if (page.items.length === 0) break;
    // A server that ignores `offset` would send the same page forever.
    const first = JSON.stringify(page.items[0]);
    if (first === firstOfPrevious) break;
    firstOfPrevious = first;
    items += page.items.length;
    for (const item of page.items) {
      for (const listing of itemListings(item)) {
        const key = `${listing.payTo} ${listing.resource} ${listing.method}`;
        if (!listings.has(key)) listings.set(key, listing);
      }
    }
    offset += page.items.length;
    if (page.total !== undefined && offset >= page.total) break;
  }
  return { listings: [...listings.values()], items, pages };
}

interface Page {
  items: unknown[];
  total: number | undefined;
}

function parsePage(body: unknown, url: URL): Page {
  const b = body as { items?: unknown; pagination?: { total?: unknown } } | null;
  if (!b || !Array.isArray(b.items)) {
    throw new DiscoveryError(`${url.origin}${url.pathname} did not answer a Bazaar list (no "items")`);
  }
  const total = b.pagination?.total;
  return { items: b.items, total: typeof total === "number" ? total : undefined };
}

/** The Base USDC listings of one discovery item. */
export function itemListings(raw: unknown): Listing[] {
  const item = raw as {
    resource?: unknown;
    description?: unknown;
    accepts?: unknown;
    extensions?: { bazaar?: { info?: { input?: { method?: unknown } } } };
  } | null;
  if (
    !item ||
    typeof item.resource !== "string" ||
    !isWebUrl(item.resource) ||
    !Array.isArray(item.accepts)
  ) {
    return [];
  }
  const out: Listing[] = [];
  for (const a of item.accepts as Record<string, unknown>[]) {
    if (!a || typeof a !== "object") continue;
    const network = typeof a.network === "string" ? a.network.toLowerCase() : "";
    const asset = typeof a.asset === "string" ? a.asset.toLowerCase() : "";
    const payTo = typeof a.payTo === "string" ? a.payTo.toLowerCase() : "";
    const amount = typeof a.amount === "string" ? a.amount : a.maxAmountRequired;
    if (!BASE_NETWORKS.has(network) || asset !== BASE_USDC || !/^0x[0-9a-f]{40}$/.test(payTo)) continue;
    if (typeof amount !== "string" || !/^\d{1,18}$/.test(amount)) continue;
    const v1 = a.outputSchema as { input?: { method?: unknown } } | undefined;
    const method = String(
      item.extensions?.bazaar?.info?.input?.method ?? v1?.input?.method ?? "",
    ).toUpperCase();
    const description = typeof item.description === "string" ? item.description : a.description;
    out.push({
      payTo,
      resource: item.resource,
      method: METHODS.has(method) ? method : "",
      priceUsd: Number(amount) / 1e6,
      description: typeof description === "string" ? description : "",
    });
  }
  return out;
}

function isWebUrl(value: string): boolean {
  return value.length <= 2048 && /^https?:\/\/[^\s/?#]+[^\s]*$/.test(value);
}

/** GET with retries on 429, 5xx, timeouts and dropped connections. */
async function getJson(url: URL, options: DiscoveryOptions): Promise<unknown> {
  const attempts = options.attempts ?? DEFAULT_BACKOFF.attempts;
  const doFetch = options.fetch ?? globalThis.fetch;
  for (let attempt = 1; ; attempt++) {
    let reason: string;
    try {
      const timeout = timeoutSignal(options.timeoutMs ?? 30_000);
      const response = await fetchWithin(
        url,
        {
          headers: { accept: "application/json" },
          signal: options.signal ? AbortSignal.any([timeout, options.signal]) : timeout,
        },
        doFetch,
      );
      const text = await response.text();
      if (response.ok) {
        try {
          return JSON.parse(text);
        } catch {
          reason = "a body that is not JSON";
        }
      } else if (response.status === 429 || response.status >= 500) {
        reason = `HTTP ${response.status}`;
      } else {
        throw new DiscoveryError(`${url.origin}${url.pathname} answered HTTP ${response.status}`);
      }
    } catch (error) {
      if (error instanceof DiscoveryError) throw error;
      options.signal?.throwIfAborted();
      reason = (error as Error).message;
    }
    if (attempt >= attempts) {
      throw new DiscoveryError(`${url.origin}${url.pathname} failed ${attempt} times, last: ${reason}`);
    }
    await sleep(backoffDelay(attempt, DEFAULT_BACKOFF), options.signal);
    options.signal?.throwIfAborted();
  }
}
