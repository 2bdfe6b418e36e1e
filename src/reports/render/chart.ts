import { escapeText } from "../../common/html.ts";
import type { Report } from "../schema.ts";

/** The two series' colours; the page's legend and table reuse them. Light vs dark stays legible without hue. */
export const CHART_COLORS = { usd: "#b3c6e0", real_usd: "#0b6e4f" } as const;

const WIDTH = 560;
const HEIGHT = 230;
const PAD = { top: 36, right: 10, bottom: 30, left: 62 };
const PLOT_W = WIDTH - PAD.left - PAD.right;
const PLOT_H = HEIGHT - PAD.top - PAD.bottom;
// More labels than this collide at the chart's width, so longer ranges label every nth day.
const MAX_LABELS = 16;

const dollars = (n: number) => `$${n.toFixed(2)}`;
// Coordinates rounded so the markup stays short and byte-stable.
const px = (n: number) => String(Math.round(n * 100) / 100);
// Sums of 2-decimal figures drift in binary floating point; cents do not.
const sumUsd = (values: readonly number[]) => values.reduce((s, v) => s + Math.round(v * 100), 0) / 100;

/**
 * The report's daily figures as a self-contained SVG bar chart: per date a reported-usd bar with the
 * real-usd bar beside it, MM-DD labels, the maximum on the y axis and a text summary for screen readers.
 * With no payments (or no dates) it draws the empty axes.
 * @example c.html(`<figure>${dailyChartSvg(report.daily)}</figure>`)
 */
export function dailyChartSvg(daily: Report["daily"]): string {
  const max = Math.max(0, ...daily.map((d) => Math.max(d.usd, d.real_usd)));
  const summary = chartSummary(daily, max);
  const baseline = PAD.top + PLOT_H;
  const slot = daily.length > 0 ? PLOT_W / daily.length : PLOT_W;
  const barW = Math.min(28, slot * 0.36);
  const labelEvery = Math.ceil(daily.length / MAX_LABELS);
  const height = (v: number) => {
    if (max <= 0 || v <= 0) return 0;
    // A day with a few cents next to a big day would vanish; keep it one pixel tall.
    return Math.max(1, (v / max) * PLOT_H);
  };

  const groups = daily.map((d, i) => {
    const center = PAD.left + slot * (i + 0.5);
    const hUsd = height(d.usd);
    const hReal = height(d.real_usd);
    const label = i % labelEvery === 0 ? d.date.slice(5) : "";
    const tip = `${d.date}: ${dollars(d.usd)} reported, ${dollars(d.real_usd)} real, ${d.tx} payments`;
    return (
      `<g class="day" data-date="${escapeText(d.date)}"><title>${escapeText(tip)}</title>` +
      `<rect class="usd" x="${px(center - barW)}" y="${px(baseline - hUsd)}" width="${px(barW)}" height="${px(hUsd)}" fill="${CHART_COLORS.usd}"/>` +
      `<rect class="real" x="${px(center)}" y="${px(baseline - hReal)}" width="${px(barW)}" height="${px(hReal)}" fill="${CHART_COLORS.real_usd}"/>` +
      (label
        ? `<text x="${px(center)}" y="${HEIGHT - 11}" text-anchor="middle">${escapeText(label)}</text>`
        : "") +
      "</g>"
    );
  });

  const legendY = 14;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" ` +
    `role="img" aria-label="${escapeText(summary)}" font-family="system-ui, sans-serif" font-size="13" fill="#333">` +
    `<title>${escapeText(summary)}</title>` +
    `<g class="legend"><rect x="${PAD.left}" y="${legendY - 9}" width="10" height="10" fill="${CHART_COLORS.usd}"/>` +
    `<text x="${PAD.left + 14}" y="${legendY}">reported usd</text>` +
    `<rect x="${PAD.left + 120}" y="${legendY - 9}" width="10" height="10" fill="${CHART_COLORS.real_usd}"/>` +
    `<text x="${PAD.left + 134}" y="${legendY}">real usd</text></g>` +
    `<g class="y-axis" text-anchor="end"><text x="${PAD.left - 6}" y="${PAD.top + 4}">${escapeText(dollars(max))}</text>` +
    `<text x="${PAD.left - 6}" y="${baseline + 4}">$0</text>` +
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${WIDTH - PAD.right}" y2="${PAD.top}" stroke="#ddd" stroke-dasharray="3 3"/></g>` +
    groups.join("") +
    `<line class="baseline" x1="${PAD.left}" y1="${baseline}" x2="${WIDTH - PAD.right}" y2="${baseline}" stroke="#888"/>` +
    "</svg>"
  );
}

/** One sentence a screen reader can use instead of the bars. */
function chartSummary(daily: Report["daily"], max: number): string {
  const first = daily[0];
  const last = daily.at(-1);
  if (!first || !last) return "Daily x402 payments: no dates in this window.";
  const usd = sumUsd(daily.map((d) => d.usd));
  const real = sumUsd(daily.map((d) => d.real_usd));
  return (
    `Daily x402 payments from ${first.date} to ${last.date}: ${dollars(usd)} reported, ` +
    `${dollars(real)} real; the largest day was ${dollars(max)}.`
  );
}
