/**
 * The evidence document of a merchant's report: for each flagged wallet the page names, why the screen
 * flagged it (the rule and the figures that crossed its thresholds), the payments (hashes, times, the
 * repeat pattern), the funding path (hops with amounts, dates and hashes) and the cycle of a ring.
 * Served beside the report (`/v1/reports/base/{address}/evidence`), as a page, and in bulk; the report
 * itself stays as docs/report.md, "Evidence", has it.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import { type AnyChainRecord, STORED_ADDRESS } from "../../chain/chains.ts";
import {
  APPS_CAVEAT,
  type EvidenceApps,
  type EvidenceDocument,
  type EvidenceFacts,
  type EvidenceWallet,
  type ReportDetails,
  type ReportWindow,
} from "../model.ts";
import type { Report } from "../schema.ts";
import { sqlChain } from "../scope.ts";
import { SCREENS, SCREENS_PATH, THRESHOLDS } from "../screens/index.ts";
import { sqlDay, sqlInWindow } from "./aggregates.ts";
import { flagsPath } from "./flags.ts";
import { LICENSE_URL, type ReportContext } from "./report.ts";
import { firstDate } from "./window.ts";

/** Payments listed by hash per wallet; the count covers them all. */
export const SHOWN_PAYMENTS = 10;

export interface EvidenceContext {
  chain: AnyChainRecord;
  window: ReportWindow;
  /** The window's first date (day 0 of the screens' `day`). */
  firstDate: string;
  generatedAt: string;
  publicUrl: string;
}

/** What the evidence of a built window needs of the reports' context. */
export function evidenceContext(context: ReportContext): EvidenceContext {
  return {
    chain: context.chain,
    window: context.window,
    firstDate: firstDate(context.window, context.dates),
    generatedAt: context.generatedAt,
    publicUrl: context.publicUrl,
  };
}

const usd6 = (atomic: number | bigint) => Number(atomic) / 1e6;
// Addresses are written into the evidence's SQL: of the store's forms only (neither holds a quote).
const ADDRESS = STORED_ADDRESS;
/**
 * A wallet a way can pass through: an address, or a batch-settlement channel named by its id
 * (src/indexer/channels.ts), or a wallet of another chain a bridge's move names, `address@chain`
 * (src/reports/provenance/bridges.ts).
 */
const WALLET = /^(?:0x(?:[0-9a-f]{40}|[0-9a-f]{64})|[1-9A-HJ-NP-Za-km-z]{32,44})(?:@[a-z0-9-]+)?$/;
/** A transaction's hash as the store keeps it: an EVM hash, or a Solana signature. */
const TX = /^(?:0x[0-9a-f]{64}|[1-9A-HJ-NP-Za-km-z]{64,90})$/;

/** One document per merchant, from its stored report and details; three queries for all of them. */
export async function evidenceDocuments(
  analytics: Analytics,
  ctx: EvidenceContext,
  merchants: readonly { report: Report; details: ReportDetails }[],
): Promise<EvidenceDocument[]> {
  const wallets = merchants.flatMap(({ report, details }) =>
    Object.values(details.flagged_wallets).flatMap((list) =>
      list.flatMap((w) =>
        w.evidence ? [{ payTo: report.address, wallet: w.wallet, facts: w.evidence }] : [],
      ),
    ),
  );
  const payments = await paymentsOf(analytics, ctx, wallets);
  const hops = await hopsOf(
    analytics,
    ctx.chain,
    wallets.flatMap((w) => w.facts.funding_path ?? []),
  );
  const apps = await appsOf(
    analytics,
    ctx,
    merchants.map(({ report }) => report.address),
  );
  return merchants.map(({ report, details }) => ({
    schema_version: "1",
    chain: ctx.chain.slug,
    address: report.address,
    name: report.name,
    generated_at: ctx.generatedAt,
    license: LICENSE_URL,
    window: ctx.window,
    report: `${ctx.publicUrl}/v1/reports/${ctx.chain.slug}/${report.address}?end_block=${ctx.window.end_block}`,
    page: `${ctx.publicUrl}/reports/${ctx.chain.slug}/${report.address}?end_block=${ctx.window.end_block}`,
    screens: `${ctx.publicUrl}${SCREENS_PATH}`,
    methodology: report.methodology,
    flags: SCREENS.filter((s) => report.flags[s.kind]).map((screen) => {
      const flag = report.flags[screen.kind] as { tx: number; usd: number };
      const rest = details.more_wallets?.[screen.kind];
      return {
        kind: screen.kind,
        summary: screen.summary,
        tx: flag.tx,
        usd: flag.usd,
        wallets: (details.flagged_wallets[screen.kind] ?? []).map((w) =>
          walletEvidence(screen.kind, w, payments.get(`${report.address} ${w.wallet} ${screen.kind}`), hops),
        ),
        more_wallets: rest && rest.wallets > 0 ? rest : null,
      };
    }),
    flag_feed: {
      wallets: details.wallets ?? 0,
      url: `${ctx.publicUrl}${flagsPath(1, report.address, ctx.chain.slug)}?end_block=${ctx.window.end_block}`,
    },
    apps: apps.get(report.address) ?? { caveat: APPS_CAVEAT, apps: [], none: { tx: 0, usd: 0 } },
  }));
}

/**
 * Each merchant's payments of the window by the ERC-8021 app code they carried (src/indexer/builder-codes.ts),
 * and those without one; the window's payments, flagged or not.
 */
async function appsOf(
  analytics: Analytics,
  ctx: EvidenceContext,
  merchants: readonly string[],
): Promise<Map<string, EvidenceApps>> {
  const result = new Map<string, EvidenceApps>();
  for (const m of merchants) if (!ADDRESS.test(m)) throw new Error(`bad address in evidence: ${m}`);
  if (merchants.length === 0) return result;
  const rows = await analytics.all<{ pay_to: string; app: string | null; n: number; amount: bigint }>(
    `SELECT pay_to, builder_app AS app, count(*)::DOUBLE AS n, sum(amount)::HUGEINT AS amount
     FROM payments
     WHERE ${sqlInWindow(ctx.chain)} AND pay_to IN (${merchants.map((m) => `'${m}'`).join(", ")})
     GROUP BY ALL ORDER BY pay_to, n DESC, app`,
    { start: ctx.window.start_block, end: ctx.window.end_block },
  );
  for (const r of rows) {
    let apps = result.get(r.pay_to);
    if (!apps) {
      apps = { caveat: APPS_CAVEAT, apps: [], none: { tx: 0, usd: 0 } };
      result.set(r.pay_to, apps);
    }
    if (r.app === null) apps.none = { tx: r.n, usd: usd6(r.amount) };
    else apps.apps.push({ app: r.app, tx: r.n, usd: usd6(r.amount) });
  }
  return result;
}

type PaymentPattern = EvidenceWallet["payments"];

function walletEvidence(
  kind: string,
  w: { wallet: string; tx: number; usd: number; evidence?: EvidenceFacts },
  payments: PaymentPattern | undefined,
  hops: Map<string, { tx_hash: string; time: string }>,
): EvidenceWallet {
  const facts = w.evidence;
  const out: EvidenceWallet = {
    wallet: w.wallet,
    tx: w.tx,
    usd: w.usd,
    rule: facts ? ruleText(kind, facts, w.tx) : "",
    payments: payments ?? {
      count: 0,
      common_usd: 0,
      common_count: 0,
      first: "",
      last: "",
      median_interval_seconds: null,
      shown: [],
    },
  };
  if (!facts) return out;
  if (facts.cluster) {
    const { id, wallets, links, links_total } = facts.cluster;
    out.cluster = {
      id,
      wallets,
      links: links.map(({ measure, ...l }) =>
        l.rule === "behaviour"
          ? { ...l, chance: measure }
          : { ...l, share: Math.round(measure * 10_000) / 10_000 },
      ),
      links_total,
    };
  }
  if (kind === "merchant_funded" && facts.provenance) {
    const { own, paid } = facts.provenance;
    out.provenance = {
      paid_usd: usd6(paid),
      merchant_usd: usd6(own),
      merchant_share: paid > 0 ? Math.round((own / paid) * 10_000) / 10_000 : 0,
      transfers: facts.provenance.hops ?? facts.funding_path?.length ?? 0,
    };
  }
  if (kind === "merchant_funded" && facts.funding_path) {
    out.funding_path = facts.funding_path.map((h) => {
      const found = hops.get(hopKey(h));
      return {
        from: h.from,
        to: h.to,
        block: h.block,
        time: found?.time ?? null,
        usd: usd6(h.amount),
        tx_hash: h.tx ?? found?.tx_hash ?? null,
        ...(h.hub_return && {
          hub_return: { span_seconds: h.hub_return.span_ms / 1000, chance: h.hub_return.chance },
        }),
      };
    });
  }
  if (kind === "ring" && facts.ring) {
    const { cycle } = facts.ring;
    out.ring = {
      returned_usd: usd6(Math.round(facts.ring.returned)),
      sent_usd: usd6(Math.round(facts.ring.sent)),
      cycle: cycle && {
        wallets_in_component: cycle.component_size,
        moves: cycle.moves,
        steps: cycle.steps.map((s) => ({
          from: s.from,
          to: s.to,
          usd: usd6(Math.round(s.amount)),
          by: s.paid ? "x402" : "transfer",
          first_block: s.first_block,
          last_block: s.last_block,
        })),
      },
    };
  }
  if (kind === "prober" && facts.prober) {
    out.prober = {
      merchants: facts.prober.merchants,
      light_merchants: facts.prober.light_merchants,
      payments_to_this_merchant: facts.prober.pair_tx,
    };
  }
  if (kind === "tiny_repeat" && facts.tiny) {
    out.tiny = {
      price_usd: facts.tiny.price === null ? null : usd6(facts.tiny.price),
      price_source: facts.tiny.price_source as "listed" | "paid" | null,
      tiny_max_usd: usd6(facts.tiny_max),
      ...(facts.exact_tiny_max !== undefined &&
        facts.exact_tiny_max !== facts.tiny_max && { exact_tiny_max_usd: usd6(facts.exact_tiny_max) }),
      tiny_payments: facts.tiny.wallet_tiny_tx,
      cluster_tiny_payments: facts.tiny.tiny_tx,
    };
  }
  return out;
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
const dollars = (atomic: number) => `$${usd6(atomic)}`;

/** The rule of `kind` as this wallet crossed it: the figures beside the thresholds they met. */
function ruleText(kind: string, f: EvidenceFacts, flaggedTx: number): string {
  const t = THRESHOLDS;
  switch (kind) {
    case "self_payment":
      return "The payer is the merchant's own wallet: every payment is the merchant paying itself.";
    case "merchant_funded": {
      const hops = f.provenance?.hops ?? f.funding_path?.length ?? 0;
      const share = f.provenance && f.provenance.paid > 0 ? f.provenance.own / f.provenance.paid : 0;
      return `Attributing every wallet's money to where it came from, first in first out, ${pct(share)} of what this wallet paid the merchant in the window had been in the merchant's own wallet: it reached this wallet through ${hops} ${hops === 1 ? "transfer" : "transfers"} (below; any number, at any age, never through a hub fed by ${t.hubMinSenders} or more independent wallets). Its ${flaggedTx} payments paid mostly (half or more) with that money are flagged.`;
    }
    case "ring": {
      const r = f.ring;
      const share = r && r.sent > 0 ? r.returned / r.sent : 0;
      return `Of what this wallet sent into its cycle of wallets in the window, ${pct(share)} came back to it: money counted again. That share of its payments to the merchant, the earliest first, less those paid with the merchant's own money, is flagged (${r?.flagged ?? 0} ${r?.flagged === 1 ? "payment" : "payments"}).`;
    }
    case "prober": {
      const p = f.prober;
      return `This wallet paid ${p?.merchants} merchants in the window (${t.proberMinMerchants} or more), ${p?.light_merchants} of them at most ${t.proberMaxPaymentsPerMerchant} times (${pct(t.proberLightShare)} of them or more), and this one ${p?.pair_tx} ${p?.pair_tx === 1 ? "time" : "times"}; its payments of at most ${dollars(Number(t.proberMaxAmount))} are flagged.`;
    }
    case "tiny_repeat": {
      const y = f.tiny;
      const price =
        y?.price == null
          ? `the merchant lists no price and no band of amounts was paid it by ${t.tinyPricePayers} or more clusters of buyers and ${pct(t.tinyPricePayerShare)} of them, so tiny means below $0.001`
          : `a ${ordinalDivisor(t.tinyPriceDivisor)} of the merchant's price ${dollars(y.price)}, ${y.price_source === "listed" ? `its lowest listed price its buyers pay (${t.tinyPricePayers} or more clusters, or ${pct(t.tinyPricePayerShare)} of them; the lowest line where none is)` : `the lowest amount of the lowest band of amounts ${t.tinyPricePayers} or more clusters of buyers, ${pct(t.tinyPricePayerShare)} or more of them, paid it`}`;
      const own = y && y.wallet_tiny_tx !== y.tiny_tx ? `, ${y.wallet_tiny_tx} of them from this wallet` : "";
      const exact =
        f.exact_tiny_max !== undefined && f.exact_tiny_max !== f.tiny_max
          ? `; exact payments, whose amount the merchant's server sets, of at most ${dollars(f.exact_tiny_max)}, a ${ordinalDivisor(t.tinyPriceDivisor)} of its lowest listed price, whatever its buyers pay`
          : "";
      const k = y?.tiny_tx ?? 0;
      const share =
        k >= t.tinyRepeatMinPayments ? "all of them" : `${k} in ${t.tinyRepeatMinPayments} of them`;
      return `${k} payments of at most ${dollars(f.tiny_max)} from this wallet's cluster${own} (${price}${exact}): a cluster's tiny payments are flagged in proportion to their number, whatever their amounts, all of them from ${t.tinyRepeatMinPayments} on; here ${share}, the earliest first (${flaggedTx} of this wallet's).`;
    }
    default:
      return "";
  }
}

const ordinalDivisor = (n: number) => (n === 5 ? "fifth" : `1/${n}`);

/**
 * The flagged payments of each (merchant, wallet, kind): each payment of a named wallet is given the
 * kind the build gave it (the first screen, in precedence order, whose pair and payment rules it meets),
 * so the counts here are the page's.
 */
async function paymentsOf(
  analytics: Analytics,
  ctx: EvidenceContext,
  wallets: readonly { payTo: string; wallet: string; facts: EvidenceFacts }[],
): Promise<Map<string, PaymentPattern>> {
  const pairs = new Map<string, string>();
  for (const { payTo, wallet, facts } of wallets) {
    if (!ADDRESS.test(payTo) || !ADDRESS.test(wallet)) throw new Error(`bad address in evidence: ${wallet}`);
    const screens = `[${facts.screens
      .filter((k) => SCREENS.some((s) => s.kind === k))
      .map((k) => `'${k}'`)
      .join(", ")}]::VARCHAR[]`;
    const ranges = (facts.provenance?.ranges ?? []).map(([a, b]) => `[${Math.trunc(a)}, ${Math.trunc(b)}]`);
    pairs.set(
      `${payTo} ${wallet}`,
      `('${payTo}', '${wallet}', ${screens}, [${ranges.join(", ")}]::BIGINT[][], ${Math.trunc(facts.ring?.flagged ?? 0)}::BIGINT, ${Math.trunc(facts.tiny_n ?? 0)}::BIGINT, ${Math.trunc(facts.tiny_max)}::BIGINT, ${Math.trunc(facts.exact_tiny_max ?? facts.tiny_max)}::BIGINT)`,
    );
  }
  const result = new Map<string, PaymentPattern>();
  if (pairs.size === 0) return result;
  const kind = `CASE ${SCREENS.map((s) => `WHEN list_contains(screens, '${s.kind}') AND (${s.payment}) THEN '${s.kind}'`).join(" ")} END`;
  const rows = await analytics.all<{
    pay_to: string;
    payer: string;
    kind: string;
    n: number;
    common: bigint;
    common_n: number;
    first: string;
    last: string;
    interval: number | null;
    shown: { tx_hash: string; block: bigint; time: string; amount: bigint }[];
  }>(
    `WITH e(pay_to, payer, screens, funded, ring_n, tiny_n, tiny_max, exact_tiny_max) AS (VALUES ${[...pairs.values()].join(", ")}),
     f AS (
       SELECT w.pay_to, w.payer, w.tx_hash, w.log_index, w.block_number, w.block_time, w.amount, ${sqlDay("w.")} AS day,
         len(list_filter(e.funded, r -> w.block_number BETWEEN r[1] AND r[2])) > 0 AS after_funding, e.ring_n, e.tiny_n,
         coalesce(w.scheme, 'unknown') AS scheme,
         CASE WHEN coalesce(w.scheme, 'unknown') = 'exact' THEN e.exact_tiny_max ELSE e.tiny_max END AS tiny_max, e.screens
       FROM payments w JOIN e ON w.pay_to = e.pay_to AND w.payer = e.payer
       WHERE ${sqlInWindow(ctx.chain, "w.")}
     ), p AS (
       -- The ring's share: the pair's first payments not paid with the merchant's money, by day then amount, as the build took them.
       SELECT *, NOT after_funding AND row_number() OVER (
         PARTITION BY pay_to, payer, after_funding ORDER BY day, amount, block_number, log_index, tx_hash) <= ring_n AS ring_part
       FROM f
     ), q AS (
       -- tiny_repeat's share: of the tiny payments neither of those took, the first by day, amount and scheme.
       SELECT *, row_number() OVER (
         PARTITION BY pay_to, payer, NOT after_funding AND NOT ring_part AND amount <= tiny_max
         ORDER BY day, amount, scheme, block_number, log_index, tx_hash) <= tiny_n
         AND NOT after_funding AND NOT ring_part AND amount <= tiny_max AS tiny_part
       FROM p
     ), classified AS (
       SELECT *, ${kind} AS kind FROM q
     ), k AS (
       SELECT *,
         epoch(block_time) - epoch(lag(block_time) OVER (PARTITION BY pay_to, payer, kind ORDER BY block_number, log_index, tx_hash)) AS gap,
         row_number() OVER (PARTITION BY pay_to, payer, kind ORDER BY block_number, log_index, tx_hash) AS place
       FROM classified WHERE kind IS NOT NULL
     ), amounts AS (
       SELECT pay_to, payer, kind, first(amount ORDER BY n DESC, amount) AS common, max(n)::DOUBLE AS common_n
       FROM (SELECT pay_to, payer, kind, amount, count(*) AS n FROM k GROUP BY ALL)
       GROUP BY ALL
     )
     SELECT pay_to, payer, kind, count(*)::DOUBLE AS n, a.common, a.common_n,
       strftime(min(block_time), '%Y-%m-%dT%H:%M:%SZ') AS first, strftime(max(block_time), '%Y-%m-%dT%H:%M:%SZ') AS last,
       median(gap)::DOUBLE AS interval,
       list({'tx_hash': tx_hash, 'block': block_number, 'time': strftime(block_time, '%Y-%m-%dT%H:%M:%SZ'), 'amount': amount}
         ORDER BY place) FILTER (place <= ${SHOWN_PAYMENTS}) AS shown
     FROM k JOIN amounts a USING (pay_to, payer, kind)
     GROUP BY pay_to, payer, kind, a.common, a.common_n`,
    { start: ctx.window.start_block, end: ctx.window.end_block, first: ctx.firstDate },
  );
  for (const r of rows) {
    result.set(`${r.pay_to} ${r.payer} ${r.kind}`, {
      count: r.n,
      common_usd: usd6(r.common),
      common_count: r.common_n,
      first: r.first,
      last: r.last,
      median_interval_seconds: r.interval,
      shown: r.shown.map((s) => ({
        tx_hash: s.tx_hash,
        block: Number(s.block),
        time: s.time,
        usd: usd6(s.amount),
      })),
    });
  }
  return result;
}

type Hop = { from: string; to: string; block: number; amount: number; tx?: string };
const hopKey = (h: Hop) => `${h.from} ${h.to} ${h.block} ${h.amount}`;

/**
 * Each funding hop's transfer: its hash and time (the first such transfer of its block). A hop that names a wallet
 * of another chain (a bridge's move, or a move on the other chain read between its burns) is no transfer between
 * those names: its time is its own transaction's, on whichever chain the store holds it.
 */
async function hopsOf(
  analytics: Analytics,
  chain: AnyChainRecord,
  hops: readonly Hop[],
): Promise<Map<string, { tx_hash: string; time: string }>> {
  const result = new Map<string, { tx_hash: string; time: string }>();
  const unique = [...new Map(hops.map((h) => [hopKey(h), h])).values()];
  for (const h of unique)
    if (!WALLET.test(h.from) || !WALLET.test(h.to))
      throw new Error(`bad address in evidence: ${h.from} ${h.to}`);
  const across = (h: Hop) => h.from.includes("@") || h.to.includes("@");
  await bridgedHops(analytics, unique.filter(across), result);
  const values = unique
    .filter((h) => !across(h))
    .map((h) => `('${h.from}', '${h.to}', ${Math.trunc(h.block)}::BIGINT, ${Math.trunc(h.amount)}::BIGINT)`);
  if (values.length === 0) return result;
  const rows = await analytics.all<{
    src: string;
    dst: string;
    block: bigint;
    amount: bigint;
    tx_hash: string;
    time: string;
  }>(
    `WITH h(src, dst, block, amount) AS (VALUES ${values.join(", ")})
     SELECT h.src, h.dst, h.block, h.amount, first(t.tx_hash ORDER BY t.log_index) AS tx_hash,
       strftime(first(t.block_time), '%Y-%m-%dT%H:%M:%SZ') AS time
     FROM h JOIN transfers t ON ${sqlChain(chain, "t.")} AND t.block_number = h.block AND t.from_address = h.src
       AND t.to_address = h.dst AND t.amount = h.amount
     GROUP BY ALL`,
  );
  for (const r of rows) {
    result.set(hopKey({ from: r.src, to: r.dst, block: Number(r.block), amount: Number(r.amount) }), {
      tx_hash: r.tx_hash,
      time: r.time,
    });
  }
  return result;
}

/** The hops that name another chain's wallet, by their transaction: its time, into `result`. */
async function bridgedHops(
  analytics: Analytics,
  hops: readonly Hop[],
  result: Map<string, { tx_hash: string; time: string }>,
): Promise<void> {
  const known = hops.filter((h) => h.tx !== undefined && TX.test(h.tx));
  if (known.length === 0) return;
  const txs = [...new Set(known.map((h) => `'${h.tx}'`))];
  const rows = await analytics.all<{ tx_hash: string; time: string }>(
    `SELECT tx_hash, strftime(min(block_time), '%Y-%m-%dT%H:%M:%SZ') AS time FROM transfers
     WHERE tx_hash IN (${txs.join(", ")}) GROUP BY tx_hash`,
  );
  const times = new Map(rows.map((r) => [r.tx_hash, r.time]));
  for (const h of known) {
    const time = times.get(h.tx as string);
    if (time !== undefined) result.set(hopKey(h), { tx_hash: h.tx as string, time });
  }
}
