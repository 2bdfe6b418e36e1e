import { html, type Markup, nothing, trusted } from "../../common/html.ts";
import type { ReportDetails } from "../model.ts";
import { type Report, SCHEMES } from "../schema.ts";
import { FLAG_KINDS, SCREENS } from "../screens/index.ts";
import { evidenceAnchor } from "../week/anchors.ts";
import { flagsPath } from "../week/flags.ts";
import { spanText } from "../week/span.ts";
import { BADGE_LABEL } from "./badge.ts";
import { CHART_COLORS, dailyChartSvg } from "./chart.ts";
import {
  chainName,
  count,
  dataLinks,
  permalink,
  rankingPath,
  realShare,
  usd,
  when,
  windowText,
} from "./page-parts.ts";
import { documentShell, licenceFooter, noticeBanner } from "./shell.ts";

// Per-payment amounts are fractions of a cent; USDC has 6 decimals.
const price = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 });
const share = new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 2 });

const payments = (n: number) => (n === 1 ? "1 payment" : `${count.format(n)} payments`);
const usdPrice = (n: number) => `$${price.format(n)}`;
const isHttp = (url: string) => /^https?:\/\//i.test(url);

function stateList(report: Report): Markup {
  const claimed = report.claimed
    ? html`<li>Claimed: the merchant has claimed this page.</li>`
    : html`<li>Unclaimed: nobody has claimed this merchant's page yet.</li>`;
  const rank = report.held
    ? html`<li class="held">Held: the operator holds this merchant out of the ranking; its figures are still reported in full.</li>`
    : report.rank_by_real_revenue !== null
      ? html`<li>Ranked #${report.rank_by_real_revenue} by real revenue</li>`
      : report.real_tx === 0
        ? html`<li>Not ranked: no payment passed every screen in this window.</li>`
        : html`<li>Not ranked: the ${payments(report.real_tx)} that passed every screen add up to less than half a cent ($0.00 once rounded); a rank needs $0.01.</li>`;
  const a = report.attestation;
  const frozen = a
    ? html`<li class="frozen">Frozen: this week's reports are attested on Base (EAS attestation <code>${a.uid}</code> by <code>${a.attester}</code>) and never change again: anyone can check this report against it with <code>x402-merchants verify</code>.</li>`
    : nothing;
  return html`<ul class="state">${claimed}${rank}${frozen}</ul>`;
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
<thead><tr><th scope="col">Figure</th><th scope="col" class="num">Reported</th><th scope="col" class="num">Real</th><th scope="col" class="num">Flagged</th></tr></thead>
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

/** What each scheme is, for the table's readers. */
const SCHEME_NAMES: Record<(typeof SCHEMES)[number], string> = {
  exact: "a payment per request",
  upto: "metered: a payment per request, of what it used",
  "batch-settlement": "channels: a payment per claim",
  unknown: "stored without its scheme",
};

function bySchemes(report: Report): Markup {
  const rows = SCHEMES.flatMap((scheme) => {
    const s = report.schemes[scheme];
    if (!s) return [];
    return [
      html`<tr><th scope="row"><code>${scheme}</code>: ${SCHEME_NAMES[scheme]}</th><td class="num">${count.format(s.tx)}</td><td class="num">${usd(s.usd)}</td><td class="num">${count.format(s.real_tx)}</td><td class="num">${usd(s.real_usd)}</td></tr>`,
    ];
  });
  if (rows.length === 0) return nothing;
  return html`<div class="scroll"><table>
<caption>Payments by x402 scheme</caption>
<thead><tr><th scope="col">Scheme</th><th scope="col" class="num">Payments</th><th scope="col" class="num">Reported</th><th scope="col" class="num">Real payments</th><th scope="col" class="num">Real</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
${report.schemes["batch-settlement"] ? html`<p class="note">A batch-settlement buyer pays through a channel: it deposits once and signs a voucher per request off chain, and the merchant claims what the vouchers cover. Each claim on one channel counts as one payment; it may cover any number of requests, which the chain does not show.</p>` : nothing}`;
}

/** The evidence page of the report's window. */
const evidencePath = (report: Report) =>
  `/reports/${report.chain}/${report.address}/evidence?end_block=${report.window.end_block}`;

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
          feedLink(report, details),
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

/** How many wallets the flags name, and the merchant's part of the flag feed, which lists every one of them. */
function feedLink(report: Report, details: ReportDetails): Markup {
  const wallets = details.wallets ?? 0;
  if (wallets === 0) return nothing;
  const feed = `${flagsPath(1, report.address, report.chain)}?end_block=${report.window.end_block}`;
  return html`<p>${count.format(wallets)} ${wallets === 1 ? "wallet was" : "wallets were"} flagged at this merchant in this window: <a href="${feed}">the flag feed</a> (JSON) lists every one, with its cluster, the screen and its reason, and the link to its evidence.</p>`;
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
export function renderReportPage(
  report: Report,
  details: ReportDetails,
  opts: { notice?: string; chains?: readonly string[] },
): string {
  // Where the store holds several chains, the merchant's page across them.
  const across =
    (opts.chains?.length ?? 0) > 1
      ? html` (<a href="/merchants/${report.address}">on every chain</a>)`
      : nothing;
  const json = `/v1/reports/${report.chain}/${report.address}`;
  const on = chainName(report.chain);
  const markdown = `[![${BADGE_LABEL}](${report.badge})](${report.page})`;
  const body = html`${noticeBanner(opts.notice)}
<header>
<p class="nav"><a href="${rankingPath(1, report.chain)}">x402 merchants on ${on}</a></p>
<h1>${report.name}</h1>
<p class="addr">Merchant wallet <code>${report.address}</code> on ${on}${across}</p>
${stateList(report)}
</header>
<main>
<p class="claim">${report.claim}</p>
<h2>Window</h2>
${windowText(report.window)}
${permalink(`/reports/${report.chain}/${report.address}`, report.window)}
<h2>Figures</h2>
${figures(report, details)}
<p class="note">${ROUNDING_RULE}${report.usd < EXACT_BELOW_USD && report.tx > 0 ? " This merchant received less than $1, so the exact amounts, to USDC's six decimals, are given as well." : ""}</p>
${bySchemes(report)}
<h2>Day by day</h2>
${daily(report)}
<h2>Flags</h2>
<p class="note">Screened under methodology <a href="${report.methodology.url}">${report.methodology.version}</a> (its changelog says what each version changed).</p>
${flags(report, details)}
<h2>Listings</h2>
${listings(report)}
<h2>Badge</h2>
<p><img src="${report.badge}" alt="${BADGE_LABEL} badge of ${report.name}" height="20"></p>
<p>Embed it in a README with this Markdown:</p>
<pre><code>${markdown}</code></pre>
<h2>Data</h2>
${dataLinks(html`<li><a href="${json}">This merchant's latest report as JSON</a></li>\n`, report.chain)}
</main>
${licenceFooter(report.license, html` Report generated at ${when(report.generated_at)}, schema version ${report.schema_version}, methodology ${report.methodology.version}.`)}`;
  const head = html`<meta name="description" content="${report.claim}">
<link rel="alternate" type="application/json" href="${json}">
`;
  return documentShell(
    `${report.name}: x402 payments on ${on}, ${spanText(report.window.days)} to ${report.last_seen_week}`,
    body,
    head,
  );
}
