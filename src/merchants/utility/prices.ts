/**
 * The utility API's price list: its rows in the order docs/platform.md lists them, in USD a call. Every endpoint takes
 * its price from here (an endpoint's sub-operations, `/api/store/insert`, and the row's companion,
 * `/api/icon/generate`, at their row's price), and the order is the order of the catalogue, the OpenAPI
 * document and the reference page.
 */
export const PRICES = {
  "/api/seo/alt-check": "0.001",
  "/api/scrape": "0.001",
  "/api/ping": "0.001",
  "/api/store": "0.001",
  "/api/timezone": "0.001",
  "/api/geo": "0.001",
  "/api/calc": "0.001",
  "/api/a11y/contrast": "0.001",
  "/api/scratchpad": "0.001",
  "/api/seo/metadata": "0.001",
  "/api/summarize": "0.002",
  "/api/dns": "0.002",
  "/api/email/verify": "0.002",
  "/api/icon/search": "0.002",
  "/api/data/convert": "0.005",
  "/v1/messages": "0.01",
  "/api/search": "0.01",
  "/api/qr": "0.01",
  "/api/a11y/check": "0.01",
  "/api/translate-text": "0.01",
  "/api/uptime/report": "0.01",
  "/api/vectorize": "0.02",
  "/api/generate-image": "0.07",
} as const;

/** A path with a row of the price list. */
export type SpecPath = keyof typeof PRICES;

/** The paths of the price list in its order; an endpoint's sub-operations follow their path. */
export const SPEC_ORDER: readonly string[] = Object.keys(PRICES);

/** Paths the spec names inside another path's row, listed and priced with it (/api/icon/search, docs/platform.md, "The utility API's endpoints"). */
const COMPANIONS: Record<string, SpecPath> = { "/api/icon/generate": "/api/icon/search" };

/** The price list's path an endpoint belongs to: itself, the path it extends (`/api/store/insert`) or its companion. */
export function specPathOf(path: string): string | undefined {
  return COMPANIONS[path] ?? SPEC_ORDER.find((p) => path === p || path.startsWith(`${p}/`));
}
