import { html, type Markup, nothing, trusted } from "../common/html.ts";
import { BADGE_LABEL } from "./badge.ts";
import { CHART_COLORS, dailyChartSvg } from "./chart.ts";
import { realPercent } from "./money.ts";
import type { Report } from "./schema.ts";
import { FLAG_KINDS, SCREENS, SCREENS_PATH } from "./screens/index.ts";
import {
  LEADERBOARD_PAGE_SIZE,
  type Leaderboard,
  type ReportDetails,
  type UnrankedEntry,
  type UnrankedReason,
} from "./service.ts";
import { spanText } from "./span.ts";
import { isShortWindow } from "./window.ts";

const JSON_LINKS = {
  schema: "/v1/schema/report.json",
  ndjson: "/v1/datasets/base/reports.ndjson",
  csv: "/v1/datasets/base/reports.csv",
  evidence: "/v1/datasets/base/evidence.ndjson",
  leaderboard: "/v1/leaderboard/base",
};

const count = new Intl.NumberFormat("en-US");
const money = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
// Per-payment amounts are fractions of a cent; USDC has 6 decimals.
const price = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 });
const share = new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 2 });

const payments = (n: number) => (n === 1 ? "1 payment" : `${count.format(n)} payments`);
const usd = (n: number) => `$${money.format(n)}`;
const usdPrice = (n: number) => `$${price.format(n)}`;
// The claim's percent, the badge's and the leaderboard's: one rule (money.ts).
const realShare = (m: { usd: number; real_usd: number }) => (m.usd > 0 ? `${realPercent(m)}%` : "–");
const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
const isHttp = (url: string) => /^https?:\/\//i.test(url);

const CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff}
main,header,footer{max-width:60rem;margin:0 auto;padding:0 1rem}
header{padding-top:1.5rem}
h1{font-size:1.75rem;margin:.25rem 0;overflow-wrap:anywhere}
h2{font-size:1.25rem;margin:2rem 0 .5rem;border-bottom:1px solid #d0d7de;padding-bottom:.25rem}
h3{font-size:1.05rem;margin:1.25rem 0 .25rem}
a{color:#0550ae}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.addr{overflow-wrap:anywhere;color:#57606a;margin:0}
code.addr{font-size:.8em}
.nav{margin:0;font-size:.9rem}
.notice{background:#fff8c5;border-bottom:3px solid #d4a72c;padding:.75rem 1rem;text-align:center;font-weight:600}
.state{display:flex;flex-wrap:wrap;gap:.5rem;list-style:none;padding:0;margin:.75rem 0}
.state li{border:1px solid #d0d7de;border-radius:1rem;padding:.1rem .75rem;font-size:.9rem}
.state .frozen{background:#ddf4ff;border-color:#54aeff}
.claim{font-size:1.2rem;border-left:4px solid ${CHART_COLORS.real_usd};background:#f6f8fa;padding:.75rem 1rem;margin:1.25rem 0}
.note{color:#57606a;font-size:.95rem}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
caption{text-align:left;color:#57606a;font-size:.9rem;padding-bottom:.25rem}
th,td{padding:.35rem .5rem;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}
th{font-weight:600;background:#f6f8fa}
tbody th{background:none;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td code{overflow-wrap:anywhere}
.empty{text-align:center;color:#57606a;padding:1rem}
figure{margin:.5rem 0}
.chart svg{display:block;min-width:22rem;max-width:46rem}
dl.figures{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem 1rem;margin:.5rem 0}
dl.figures dt{color:#57606a}
dl.figures dd{margin:0;font-variant-numeric:tabular-nums}
pre{background:#f6f8fa;padding:.75rem;overflow-x:auto;user-select:all;white-space:pre-wrap;overflow-wrap:anywhere}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:baseline}
@media (max-width:40rem){body{font-size:15px}table{font-size:.875rem}th,td{padding:.3rem .25rem}h1{font-size:1.5rem}}
footer{margin-top:3rem;padding-bottom:2rem;border-top:1px solid #d0d7de;color:#57606a;font-size:.9rem}
`;

/** A whole HTML document around `body`, with the pages' one stylesheet inline. */
export function documentShell(title: string, body: Markup, head: Markup = nothing): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${head}<style>${trusted(CSS)}</style>
</head>
<body>
${body}
</body>
</html>
`.toString();
}

/** A banner over every page when the data is not the real chain's (the sample week, the devnet demo). */
export function noticeBanner(notice: string | undefined): Markup {
  if (!notice) return nothing;
  return html`<div class="notice" role="note">${notice}</div>`;
}

export function licenceFooter(license: string, extra: Markup = nothing): Markup {
  return html`<footer><p><a href="${SCREENS_PATH}">How the screens work</a>: every rule and threshold behind the real figures.</p><p>The reports and datasets are published under the <a rel="license" href="${license}">Creative Commons Attribution 4.0 International licence (CC BY 4.0)</a>: reuse them freely, naming x402-merchants as the source.${extra}</p></footer>`;
}

function dataLinks(first: Markup): Markup {
  return html`<ul>
${first}<li><a href="${JSON_LINKS.schema}">JSON Schema of a report</a></li>
<li>Every merchant's latest report as <a href="${JSON_LINKS.ndjson}">NDJSON</a> or <a href="${JSON_LINKS.csv}">CSV</a>, and the evidence behind every flag as <a href="${JSON_LINKS.evidence}">NDJSON</a></li>
</ul>`;
}

/** The window in one sentence: blocks, dates and whether every block has been indexed. */
function windowText(w: Report["window"]): Markup {
  // A short window is always incomplete; the reason a reader needs is the chain's age, not the indexer.
  const state = isShortWindow(w)
    ? `Incomplete: the chain is younger than a week: this report covers its whole life, ${spanText(w.days)}, and its figures will grow with it.`
    : w.complete
      ? "Complete: every block of the window has been indexed."
      : "Incomplete: not every block of the window has been indexed yet, so the figures may still change.";
  return html`<p class="window">Blocks ${count.format(w.start_block)} to ${count.format(w.end_block)}, from ${when(w.start)} to ${when(w.end)} (${spanText(w.days)}). ${state}</p>`;
}

function stateList(report: Report): Markup {
  const claimed = report.claimed
    ? html`<li>Claimed: the merchant has claimed this page.</li>`
    : html`<li>Unclaimed: nobody has claimed this merchant's page yet.</li>`;
  const rank = report.frozen
    ? html`<li class="frozen">Frozen: this merchant is held out of the ranking; its figures are still reported in full.</li>`
    : report.rank_by_real_revenue !== null
      ? html`<li>Ranked #${report.rank_by_real_revenue} by real revenue</li>`
      : report.real_tx === 0
        ? html`<li>Not ranked: no payment passed every screen in this window.</li>`
        : html`<li>Not ranked: the ${payments(report.real_tx)} that passed every screen add up to less than half a cent ($0.00 once rounded); a rank needs $0.01.</li>`;
  return html`<ul class="state">${claimed}${rank}</ul>`;
}

/** Atomic USDC units (decimal text) as dollars with all six decimals: "0.004200". */
const exactUsd = (atomic: bigint) => {
  const sign = atomic < 0n ? "-" : "";
  const abs = atomic < 0n ? -atomic : atomic;
  return `${sign}$${count.format(abs / 1_000_000n)}.${(abs % 1_000_000n).toString().padStart(6, "0")}`;
};

/** Below this many dollars reported, the figures also show exact amounts: cents would hide most of them. */
const EXACT_BELOW_USD = 1;

function figures(report: Report, details: ReportDetails): Markup {
  const row = (what: string, reported: string, real: string, flagged: string) =>
    html`<tr><th scope="row">${what}</th><td class="num">${reported}</td><td class="num">${real}</td><td class="num">${flagged}</td></tr>`;
  return html`<div class="scroll"><table>
<caption>Reported payments, the ones that pass every screen (real), and the difference (flagged)</caption>
<thead><tr><th scope="col"></th><th scope="col" class="num">Reported</th><th scope="col" class="num">Real</th><th scope="col" class="num">Flagged</th></tr></thead>
<tbody>
${row("Payments", count.format(report.tx), count.format(report.real_tx), count.format(report.tx - report.real_tx))}
${row("US dollars", usd(report.usd), usd(report.real_usd), usd(Math.max(0, Math.round((report.usd - report.real_usd) * 100) / 100)))}
${exactRow(report, details, row)}
${row("Buyer wallets", count.format(report.buyers), count.format(report.real_buyers), count.format(report.buyers - report.real_buyers))}
</tbody></table></div>
<dl class="figures">
<dt>Real share of dollars</dt><dd>${realShare(report)}</dd>
<dt>Largest buyer's share</dt><dd>${share.format(report.top_buyer_share)}</dd>
<dt>Median payment</dt><dd>${usdPrice(report.paid.median)} (middle half ${usdPrice(report.paid.p25)} to ${usdPrice(report.paid.p75)})</dd>
<dt>Median passing payment</dt><dd>${usdPrice(report.paid.median_passing)}</dd>
</dl>`;
}

/** For a merchant of less than `EXACT_BELOW_USD`, the dollar row again at USDC's six decimals. */
function exactRow(
  report: Report,
  details: ReportDetails,
  row: (what: string, reported: string, real: string, flagged: string) => Markup,
): Markup {
  if (!details.exact || report.usd >= EXACT_BELOW_USD || report.tx === 0) return nothing;
  const amount = BigInt(details.exact.amount);
  const real = BigInt(details.exact.real_amount);
  return row("Exact USDC", exactUsd(amount), exactUsd(real), exactUsd(amount - real));
}

/**
 * Which window the figures belong to, and a link that keeps them: without `end_block` a page shows the
 * latest window, which moves on with every block indexed.
 */
function permalink(path: string, w: Report["window"]): Markup {
  return html`<p class="note">Every figure on this page is for the window ending at block ${count.format(w.end_block)}. <a href="${path}?end_block=${w.end_block}">Permanent link to this window's report</a>: the page without <code>end_block</code> always shows the latest window, which moves on with every block indexed.</p>`;
}

/** How every dollar figure on the page is rounded, said once. */
const ROUNDING_RULE =
  "Dollar figures are exact sums of USDC amounts rounded half up to the cent. The days, the flags and each flag's wallets are shares of those totals, rounded down to the cent with the cents left over going to the largest remainders, so every column adds up exactly to its total.";

function daily(report: Report): Markup {
  const rows = report.daily.map(
    (d) =>
      html`<tr><th scope="row">${d.date}</th><td class="num">${count.format(d.tx)}</td><td class="num">${usd(d.usd)}</td><td class="num">${usd(d.real_usd)}</td></tr>`,
  );
  return html`<figure class="chart"><div class="scroll">${trusted(dailyChartSvg(report.daily))}</div><figcaption class="note">US dollars per UTC day: reported, and real (passing every screen).</figcaption></figure>
<div class="scroll"><table>
<caption>Daily figures in US dollars (UTC dates; the first and last are partial days)</caption>
<thead><tr><th scope="col">Date</th><th scope="col" class="num">Payments</th><th scope="col" class="num"><span class="swatch" style="background:${CHART_COLORS.usd}"></span>Reported</th><th scope="col" class="num"><span class="swatch" style="background:${CHART_COLORS.real_usd}"></span>Real</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="4" class="empty">No dates in this window.</td></tr>`}</tbody>
</table></div>`;
}

/** The anchor of one wallet's evidence on the evidence page (evidence/page.ts). */
export const evidenceAnchor = (kind: string, wallet: string) => `${kind}-${wallet}`;

/** The evidence page of the report's window. */
const evidencePath = (report: Report) =>
  `/reports/base/${report.address}/evidence?end_block=${report.window.end_block}`;

/** Kinds to show: the screens' order first, then any kind the details name that no screen has (yet). */
function flagKinds(report: Report, details: ReportDetails): string[] {
  const present = new Set([
    ...Object.keys(report.flags),
    ...Object.entries(details.flagged_wallets)
      .filter(([, wallets]) => wallets.length > 0)
      .map(([kind]) => kind),
  ]);
  return [...FLAG_KINDS.filter((k) => present.delete(k)), ...[...present].sort()];
}

function flags(report: Report, details: ReportDetails): Markup {
  const kinds = flagKinds(report, details);
  const evidence = evidencePath(report);
  const sections = kinds.map((kind) => {
    const flag = report.flags[kind];
    const summary = SCREENS.find((s) => s.kind === kind)?.summary ?? "";
    const wallets = details.flagged_wallets[kind] ?? [];
    const rest = details.more_wallets?.[kind];
    const rows = wallets.map(
      (w) =>
        html`<tr><td><a href="${evidence}#${evidenceAnchor(kind, w.wallet)}" title="Why this wallet was flagged, and its transactions"><code>${w.wallet}</code></a></td><td class="num">${count.format(w.tx)}</td><td class="num">${usd(w.usd)}</td></tr>`,
    );
    if (rest && rest.wallets > 0)
      rows.push(
        html`<tr><td>${count.format(rest.wallets)} more ${rest.wallets === 1 ? "wallet" : "wallets"}</td><td class="num">${count.format(rest.tx)}</td><td class="num">${usd(rest.usd)}</td></tr>`,
      );
    return html`<section class="flag" id="flag-${kind}">
<h3><code>${kind}</code>${flag ? html`: ${payments(flag.tx)}, ${usd(flag.usd)}` : nothing}</h3>
<p>${summary}</p>
${
  rows.length > 0
    ? html`<div class="scroll"><table><caption>Payer wallets that tripped this screen, largest first; each links its evidence</caption>
<thead><tr><th scope="col">Wallet</th><th scope="col" class="num">Payments</th><th scope="col" class="num">US dollars</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
    : nothing
}
</section>`;
  });
  const body =
    sections.length > 0
      ? [
          html`<p><a href="${evidence}">The evidence behind every flag</a>: for each wallet named below, the threshold it crossed, its transactions, and the funding path or cycle (<a href="/v1${evidence}">as JSON</a>).</p>`,
          ...sections,
        ]
      : [html`<p>No screen flagged any payment in this window: every payment counts as real.</p>`];
  const exchange = report.exchange_flow_note
    ? html`<p class="note exchange"><strong>Exchange flows.</strong> ${report.exchange_flow_note}</p>`
    : nothing;
  return html`${body}
<p class="note">${flagNoteMarkup(report.flag_note)}</p>
${exchange}`;
}

/** The flag note, its link to the screens' rules made a link. */
function flagNoteMarkup(note: string): Markup {
  const marker = " How each screen works: ";
  const at = note.lastIndexOf(marker);
  const url = at < 0 ? "" : note.slice(at + marker.length);
  if (!isHttp(url)) return html`${note}`;
  return html`${note.slice(0, at)} <a href="${url}">How each screen works</a>.`;
}

function listings(report: Report): Markup {
  const rows = report.bazaar_listings.map((l) => {
    // Listing URLs come from merchants: only web URLs become links.
    const resource = isHttp(l.resource)
      ? html`<a href="${l.resource}" rel="nofollow noopener"><code>${l.resource}</code></a>`
      : html`<code>${l.resource}</code>`;
    return html`<tr><td>${resource}</td><td class="num">${usdPrice(l.price_usd)}</td><td>${l.description}</td></tr>`;
  });
  return html`<div class="scroll"><table>
<caption>Paid endpoints this merchant lists, cheapest first</caption>
<thead><tr><th scope="col">Resource</th><th scope="col" class="num">Price per call</th><th scope="col">Description</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="3" class="empty">No paid endpoints listed.</td></tr>`}</tbody>
</table></div>`;
}

/**
 * The human page of one merchant's report: a complete HTML document with inline CSS and an inline SVG
 * chart, no scripts and no external assets. Every value from the report is escaped.
 * @example c.html(renderReportPage(report, details, {}))
 */
export function renderReportPage(report: Report, details: ReportDetails, opts: { notice?: string }): string {
  const json = `/v1/reports/base/${report.address}`;
  const markdown = `[![${BADGE_LABEL}](${report.badge})](${report.page})`;
  const body = html`${noticeBanner(opts.notice)}
<header>
<p class="nav"><a href="/">x402 merchants on Base</a></p>
<h1>${report.name}</h1>
<p class="addr">Merchant wallet <code>${report.address}</code> on Base</p>
${stateList(report)}
</header>
<main>
<p class="claim">${report.claim}</p>
<h2>Window</h2>
${windowText(report.window)}
${permalink(`/reports/base/${report.address}`, report.window)}
<h2>Figures</h2>
${figures(report, details)}
<p class="note">${ROUNDING_RULE}${report.usd < EXACT_BELOW_USD && report.tx > 0 ? " This merchant received less than $1, so the exact amounts, to USDC's six decimals, are given as well." : ""}</p>
<h2>Day by day</h2>
${daily(report)}
<h2>Flags</h2>
${flags(report, details)}
<h2>Listings</h2>
${listings(report)}
<h2>Badge</h2>
<p><img src="${report.badge}" alt="${BADGE_LABEL} badge of ${report.name}" height="20"></p>
<p>Embed it in a README with this Markdown:</p>
<pre><code>${markdown}</code></pre>
<h2>Data</h2>
${dataLinks(html`<li><a href="${json}">This merchant's latest report as JSON</a></li>\n`)}
</main>
${licenceFooter(report.license, html` Report generated at ${when(report.generated_at)}, schema version ${report.schema_version}.`)}`;
  const head = html`<meta name="description" content="${report.claim}">
<link rel="alternate" type="application/json" href="${json}">
`;
  return documentShell(
    `${report.name}: x402 payments on Base, ${spanText(report.window.days)} to ${report.last_seen_week}`,
    body,
    head,
  );
}

const UNRANKED_REASONS: Record<UnrankedReason, string> = {
  frozen: "frozen: held out of the ranking",
  no_passing_payment: "no payment passed every screen",
  below_one_cent: "the passing payments add up to less than half a cent",
};

/** The window's merchants without a rank, so the ranking hides no one: count, figures and reason. */
function unrankedTable(unranked: readonly UnrankedEntry[], total: number): Markup {
  if (unranked.length === 0) return nothing;
  const rows = unranked.map(
    (m) => html`<tr>
<td><a href="${m.page}" title="${m.address}">${m.name}</a><br><code class="addr">${m.address}</code></td>
<td class="num">${usd(m.real_usd)}</td>
<td class="num">${usd(m.usd)}</td>
<td class="num">${realShare(m)}</td>
<td>${UNRANKED_REASONS[m.reason]}</td>
</tr>`,
  );
  return html`<h2>Not ranked (${count.format(total)})</h2>
<div class="scroll"><table>
<caption>Merchants of this window without a rank, and why</caption>
<thead><tr><th scope="col">Merchant</th><th scope="col" class="num">Real usd</th><th scope="col" class="num">Reported usd</th><th scope="col" class="num">Real share</th><th scope="col">Why not ranked</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

/** Merchants a page of the ranking for people holds: the home page is its first. */
export const RANKING_PAGE_SIZE = 100;

/** Where page `n` of the ranking for people is: the home page, then `/ranking/2`, `/ranking/3`, ... */
export const rankingPath = (n: number): string => (n === 1 ? "/" : `/ranking/${n}`);

/** Which merchants of how many a page shows, and the links to its neighbours, kept to its window. */
function pager(board: Leaderboard): Markup {
  const { number, size, pages } = board.page;
  const first = (number - 1) * size + 1;
  const last = first + board.merchants.length + board.unranked.length - 1;
  const link = (n: number, rel: string, text: string) =>
    html`<a rel="${rel}" href="${rankingPath(n)}?end_block=${board.window.end_block}">${text}</a>`;
  const shown =
    board.totals.merchants === 0
      ? nothing
      : html`Merchants ${count.format(first)} to ${count.format(last)} of ${count.format(board.totals.merchants)} (${count.format(board.totals.ranked)} ranked). `;
  if (pages === 1) return html`<p class="note">${shown}</p>`;
  return html`<nav class="note" aria-label="Pages of the ranking">${shown}Page ${count.format(number)} of ${count.format(pages)}.${number > 1 ? html` ${link(1, "first", "First")} ${link(number - 1, "prev", "Previous")}` : nothing}${number < pages ? html` ${link(number + 1, "next", "Next")} ${link(pages, "last", "Last")}` : nothing}</nav>`;
}

/**
 * The home page and the ranking's later pages: what the service is and one page of the window's merchants,
 * ranked by real revenue, then those without a rank.
 * @example c.html(renderHomePage(await reports.leaderboard(undefined, { size: RANKING_PAGE_SIZE }), {}))
 */
export function renderHomePage(board: Leaderboard, opts: { notice?: string }): string {
  const end = board.window.end.slice(0, 10);
  const number = board.page.number;
  const rows = board.merchants.map(
    (m) => html`<tr>
<td class="num">${m.rank}</td>
<td><a href="${m.page}" title="${m.address}">${m.name}</a><br><code class="addr">${m.address}</code></td>
<td class="num">${usd(m.real_usd)}</td>
<td class="num">${usd(m.usd)}</td>
<td class="num">${realShare(m)}</td>
<td class="num">${count.format(m.real_buyers)} / ${count.format(m.buyers)}</td>
</tr>`,
  );
  // Past the ranked merchants, a page lists only unranked ones: no empty ranking above them.
  const ranking =
    rows.length === 0 && board.totals.ranked > 0
      ? nothing
      : html`<div class="scroll"><table>
<caption>Merchants ranked by real revenue in the ${spanText(board.window.days)} to ${end}</caption>
<thead><tr><th scope="col" class="num">Rank</th><th scope="col">Merchant</th><th scope="col" class="num">Real usd</th><th scope="col" class="num">Reported usd</th><th scope="col" class="num">Real share</th><th scope="col" class="num">Real / all buyers</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="6" class="empty">No ranked merchants in this window: none has received $0.01 in payments that passed every screen.</td></tr>`}</tbody>
</table></div>`;
  const intro =
    number === 1
      ? html`<p>Weekly reports of the x402 micropayments (USDC on Base) that merchant wallets received. Each report gives the reported totals and the real ones: the payments that pass every screen for wash trading, such as a merchant paying itself or funding its own buyers. A flag marks a pattern in public chain data, not a finding of wrongdoing.</p>`
      : nothing;
  const body = html`${noticeBanner(opts.notice)}
<header>
<h1>x402 merchants on Base${number === 1 ? nothing : html`: page ${count.format(number)} of the ranking`}</h1>
</header>
<main>
${intro}
<h2>Ranking by real revenue</h2>
${windowText(board.window)}
${permalink(rankingPath(number), board.window)}
${pager(board)}
${ranking}
${unrankedTable(board.unranked, board.totals.unranked)}
${board.page.pages > 1 ? pager(board) : nothing}
<h2>Data</h2>
${dataLinks(html`<li><a href="${JSON_LINKS.leaderboard}">The latest ranking as JSON</a>, in pages of ${count.format(LEADERBOARD_PAGE_SIZE)}</li>\n`)}
</main>
${licenceFooter(board.license)}`;
  const page = number === 1 ? "" : `, page ${number}`;
  return documentShell(
    `x402 merchants on Base: real revenue, ${spanText(board.window.days)} to ${end}${page}`,
    body,
  );
}
