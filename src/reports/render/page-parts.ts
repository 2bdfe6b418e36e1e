/**
 * What the report page and the home page both show: the window in a sentence, the link that keeps it, the
 * links to the data, and how they write numbers.
 */
import { storeChains } from "../../chain/chains.ts";
import { html, type Markup, nothing } from "../../common/html.ts";
import type { Report } from "../schema.ts";
import { flagsRoot } from "../week/flags.ts";
import { realPercent } from "../week/money.ts";
import { spanText } from "../week/span.ts";
import { isShortWindow } from "../week/window.ts";

/** The JSON a chain's (its slug's) pages link to. */
export const jsonLinks = (chain: string) => ({
  schema: "/v1/schema/report.json",
  ndjson: `/v1/datasets/${chain}/reports.ndjson`,
  csv: `/v1/datasets/${chain}/reports.csv`,
  evidence: `/v1/datasets/${chain}/evidence.ndjson`,
  leaderboard: `/v1/leaderboard/${chain}`,
  flags: flagsRoot(chain),
  flagsNdjson: `/v1/datasets/${chain}/flags.ndjson`,
});

/**
 * The rankings of the chains with data (`held`, slugs), the one shown (`current`) marked as the page a reader is
 * on; nothing where only one chain has data.
 */
export function chainNav(current: string, held: readonly string[]): Markup {
  if (held.length < 2) return nothing;
  // Every chain's ranking together, after the chains' own.
  const pages = [
    ...storeChains.list.filter((c) => held.includes(c.slug)).map((c) => ({ slug: c.slug, name: c.name })),
    { slug: "all", name: "every chain" },
  ];
  const links = pages.map((c) =>
    c.slug === current
      ? html`<a href="${rankingPath(1, c.slug)}" aria-current="page">${c.name}</a>`
      : html`<a href="${rankingPath(1, c.slug)}">${c.name}</a>`,
  );
  return html`<p class="nav">Chains: ${links.flatMap((l, i) => (i === 0 ? [l] : [html` · `, l]))}</p>`;
}

/** A chain's name as the pages say it ("Base", "Polygon PoS"), from its slug. */
export const chainName = (slug: string): string => storeChains.bySlug.get(slug)?.name ?? slug;

/**
 * Where page `n` of a chain's ranking for people is: Base's is the home page, then `/ranking/2`, ...; another
 * chain's is `/chains/<slug>`, then `/chains/<slug>/ranking/2`, ...
 */
export function rankingPath(n: number, chain = "base"): string {
  const root = chain === "base" ? "" : `/chains/${chain}`;
  return n === 1 ? root || "/" : `${root}/ranking/${n}`;
}

export const count = new Intl.NumberFormat("en-US");
const money = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export const usd = (n: number) => `$${money.format(n)}`;
// The claim's percent, the badge's and the leaderboard's: one rule (week/money.ts).
export const realShare = (m: { usd: number; real_usd: number }) => (m.usd > 0 ? `${realPercent(m)}%` : "–");
export const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

export function dataLinks(first: Markup, chain: string): Markup {
  const links = jsonLinks(chain);
  return html`<ul>
${first}<li><a href="${links.schema}">JSON Schema of a report</a></li>
<li>Every merchant's latest report as <a href="${links.ndjson}">NDJSON</a> or <a href="${links.csv}">CSV</a>, and the evidence behind every flag as <a href="${links.evidence}">NDJSON</a></li>
<li>Every flagged wallet, with the merchants and screens that flagged it: <a href="${links.flags}">the flag feed</a> (JSON, in pages) or <a href="${links.flagsNdjson}">NDJSON</a></li>
</ul>`;
}

/** The window in one sentence: blocks, dates and whether every block has been indexed. */
export function windowText(w: Report["window"]): Markup {
  // A short window is always incomplete; the reason a reader needs is the chain's age, not the indexer.
  const state = isShortWindow(w)
    ? `Incomplete: the chain is younger than a week: this report covers its whole life, ${spanText(w.days)}, and its figures will grow with it.`
    : w.complete
      ? "Complete: every block of the window has been indexed."
      : "Incomplete: not every block of the window has been indexed yet, so the figures may still change.";
  return html`<p class="window">Blocks ${count.format(w.start_block)} to ${count.format(w.end_block)}, from ${when(w.start)} to ${when(w.end)} (${spanText(w.days)}). ${state}</p>`;
}

/**
 * Which window the figures belong to, and a link that keeps them: without `end_block` a page shows the
 * latest window, which moves on with every block indexed.
 */
export function permalink(path: string, w: Report["window"]): Markup {
  return html`<p class="note">Every figure on this page is for the window ending at block ${count.format(w.end_block)}. <a href="${path}?end_block=${w.end_block}">Permanent link to this window's report</a>: the page without <code>end_block</code> always shows the latest window, which moves on with every block indexed.</p>`;
}
