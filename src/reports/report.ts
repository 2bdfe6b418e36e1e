import { cutDescription, type Listing, listingHost, sortListings } from "./listings.ts";
import { apportionCents, centsToUsd, ratio, toCents, usd2, usd6 } from "./money.ts";
import type { Report } from "./schema.ts";
import { FLAG_KINDS } from "./screens/index.ts";
import type { DailyAggregate, MerchantAggregate } from "./sql.ts";
import { type ReportWindow, windowDates } from "./window.ts";

export const LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/";
export const FLAG_NOTE =
  "A flag marks a pattern in public on-chain data, not a finding of wrongdoing: a merchant testing its own endpoint, one large customer or a high-volume integration can trip a screen.";

export interface MerchantInfo {
  address: string;
  name: string | null;
  claimed: boolean;
  frozen: boolean;
  listings: Listing[];
}

export interface ReportContext {
  window: ReportWindow;
  generatedAt: string;
  /** Base of the page and badge URLs, without a trailing slash. */
  publicUrl: string;
  rank: number | null;
}

/** A merchant with no payment in the window. */
export function emptyAggregate(address: string): MerchantAggregate {
  return {
    pay_to: address,
    tx: 0n,
    amount: 0n,
    buyers: 0n,
    real_tx: 0n,
    real_amount: 0n,
    real_buyers: 0n,
    top_amount: 0n,
    quartiles: [0, 0, 0],
    median_passing: null,
    hub_linked_buyers: 0n,
    flags: {},
  };
}

export function pagePath(address: string): string {
  return `/reports/base/${address}`;
}

export function badgePath(address: string): string {
  return `/badges/base/${address}.svg`;
}

/** Assembles one report from the window's aggregates: all rounding and wording happen here. */
export function buildReport(
  agg: MerchantAggregate,
  daily: readonly DailyAggregate[],
  info: MerchantInfo,
  ctx: ReportContext,
): Report {
  const name = info.name ?? listingHost(info.listings) ?? info.address;
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

  const byDate = new Map(daily.map((d) => [d.day.toISOString().slice(0, 10), d]));
  const [p25 = 0, median = 0, p75 = 0] = agg.quartiles;

  return {
    schema_version: "1",
    generated_at: ctx.generatedAt,
    license: LICENSE_URL,
    chain: "base",
    address: info.address,
    name,
    claimed: info.claimed,
    frozen: info.frozen,
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
    bazaar_listings: sortListings(info.listings).map((l) => ({
      resource: l.resource,
      price_usd: l.price_usd,
      description: cutDescription(l.description),
    })),
    daily: windowDates(ctx.window).map((date) => {
      const d = byDate.get(date);
      return {
        date,
        tx: Number(d?.tx ?? 0n),
        usd: usd2(d?.amount ?? 0n),
        real_usd: usd2(d?.real_amount ?? 0n),
      };
    }),
    page: ctx.publicUrl + pagePath(info.address),
    badge: ctx.publicUrl + badgePath(info.address),
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
