import { makeBadge } from "badge-maker";
import type { Report } from "../schema.ts";
import { realPercent } from "../week/money.ts";
import { spanShort } from "../week/span.ts";

export const BADGE_LABEL = "x402 real revenue";

/** Shields.io colour name for a real share; any real revenue at all is orange rather than grey. */
export function badgeColor(percent: number, realUsd: number): string {
  if (percent >= 90) return "brightgreen";
  if (percent >= 60) return "green";
  if (percent >= 30) return "yellow";
  return realUsd > 0 ? "orange" : "lightgrey";
}

/**
 * The merchant's SVG badge: real dollars over the window and their share of the reported dollars,
 * e.g. "$1234.56/7d · 87%". A merchant the operator holds out of the ranking has a badge that says "held"
 * instead of advertising figures. Its title (what a pointer over it shows) and its `data-methodology` name
 * the methodology the figures were built under, which the picture has no room for.
 * The output depends on the report only, so it can be cached and compared byte for byte.
 * @example c.body(renderBadge(report)) // with Content-Type image/svg+xml
 */
export function renderBadge(report: BadgeFigures): string {
  const { version } = report.methodology;
  return makeBadge(badgeFace(report)).replace(
    /^<svg ([^>]*)><title>([^<]*)<\/title>/,
    `<svg $1 data-methodology="${version}"><title>$2 (methodology ${version})</title>`,
  );
}

/** What a badge shows: a report's, or the sum of a merchant's reports across chains (serve/across.ts). */
export type BadgeFigures = Pick<Report, "held" | "methodology" | "usd" | "real_usd"> & {
  window: Pick<Report["window"], "days">;
};

function badgeFace(report: BadgeFigures) {
  if (report.held) return { label: BADGE_LABEL, message: "held", color: "lightgrey", style: "flat" } as const;
  // "/7d" for a week; a young chain's window reads "/56s" or "/3h".
  const span = `/${spanShort(report.window.days)}`;
  const percent = realPercent(report);
  const message = report.usd > 0 ? `$${report.real_usd.toFixed(2)}${span} · ${percent}%` : `$0.00${span}`;
  return { label: BADGE_LABEL, message, color: badgeColor(percent, report.real_usd), style: "flat" } as const;
}
