import type { Resolver } from "node:dns/promises";
import {
  createResolver,
  DEFAULT_DKIM_BUDGET_MS,
  type DnsOptions,
  dnsUnavailable,
  joinTxt,
  type QueryOutcome,
  query,
  recordsOf,
} from "./dns-resolver.ts";
import type { DomainName } from "./domain-name.ts";
import { type DmarcInfo, isDkimKey, NO_DMARC, readDmarc, readSpf, type SpfInfo } from "./mail-auth.ts";

/**
 * Selectors probed under `<selector>._domainkey.<domain>`. DKIM selectors cannot be listed, only guessed:
 * these are the defaults of common senders (Google Workspace `google`, Microsoft 365 `selector1`/`selector2`,
 * Mailchimp/Mandrill `k1`-`k3`, SendGrid `s1`/`s2`, Fastmail `fm1`-`fm3`, Proton `protonmail`..., generic
 * `default`, `dkim`, `mail`). Finding none does not mean the domain does not sign.
 */
export const DKIM_SELECTORS: readonly string[] = [
  "default",
  "google",
  "selector1",
  "selector2",
  "k1",
  "k2",
  "k3",
  "s1",
  "s2",
  "dkim",
  "mail",
  "fm1",
  "fm2",
  "fm3",
  "protonmail",
  "protonmail2",
  "protonmail3",
  "mandrill",
  "everlytickey1",
  "zoho",
];

export interface SoaRecord {
  nsname: string;
  hostmaster: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minttl: number;
}

export interface DnsReport {
  domain: string;
  /** The name has an address (A, AAAA) or is an alias (CNAME). */
  resolves: boolean;
  /** NOERROR: the name exists (maybe without records); NXDOMAIN: it does not. */
  status: "NOERROR" | "NXDOMAIN";
  records: {
    a: string[];
    aaaa: string[];
    cname: string[];
    mx: { exchange: string; priority: number }[];
    ns: string[];
    txt: string[];
    soa: SoaRecord | null;
  };
  email: {
    /** At least one MX that is not the null MX ("." per RFC 7505). */
    mail_configured: boolean;
    null_mx: boolean;
    spf: SpfInfo;
    dmarc: DmarcInfo;
    dkim: { checked_selectors: string[]; found_selectors: string[]; unanswered_selectors: string[] };
  };
  /** Record types whose query got no answer (timeout, SERVFAIL...), with c-ares's code. */
  errors: { type: string; code: string }[];
}

/**
 * Everything public DNS says about a name that matters for the web and for mail, queried in parallel:
 * A, AAAA, CNAME, MX (by priority, then name), NS, TXT, SOA; SPF from the TXT records; DMARC at
 * `_dmarc.<name>` falling back to the organizational domain (RFC 7489 6.6.3); DKIM keys at common
 * selectors within a time budget. NXDOMAIN is an answer (`status`); no answer at all is an UpstreamError.
 */
export async function inspectDomain(
  name: DomainName,
  options: DnsOptions = {},
  signal?: AbortSignal,
): Promise<DnsReport> {
  const resolver = createResolver(options, signal);
  const host = name.hostname;
  const [a, aaaa, cname, mx, ns, txt, soa] = await Promise.all([
    query(() => resolver.resolve4(host)),
    query(() => resolver.resolve6(host)),
    query(() => resolver.resolveCname(host)),
    query(() => resolver.resolveMx(host)),
    query(() => resolver.resolveNs(host)),
    query(() => resolver.resolveTxt(host)),
    query(async () => [await resolver.resolveSoa(host)]),
  ]);
  const outcomes: Record<string, QueryOutcome<unknown>> = {
    A: a,
    AAAA: aaaa,
    CNAME: cname,
    MX: mx,
    NS: ns,
    TXT: txt,
    SOA: soa,
  };
  const failed = Object.entries(outcomes).flatMap(([type, o]) =>
    o.kind === "failed" ? [{ type, code: o.code }] : [],
  );
  if (failed.length === Object.keys(outcomes).length)
    throw dnsUnavailable(
      host,
      failed.map((f) => f.code),
    );
  // NXDOMAIN only when no query found the name (a dangling CNAME makes A say NXDOMAIN, CNAME answer).
  const nxdomain =
    Object.values(outcomes).some((o) => o.kind === "nxdomain") &&
    !Object.values(outcomes).some((o) => o.kind === "answer" || o.kind === "nodata");

  const mxRecords = recordsOf(mx)
    .map((r) => ({ exchange: r.exchange.toLowerCase(), priority: r.priority }))
    .sort((x, y) => x.priority - y.priority || x.exchange.localeCompare(y.exchange));
  const nullMx = mxRecords.length === 1 && (mxRecords[0]?.exchange === "" || mxRecords[0]?.exchange === ".");
  const txtRecords = joinTxt(recordsOf(txt));
  const records = {
    a: recordsOf(a),
    aaaa: recordsOf(aaaa),
    cname: recordsOf(cname),
    mx: mxRecords,
    ns: recordsOf(ns).sort(),
    txt: txtRecords,
    soa: recordsOf(soa)[0] ?? null,
  };
  const [dmarc, dkim] = nxdomain
    ? [NO_DMARC, { checked_selectors: [], found_selectors: [], unanswered_selectors: [] }]
    : await Promise.all([findDmarc(resolver, name), probeDkim(resolver, host, options.dkimBudgetMs)]);
  return {
    domain: host,
    resolves: records.a.length + records.aaaa.length + records.cname.length > 0,
    status: nxdomain ? "NXDOMAIN" : "NOERROR",
    records,
    email: {
      mail_configured: mxRecords.length > 0 && !nullMx,
      null_mx: nullMx,
      spf: readSpf(txtRecords),
      dmarc,
      dkim,
    },
    errors: failed,
  };
}

async function findDmarc(resolver: Resolver, name: DomainName): Promise<DmarcInfo> {
  const names = [name.hostname, ...(name.registrable !== name.hostname ? [name.registrable] : [])];
  for (const base of names) {
    const at = `_dmarc.${base}`;
    const found = readDmarc(joinTxt(recordsOf(await query(() => resolver.resolveTxt(at)))), at);
    if (found) return found;
  }
  return NO_DMARC;
}

/** Probes every selector at once; those not answered within the budget are reported as unanswered. */
async function probeDkim(resolver: Resolver, host: string, budgetMs = DEFAULT_DKIM_BUDGET_MS) {
  const found = new Set<string>();
  const answered = new Set<string>();
  const probes = DKIM_SELECTORS.map(async (selector) => {
    const outcome = await query(() => resolver.resolveTxt(`${selector}._domainkey.${host}`));
    if (outcome.kind === "failed") return;
    answered.add(selector);
    if (joinTxt(recordsOf(outcome)).some(isDkimKey)) found.add(selector);
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(probes),
    new Promise((resolve) => {
      timer = setTimeout(resolve, budgetMs);
    }),
  ]);
  clearTimeout(timer);
  return {
    checked_selectors: [...DKIM_SELECTORS],
    found_selectors: DKIM_SELECTORS.filter((s) => found.has(s)),
    unanswered_selectors: DKIM_SELECTORS.filter((s) => !answered.has(s)),
  };
}
