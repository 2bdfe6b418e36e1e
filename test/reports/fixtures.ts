import { expect } from "vitest";
import type { Leaderboard, LeaderboardEntry, ReportDetails, UnrankedEntry } from "../../src/reports/model.ts";
import { type Report, ReportSchema } from "../../src/reports/schema.ts";
import { METHODOLOGY_VERSION } from "../../src/reports/screens/methodology.ts";

export const MERCHANT = "0x1111111111111111111111111111111111111111";
export const PAYER = "0x2222222222222222222222222222222222222222";
const PUBLIC_URL = "https://x402-merchants.example";

const WINDOW: Report["window"] = {
  start_block: 30_000_000,
  end_block: 30_302_400,
  complete: true,
  start: "2025-06-01T12:00:00+00:00",
  end: "2025-06-08T12:00:00+00:00",
  days: 7,
};

/**
 * A report that satisfies the schema and the spec's invariants (one tiny_repeat flag accounts for
 * tx - real_tx and usd - real_usd). Overrides are shallow; the result is checked by `ReportSchema`.
 */
export function makeReport(overrides: Partial<Report> = {}): Report {
  const base: Report = {
    schema_version: "1",
    generated_at: "2025-06-08T13:00:00+00:00",
    license: "https://creativecommons.org/licenses/by/4.0/",
    chain: "base",
    address: MERCHANT,
    name: "api.example.com",
    claimed: false,
    frozen: false,
    last_seen_week: "2025-06-08",
    rank_by_real_revenue: 1,
    window: WINDOW,
    claim:
      "api.example.com received $10.00 of x402 payments passing every screen (83% of $12.00 reported) " +
      "from 9 of 10 buyer wallets on Base in the 7 days to 2025-06-08.",
    tx: 1200,
    usd: 12,
    real_tx: 1000,
    real_usd: 10,
    buyers: 10,
    real_buyers: 9,
    top_buyer_share: 0.2345,
    flags: { tiny_repeat: { tx: 200, usd: 2 } },
    flag_note: "A flag marks a pattern in public on-chain data, not a finding of wrongdoing.",
    exchange_flow_note: null,
    paid: { median: 0.01, p25: 0.005, p75: 0.012, median_passing: 0.01 },
    bazaar_listings: [
      { resource: "https://api.example.com/api/ping", price_usd: 0.001, description: "Ping a public URL." },
      {
        resource: "https://api.example.com/api/search",
        price_usd: 0.01,
        description: "Web search, with an answer.",
      },
    ],
    daily: [
      { date: "2025-06-01", tx: 50, usd: 0.5, real_usd: 0.5 },
      { date: "2025-06-02", tx: 150, usd: 1.5, real_usd: 1.2 },
      { date: "2025-06-03", tx: 200, usd: 2, real_usd: 1.6 },
      { date: "2025-06-04", tx: 0, usd: 0, real_usd: 0 },
      { date: "2025-06-05", tx: 250, usd: 2.5, real_usd: 2.1 },
      { date: "2025-06-06", tx: 300, usd: 3, real_usd: 2.4 },
      { date: "2025-06-07", tx: 200, usd: 2, real_usd: 1.7 },
      { date: "2025-06-08", tx: 50, usd: 0.5, real_usd: 0.5 },
    ],
    page: `${PUBLIC_URL}/reports/base/${MERCHANT}`,
    badge: `${PUBLIC_URL}/badges/base/${MERCHANT}.svg`,
    schemes: {
      exact: { tx: 1000, usd: 10, real_tx: 800, real_usd: 8, tx_counts: "payments" },
      "batch-settlement": { tx: 200, usd: 2, real_tx: 200, real_usd: 2, tx_counts: "claims" },
    },
    methodology: { version: METHODOLOGY_VERSION, url: `${PUBLIC_URL}/screens#changelog` },
    held: false,
  };
  return ReportSchema.parse({ ...base, ...overrides });
}

/** A report with no payments at all: every figure 0, nothing flagged, unranked. */
export function makeEmptyReport(overrides: Partial<Report> = {}): Report {
  const base = makeReport();
  return makeReport({
    tx: 0,
    usd: 0,
    real_tx: 0,
    real_usd: 0,
    buyers: 0,
    real_buyers: 0,
    top_buyer_share: 0,
    flags: {},
    rank_by_real_revenue: null,
    paid: { median: 0, p25: 0, p75: 0, median_passing: 0 },
    daily: base.daily.map((d) => ({ ...d, tx: 0, usd: 0, real_usd: 0 })),
    schemes: {},
    ...overrides,
  });
}

export function makeDetails(flagged: ReportDetails["flagged_wallets"] = {}): ReportDetails {
  return { flagged_wallets: flagged };
}

export function makeLeaderboard(merchants: LeaderboardEntry[], unranked: UnrankedEntry[] = []): Leaderboard {
  return {
    chain: "base",
    generated_at: "2025-06-08T13:00:00+00:00",
    license: "https://creativecommons.org/licenses/by/4.0/",
    window: WINDOW,
    totals: {
      merchants: merchants.length + unranked.length,
      ranked: merchants.length,
      unranked: unranked.length,
    },
    page: { number: 1, size: 100, pages: 1 },
    merchants,
    unranked,
  };
}

/** An address made of one repeated hex digit, for readable distinct wallets. */
export function wallet(digit: string): string {
  return `0x${digit.repeat(40)}`;
}

/**
 * Checks that markup is well-formed XML as far as a renderer cares: tags nest and close, attributes
 * are quoted, and no `<` or bare `&` appears in text. No XML parser is installed, so a small scanner.
 */
export function expectWellFormedXml(markup: string): void {
  const stack: string[] = [];
  const token = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|<!--[\s\S]*?-->|([^<]+)|(<)/g;
  for (const m of markup.matchAll(token)) {
    const [, closing, tag, , selfClosing, text, stray] = m;
    if (stray) throw new Error(`stray "<" at ${m.index}: ${markup.slice(m.index, m.index + 40)}`);
    if (text !== undefined) {
      expect(text, "text with a bare & or >").not.toMatch(/&(?!(amp|lt|gt|quot|#\d+);)/);
      continue;
    }
    if (!tag || selfClosing) continue;
    if (closing) expect(stack.pop(), `closing </${tag}>`).toBe(tag);
    else stack.push(tag);
  }
  expect(stack, "unclosed elements").toEqual([]);
}
