import { html, nothing } from "../../common/html.ts";
import type { AcrossLeaderboard, MerchantAcrossChains } from "../model.ts";
import { spanText } from "../week/span.ts";
import { BADGE_LABEL } from "./badge.ts";
import { chainName, chainNav, count, realShare, usd } from "./page-parts.ts";
import { documentShell, licenceFooter, noticeBanner } from "./shell.ts";

/**
 * A merchant wallet's page across chains: each chain's latest week side by side, linking its report page, and
 * their sum, with the badge of the sum. Every value is escaped.
 */
export function renderAcrossPage(m: MerchantAcrossChains, opts: { notice?: string }): string {
  const rows = m.chains.map(
    (c) => html`<tr>
<th scope="row"><a href="${c.page}">${chainName(c.chain)}</a></th>
<td class="num">${c.window.start.slice(0, 10)} to ${c.window.end.slice(0, 10)}</td>
<td class="num">${usd(c.real_usd)}</td>
<td class="num">${usd(c.usd)}</td>
<td class="num">${realShare(c)}</td>
<td class="num">${count.format(c.real_tx)} / ${count.format(c.tx)}</td>
<td class="num">${count.format(c.real_buyers)} / ${count.format(c.buyers)}</td>
<td class="num">${c.rank_by_real_revenue ?? "–"}</td>
</tr>`,
  );
  const markdown = `[![${BADGE_LABEL}](${m.badge})](${m.badge.replace(/\/badges\/all\/(0x[0-9a-f]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})\.svg$/, "/merchants/$1")})`;
  const body = html`${noticeBanner(opts.notice)}
<header>
<p class="nav"><a href="/">x402 merchants</a></p>
<h1>${m.name}</h1>
<p class="addr">Merchant wallet <code>${m.address}</code> on ${count.format(m.chains.length)} ${m.chains.length === 1 ? "chain" : "chains"}</p>
</header>
<main>
<p class="claim">${m.name} received ${usd(m.sum.real_usd)} of x402 payments passing every screen (${realShare(m.sum)} of ${usd(m.sum.usd)} reported) on ${m.chains.map((c) => chainName(c.chain)).join(" and ")}, ${spansText(m.chains, m.days)} to its latest block.</p>
<div class="scroll"><table>
<caption>Each chain's latest week, and their sum</caption>
<thead><tr><th scope="col">Chain</th><th scope="col">Window</th><th scope="col" class="num">Real usd</th><th scope="col" class="num">Reported usd</th><th scope="col" class="num">Real share</th><th scope="col" class="num">Real / all payments</th><th scope="col" class="num">Real / all buyers</th><th scope="col" class="num">Rank</th></tr></thead>
<tbody>${rows}
<tr><th scope="row">Sum</th><td></td><td class="num">${usd(m.sum.real_usd)}</td><td class="num">${usd(m.sum.usd)}</td><td class="num">${realShare(m.sum)}</td><td class="num">${count.format(m.sum.real_tx)} / ${count.format(m.sum.tx)}</td><td class="num">each chain its own</td><td></td></tr>
</tbody>
</table></div>
<p class="note">Buyers are not summed: one wallet may buy on several chains, its address the same on each. The chains' weeks end at each chain's own latest block, so the sum covers each chain's week, not one moment.</p>
<h2>Badge</h2>
<p><img src="${m.badge}" alt="${BADGE_LABEL} badge of ${m.name}, every chain" height="20"></p>
<pre><code>${markdown}</code></pre>
<h2>Data</h2>
<ul><li><a href="/v1/merchants/${m.address}">This merchant across chains as JSON</a></li>
${m.chains.map((c) => html`<li><a href="${c.report}">Its ${chainName(c.chain)} report as JSON</a></li>\n`)}</ul>
</main>
${licenceFooter(m.license, html` Methodology ${m.methodology.version}.`)}`;
  return documentShell(`${m.name}: x402 payments across chains`, body);
}

/** The ranking of every chain for people: each merchant's latest weeks summed across the chains. */
export function renderAcrossBoardPage(board: AcrossLeaderboard, opts: { notice?: string }): string {
  const row = (m: AcrossLeaderboard["merchants"][number] | AcrossLeaderboard["unranked"][number]) => html`<tr>
<td class="num">${"rank" in m ? m.rank : "–"}</td>
<td><a href="/merchants/${m.address}" title="${m.address}">${m.name}</a><br><code class="addr">${m.address}</code></td>
<td>${m.chains.map((c) => chainName(c)).join(", ")}</td>
<td class="num">${usd(m.real_usd)}</td>
<td class="num">${usd(m.usd)}</td>
<td class="num">${realShare(m)}</td>
</tr>`;
  const held = board.weeks.map((w) => w.chain);
  const body = html`${noticeBanner(opts.notice)}
<header>
${chainNav("all", held)}
<h1>x402 merchants on every chain</h1>
</header>
<main>
<p>Each merchant's latest week on every chain it was paid on, summed: ${board.weeks.map((w) => `${chainName(w.chain)} to ${w.window.end.slice(0, 10)}`).join(", ")}. Ranked by the sum of real revenue; each chain's own ranking and reports are linked from its page.</p>
<p class="note">Merchants ${count.format(board.totals.merchants)} (${count.format(board.totals.ranked)} ranked); page ${count.format(board.page.number)} of ${count.format(board.page.pages)}.${board.page.next ? html` <a href="/chains/all/ranking/${board.page.number + 1}">Next</a>` : nothing}</p>
<div class="scroll"><table>
<caption>Merchants ranked by real revenue summed across chains</caption>
<thead><tr><th scope="col" class="num">Rank</th><th scope="col">Merchant</th><th scope="col">Chains</th><th scope="col" class="num">Real usd</th><th scope="col" class="num">Reported usd</th><th scope="col" class="num">Real share</th></tr></thead>
<tbody>${board.merchants.map(row)}${board.unranked.map(row)}</tbody>
</table></div>
<h2>Data</h2>
<ul><li><a href="/v1/leaderboard/all">This ranking as JSON</a></li></ul>
</main>
${licenceFooter(board.license)}`;
  return documentShell("x402 merchants on every chain: real revenue", body);
}

/**
 * The chains' spans in the claim: one when they agree ("each chain's 7 days"), else each its own ("Base's 7
 * days and Arbitrum One's 1 day"), so that a chain younger than a week does not make the others' look short.
 */
function spansText(list: readonly { chain: string; window: { days: number } }[], days: number): string {
  const spans = list.map((c) => spanText(c.window.days));
  if (spans.every((span) => span === spans[0])) return `each chain's ${spanText(days)}`;
  return `${list.map((c, i) => `${chainName(c.chain)}'s ${spans[i]}`).join(" and ")}, each`;
}
