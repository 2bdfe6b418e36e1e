import { cutDescription, listingHost, sortListings } from "./listings.ts";
import { apportionCents, centsToUsd, ratio, toCents, usd6 } from "./money.ts";
import type { Report } from "./schema.ts";
import { FLAG_KINDS } from "./screens/index.ts";
import type { MerchantAggregate } from "./sql.ts";
import type { ReportWindow } from "./window.ts";

export const LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/";
export const FLAG_NOTE =
  "A flag marks a pattern in public on-chain data, not a finding of wrongdoing: a merchant testing its own endpoint, one large customer or a high-volume integration can trip a screen.";

export interface ReportContext {
  window: ReportWindow;
  /** `windowDates(window)`, computed once per build. */
  dates: readonly string[];
  generatedAt: string;
  /** Base of the page and badge URLs, without a trailing slash. */
  publicUrl: string;
  rank: number | null;
}

export function pagePath(address: string): string {
  return `/reports/base/${address}`;
}

export function badgePath(address: string): string {
  return `/badges/base/${address}.svg`;
}

/**
 * Assembles one report from the window's aggregates: all wording and the rounding of totals happen
 * here; daily cents arrive rounded by the same rule (`sqlCents` in money.ts).
 */
export function buildReport(agg: MerchantAggregate, ctx: ReportContext): Report {
  const name = agg.name ?? listingHost(agg.listings) ?? agg.address;
  const usdCents = toCents(agg.amount);
  const realCents = toCents(agg.real_amount);
  const kinds = FLAG_KINDS.filter((k) => agg.flags[k]);
  const flagCents = apportionCents(
    kinds.map((k) => agg.flags[k]?.amount ?? 0n),
    usdCents - realCents,
  );
  const flags: Report["flags"] = {};
  kinds.forEach((k, i) => {
    flags[k] = { tx: Number(agg.flags[k]?.tx ?? 0n), usd: centsToUsd(flagCents[i] ?? 0n) };
  });

  const endDate = ctx.window.end.slice(0, 10);
  const percent = ratio(agg.real_amount, agg.amount, 2) * 100;
  const claim =
    `${name} received $${centsToUsd(realCents).toFixed(2)} of x402 payments passing every screen ` +
    `(${Math.round(percent)}% of $${centsToUsd(usdCents).toFixed(2)} reported) from ${agg.real_buyers} of ` +
    `${agg.buyers} buyer wallets on Base in the ${ctx.window.days} days to ${endDate}.`;

  const daily = ctx.dates.map((date) => ({ date, tx: 0, usd: 0, real_usd: 0 }));
  for (const [day, tx, cents, realCents] of agg.daily) {
    const d = daily[day];
    if (d) Object.assign(d, { tx, usd: cents / 100, real_usd: realCents / 100 });
  }
  const [p25 = 0, median = 0, p75 = 0] = agg.quartiles;

  return {
    schema_version: "1",
    generated_at: ctx.generatedAt,
    license: LICENSE_URL,
    chain: "base",
    address: agg.address,
    name,
    claimed: agg.claimed,
    frozen: agg.frozen,
    last_seen_week: endDate,
    rank_by_real_revenue: ctx.rank,
    window: ctx.window,
    claim,
    tx: Number(agg.tx),
    usd: centsToUsd(usdCents),
    real_tx: Number(agg.real_tx),
    real_usd: centsToUsd(realCents),
    buyers: Number(agg.buyers),
    real_buyers: Number(agg.real_buyers),
    top_buyer_share: ratio(agg.top_amount, agg.amount, 4),
    flags,
    flag_note: FLAG_NOTE,
    exchange_flow_note: exchangeFlowNote(agg.hub_linked_buyers),
    paid: {
      median: usd6(median),
      p25: usd6(p25),
      p75: usd6(p75),
      median_passing: usd6(agg.median_passing ?? 0),
    },
    bazaar_listings: sortListings(agg.listings).map((l) => ({
      resource: l.resource,
      price_usd: l.price_usd,
      description: cutDescription(l.description),
    })),
    daily,
    page: ctx.publicUrl + pagePath(agg.address),
    badge: ctx.publicUrl + badgePath(agg.address),
  };
}

/**
 * Screens do not follow money through hubs (exchanges, bridges): nearly every wallet shares one.
 * When some passing buyers received money from this merchant only through such a hub, say so.
 */
export function exchangeFlowNote(hubLinkedBuyers: bigint): string | null {
  if (hubLinkedBuyers === 0n) return null;
  const who = hubLinkedBuyers === 1n ? "1 passing buyer wallet" : `${hubLinkedBuyers} passing buyer wallets`;
  return (
    `${who} received USDC that left this merchant through a high-volume wallet such as an exchange in the same window. ` +
    "Screens do not follow money through such wallets, so these payments count as real; they may still be recycled funds."
  );
}
