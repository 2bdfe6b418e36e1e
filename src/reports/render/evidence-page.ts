import { html, type Markup, nothing } from "../../common/html.ts";
import type { EvidenceClusterLink, EvidenceDocument, EvidenceFlag, EvidenceWallet } from "../model.ts";
import { evidenceAnchor, flagAnchor } from "../week/anchors.ts";
import { flagsPath } from "../week/flags.ts";
import { chainName, rankingPath } from "./page-parts.ts";
import { documentShell, licenceFooter, noticeBanner } from "./shell.ts";

const count = new Intl.NumberFormat("en-US");
const money = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 });
const usd = (n: number) => `$${money.format(n)}`;
const when = (iso: string | null) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : "–");

/** "3 h 20 min": an interval for people. */
function intervalText(seconds: number | null): string {
  if (seconds === null) return "–";
  const s = Math.round(seconds);
  if (s < 120) return `${s} s`;
  const minutes = Math.round(s / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

function table(caption: string, head: readonly string[], rows: readonly Markup[]): Markup {
  return html`<div class="scroll"><table><caption>${caption}</caption>
<thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows}</tbody></table></div>`;
}

function paymentsPart(w: EvidenceWallet): Markup {
  const p = w.payments;
  const rows = p.shown.map(
    (t) =>
      html`<tr><td><code>${t.tx_hash}</code></td><td class="num">${count.format(t.block)}</td><td>${when(t.time)}</td><td class="num">${usd(t.usd)}</td></tr>`,
  );
  const more = p.count - p.shown.length;
  if (more > 0) rows.push(html`<tr><td colspan="4">${count.format(more)} more</td></tr>`);
  return html`<dl class="figures">
<dt>Flagged payments</dt><dd>${count.format(p.count)}, ${usd(w.usd)} of the report's flagged dollars</dd>
<dt>Most common amount</dt><dd>${usd(p.common_usd)} (${count.format(p.common_count)} of them)</dd>
<dt>First and last</dt><dd>${when(p.first)} to ${when(p.last)}</dd>
<dt>Median time between payments</dt><dd>${intervalText(p.median_interval_seconds)}</dd>
</dl>
${table("The flagged payments, earliest first", ["Transaction", "Block", "Time", "Amount"], rows)}`;
}

function kindPart(w: EvidenceWallet): Markup {
  if (w.funding_path) {
    const rows = w.funding_path.map(
      (h, i) =>
        html`<tr><td class="num">${i + 1}</td><td><code>${h.from}</code></td><td><code>${h.to}</code></td><td class="num">${usd(h.usd)}</td><td>${when(h.time)} (block ${count.format(h.block)})</td><td>${h.tx_hash ? html`<code>${h.tx_hash}</code>` : "–"}</td></tr>`,
    );
    const p = w.provenance;
    const left = (p?.transfers ?? rows.length) - rows.length;
    if (left > 0) rows.splice(1, 0, html`<tr><td colspan="6">${count.format(left)} more transfers</td></tr>`);
    const share = p
      ? html`<p>Of ${usd(p.paid_usd)} this wallet paid the merchant in the window, ${usd(p.merchant_usd)} (${Math.round(p.merchant_share * 1000) / 10}%) had been in the merchant's own wallet (first in first out).</p>`
      : nothing;
    // A hub is not followed in general: say which hop was read as the merchant's deposit coming back, and why.
    const returns = w.funding_path.flatMap((h, i) =>
      h.hub_return
        ? [
            html`<p class="note">Hop ${i + 1} is a payout of <code>${h.from}</code>, a hub the screens do not follow, read as the merchant's deposit coming back: it came within ${intervalText(h.hub_return.span_seconds)} of the deposit, and the merchant's deposits were followed that soon by payouts to its buyers more often than those payouts follow other times (a chance of ${h.hub_return.chance.toPrecision(2)}).</p>`,
          ]
        : [],
    );
    return html`${share}
${table("How the merchant's money reached this wallet", ["Hop", "From", "To", "Amount", "When", "Transaction"], rows)}${returns}`;
  }
  if (w.ring) {
    const c = w.ring.cycle;
    const balance = html`<p>Sent into the cycle in the window: ${usd(w.ring.sent_usd)}; came back: ${usd(w.ring.returned_usd)}.</p>`;
    if (!c) return html`${balance}<p class="note">The cycle is too large to trace here.</p>`;
    const rows = c.steps.map(
      (s) =>
        html`<tr><td><code>${s.from}</code></td><td><code>${s.to}</code></td><td>${s.by === "x402" ? "x402 payments" : "transfers"}</td><td class="num">${usd(s.usd)}</td><td class="num">${count.format(s.first_block)} to ${count.format(s.last_block)}</td></tr>`,
    );
    const hidden = c.moves - c.steps.length;
    if (hidden > 0)
      rows.splice(
        c.steps.length - 1,
        0,
        html`<tr><td colspan="5">${count.format(hidden)} more moves</td></tr>`,
      );
    return html`${balance}
${table(
  `A cycle through this wallet's payment: ${count.format(c.moves)} moves among the ${count.format(c.wallets_in_component)} wallets that can all reach each other (window totals per move)`,
  ["From", "To", "By", "Amount", "Blocks"],
  rows,
)}`;
  }
  if (w.prober) {
    return html`<dl class="figures"><dt>Merchants paid in the window</dt><dd>${count.format(w.prober.merchants)}</dd>
<dt>Of them paid at most 3 times</dt><dd>${count.format(w.prober.light_merchants)}</dd>
<dt>Payments to this merchant</dt><dd>${count.format(w.prober.payments_to_this_merchant)}</dd></dl>`;
  }
  if (w.tiny) {
    const source =
      w.tiny.price_source === "listed"
        ? "its lowest listed price its buyers pay"
        : w.tiny.price_source === "paid"
          ? "what many independent buyers paid it"
          : "none known";
    return html`<dl class="figures"><dt>The merchant's price</dt><dd>${w.tiny.price_usd === null ? "–" : usd(w.tiny.price_usd)} (${source})</dd>
<dt>Tiny means at most</dt><dd>${usd(w.tiny.tiny_max_usd)}</dd>
<dt>Tiny payments from this wallet</dt><dd>${count.format(w.tiny.tiny_payments)}</dd>
<dt>Tiny payments from its cluster</dt><dd>${count.format(w.tiny.cluster_tiny_payments)}</dd></dl>`;
  }
  return nothing;
}

const LINK_RULES: Record<EvidenceClusterLink["rule"], string> = {
  funding: "funded it",
  first_funder: "first funded it",
  behaviour: "funded from one source, behaves alike",
};

/** The cluster a wallet was counted in, and each link that made it, with its rule. */
function clusterPart(cluster: NonNullable<EvidenceWallet["cluster"]>): Markup {
  const measure = (l: EvidenceClusterLink) =>
    l.chance !== undefined
      ? `chance ${l.chance.toExponential(1)}`
      : `${Math.round((l.share ?? 0) * 100)}% of its USDC`;
  const more = cluster.links_total - cluster.links.length;
  return html`<p>Counted as one buyer with the ${count.format(cluster.wallets - 1)} other wallets of cluster <code>${cluster.id}</code>, joined by these links (a weak link counts buyers but never sets a price):</p>
<table class="links"><thead><tr><th>Wallet</th><th>Linked to</th><th>Rule</th><th>Strength</th><th>Measure</th></tr></thead><tbody>
${cluster.links.map((l) => html`<tr><td><code>${l.wallet}</code></td><td><code>${l.linked}</code></td><td><code>${l.rule}</code>: ${LINK_RULES[l.rule]}</td><td>${l.strong ? "strong" : "weak"}</td><td>${measure(l)}</td></tr>`)}
</tbody></table>
${more > 0 ? html`<p>And ${count.format(more)} more links.</p>` : nothing}`;
}

function walletSection(kind: string, w: EvidenceWallet): Markup {
  return html`<section class="wallet" id="${evidenceAnchor(kind, w.wallet)}">
<h3><code>${w.wallet}</code></h3>
<p><strong>Threshold crossed.</strong> ${w.rule}</p>
${w.cluster ? clusterPart(w.cluster) : nothing}
${kindPart(w)}
${paymentsPart(w)}
</section>`;
}

function flagSection(flag: EvidenceFlag): Markup {
  const rest = flag.more_wallets;
  return html`<section class="flag" id="${flagAnchor(flag.kind)}">
<h2><code>${flag.kind}</code>: ${count.format(flag.tx)} ${flag.tx === 1 ? "payment" : "payments"}, ${usd(flag.usd)}</h2>
<p>${flag.summary}</p>
${flag.wallets.map((w) => walletSection(flag.kind, w))}
${rest ? html`<p class="note">${count.format(rest.wallets)} more ${rest.wallets === 1 ? "wallet" : "wallets"} (${count.format(rest.tx)} payments, ${usd(rest.usd)}) tripped this screen; the evidence names the largest.</p>` : nothing}
</section>`;
}

/** How many wallets the flags name, and the merchant's part of the flag feed, which lists those this page does not. */
function feedPart(doc: EvidenceDocument): Markup {
  const { wallets } = doc.flag_feed;
  if (wallets === 0) return nothing;
  const feed = `${flagsPath(1, doc.address, doc.chain)}?end_block=${doc.window.end_block}`;
  return html`<p>${count.format(wallets)} ${wallets === 1 ? "wallet was" : "wallets were"} flagged in this window; this page names the largest of each flag. <a href="${feed}">The flag feed</a> (JSON) lists every one.</p>`;
}

/**
 * Which apps the window's payments came from, as their ERC-8021 builder codes claim, with what such a claim
 * is worth beside it; nothing when no payment carried one.
 */
function appsPart(doc: EvidenceDocument): Markup {
  const { apps, none, caveat } = doc.apps;
  if (apps.length === 0) return nothing;
  return html`<section class="apps" id="apps">
<h2>Apps its payments came from</h2>
<p class="note">${caveat}</p>
<table><thead><tr><th>App code</th><th>Payments</th><th>USD</th></tr></thead><tbody>
${apps.map((a) => html`<tr><td><code>${a.app}</code></td><td>${count.format(a.tx)}</td><td>${usd(a.usd)}</td></tr>`)}
${none.tx > 0 ? html`<tr><td>no app code</td><td>${count.format(none.tx)}</td><td>${usd(none.usd)}</td></tr>` : nothing}
</tbody></table>
</section>`;
}

/** The evidence page of one merchant's report: every named flagged wallet, why, and its transactions. */
export function renderEvidencePage(doc: EvidenceDocument, opts: { notice?: string }): string {
  const json = `/v1/reports/${doc.chain}/${doc.address}/evidence?end_block=${doc.window.end_block}`;
  const report = `/reports/${doc.chain}/${doc.address}?end_block=${doc.window.end_block}`;
  const on = chainName(doc.chain);
  const body = html`${noticeBanner(opts.notice)}
<header>
<p class="nav"><a href="${rankingPath(1, doc.chain)}">x402 merchants on ${on}</a> › <a href="${report}">${doc.name}</a></p>
<h1>Evidence behind the flags of ${doc.name}</h1>
<p class="addr">Merchant wallet <code>${doc.address}</code> on ${on}, window of blocks ${count.format(doc.window.start_block + 1)} to ${count.format(doc.window.end_block)} (${when(doc.window.start)} to ${when(doc.window.end)})</p>
</header>
<main>
<p>Each wallet below tripped a screen. Its entry gives the rule with the figures that crossed its thresholds, the payments it flagged (transaction hashes anyone can look up on ${on}), and the funding path or the cycle behind the flag. <a href="/screens">How each screen works</a>; these flags are methodology <a href="${doc.methodology.url}">${doc.methodology.version}</a>'s. <a href="${json}">This evidence as JSON</a>.</p>
${feedPart(doc)}
${doc.flags.length > 0 ? doc.flags.map(flagSection) : html`<p>No screen flagged any payment in this window.</p>`}
${appsPart(doc)}
</main>
${licenceFooter(doc.license, html` Generated at ${when(doc.generated_at)}.`)}`;
  return documentShell(`Evidence: ${doc.name}, window ending at block ${doc.window.end_block}`, body);
}
