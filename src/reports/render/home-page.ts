import { html, type Markup, nothing } from "../../common/html.ts";
import {
  LEADERBOARD_PAGE_SIZE,
  type Leaderboard,
  type UnrankedEntry,
  type UnrankedReason,
} from "../model.ts";
import { spanText } from "../week/span.ts";
import {
  chainName,
  chainNav,
  count,
  dataLinks,
  jsonLinks,
  permalink,
  rankingPath,
  realShare,
  usd,
  windowText,
} from "./page-parts.ts";
import { documentShell, licenceFooter, noticeBanner } from "./shell.ts";

const UNRANKED_REASONS: Record<UnrankedReason, string> = {
  held: "held: held out of the ranking by the operator",
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

/** Which merchants of how many a page shows, and the links to its neighbours, kept to its window. */
function pager(board: Leaderboard): Markup {
  const { number, size, pages } = board.page;
  const first = (number - 1) * size + 1;
  const last = first + board.merchants.length + board.unranked.length - 1;
  const link = (n: number, rel: string, text: string) =>
    html`<a rel="${rel}" href="${rankingPath(n, board.chain)}?end_block=${board.window.end_block}">${text}</a>`;
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
export function renderHomePage(
  board: Leaderboard,
  opts: { notice?: string; chains?: readonly string[] },
): string {
  const on = chainName(board.chain);
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
      ? html`<p>Weekly reports of the x402 micropayments (USDC on ${on}) that merchant wallets received. Each report gives the reported totals and the real ones: the payments that pass every screen for wash trading, such as a merchant paying itself or funding its own buyers. A flag marks a pattern in public chain data, not a finding of wrongdoing.</p>`
      : nothing;
  const body = html`${noticeBanner(opts.notice)}
<header>
${chainNav(board.chain, opts.chains ?? [])}
<h1>x402 merchants on ${on}${number === 1 ? nothing : html`: page ${count.format(number)} of the ranking`}</h1>
</header>
<main>
${intro}
<h2>Ranking by real revenue</h2>
${windowText(board.window)}
${permalink(rankingPath(number, board.chain), board.window)}
${pager(board)}
${ranking}
${unrankedTable(board.unranked, board.totals.unranked)}
${board.page.pages > 1 ? pager(board) : nothing}
<h2>Data</h2>
${dataLinks(html`<li><a href="${jsonLinks(board.chain).leaderboard}">The latest ranking as JSON</a>, in pages of ${count.format(LEADERBOARD_PAGE_SIZE)}</li>\n`, board.chain)}
</main>
${licenceFooter(board.license)}`;
  const page = number === 1 ? "" : `, page ${number}`;
  return documentShell(
    `x402 merchants on ${on}: real revenue, ${spanText(board.window.days)} to ${end}${page}`,
    body,
  );
}
