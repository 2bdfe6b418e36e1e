/**
 * The pages a browser gets when there is no report to show: the home page before anything is indexed,
 * and the HTML answer to an error on a page route. A reader who followed a link should learn what is
 * happening, not meet the API's `{"error": ...}` JSON.
 */
import { html, nothing } from "../../common/html.ts";
import { LICENSE_URL } from "../week/report.ts";
import { chainName, chainNav } from "./page-parts.ts";
import { documentShell, licenceFooter, noticeBanner } from "./shell.ts";

/** How often the empty home page reloads itself: the first blocks are usually indexed within seconds. */
const EMPTY_REFRESH_SECONDS = 15;

const nav = html`<p class="nav"><a href="/">x402 merchants on Base</a></p>`;

/**
 * A chain's ranking page (Base's is the home page) while the store holds none of its data: the indexer is
 * starting or catching up, or nothing was imported. Served with 200: the page exists, it is just early.
 * @example c.html(renderEmptyHomePage({ reason }))
 */
export function renderEmptyHomePage(opts: {
  notice?: string;
  reason?: string;
  chain?: string;
  chains?: readonly string[];
}): string {
  const chain = opts.chain ?? "base";
  const on = chainName(chain);
  const body = html`${noticeBanner(opts.notice)}
<header>
${chainNav(chain, opts.chains ?? [])}
<h1>x402 merchants on ${on}</h1>
</header>
<main>
<h2>No data yet</h2>
<p class="empty-state">Indexing in progress: no block of the chain has been stored yet, so there are no payments and no ranking to show. The indexer is starting or catching up with the chain; the ranking appears here as soon as its first blocks are stored. This page reloads itself every ${EMPTY_REFRESH_SECONDS} seconds.</p>
${opts.reason ? html`<p class="note">${opts.reason}</p>` : nothing}
<p class="note">Running the service yourself? Index a chain with <code>x402-merchants index --rpc URL${chain === "base" ? "" : ` --chain ${chain}`}</code> or import data with <code>x402-merchants import</code>.</p>
</main>
${licenceFooter(LICENSE_URL)}`;
  const head = html`<meta http-equiv="refresh" content="${EMPTY_REFRESH_SECONDS}">
`;
  return documentShell(`x402 merchants on ${on}: no data yet`, body, head);
}

const HEADINGS: Record<number, string> = {
  400: "Bad request",
  404: "Not found",
};

/**
 * A page route's error as a human page: the status, what went wrong (the error's own message, written
 * for people) and a way back to the ranking.
 * @example c.html(renderErrorPage(404, "no merchant 0x… is known on Base", {}), 404)
 */
export function renderErrorPage(status: number, message: string, opts: { notice?: string }): string {
  const heading = HEADINGS[status] ?? "Something went wrong";
  const body = html`${noticeBanner(opts.notice)}
<header>
${nav}
<h1>${heading}</h1>
</header>
<main>
<p class="error">${message}.</p>
<p>The <a href="/">ranking of merchants</a> links every report there is. A merchant has a report once its wallet has received an x402 payment or lists a paid endpoint.</p>
</main>
${licenceFooter(LICENSE_URL)}`;
  return documentShell(`${heading}: x402 merchants on Base`, body);
}
