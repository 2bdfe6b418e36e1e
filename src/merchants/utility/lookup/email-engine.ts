import { isDisposableDomain } from "./disposable.ts";
import { createResolver, type DnsOptions, dnsUnavailable, query, recordsOf } from "./dns-resolver.ts";
import { checkSyntax, type EmailSyntax } from "./email-syntax.ts";
import { FREE_PROVIDER_DOMAINS } from "./free-providers.ts";
import { ROLE_ACCOUNTS } from "./role-accounts.ts";

export type Verdict = "deliverable" | "risky" | "undeliverable" | "unknown";

export interface EmailReport {
  email: string;
  /** Lower-cased, plus tag removed; for gmail.com/googlemail.com also dots removed and gmail.com. */
  normalized: string | null;
  syntax: EmailSyntax;
  domain_check: {
    domain: string | null;
    exists: boolean | null;
    mx_found: boolean;
    mx: { exchange: string; priority: number }[];
    /** No MX: mail goes to the domain's own A/AAAA address (RFC 5321 5.1). */
    implicit_mx: boolean;
    /** The null MX "." (RFC 7505): the domain accepts no mail. */
    null_mx: boolean;
    accepts_mail: boolean | null;
  };
  flags: { disposable: boolean; role_account: boolean; free_provider: boolean; plus_tag: string | null };
  verdict: Verdict;
  /** Machine codes behind the verdict, most serious first. */
  reasons: string[];
}

const GMAIL_DOMAINS: readonly string[] = ["gmail.com", "googlemail.com"];
/** Exchanges checked for an address; more are rarely needed to tell a working MX set. */
const MAX_MX_CHECKED = 5;

/**
 * Everything that can be known about an address without sending mail: syntax, whether the domain exists
 * and publishes mail servers (MX, implicit MX from A/AAAA, null MX), whether those servers have
 * addresses, and flags. No SMTP probing (RCPT TO): most large providers accept every recipient or
 * greylist, probing from one IP gets it blocklisted, and it touches third parties' servers on a
 * caller's behalf. So "deliverable" means "the domain accepts mail for this well-formed address".
 */
export async function verifyEmail(
  email: string,
  dns: DnsOptions = {},
  signal?: AbortSignal,
): Promise<EmailReport> {
  const { parsed, ...syntax } = checkSyntax(email);
  const noDomain = {
    domain: null,
    exists: null,
    mx_found: false,
    mx: [],
    implicit_mx: false,
    null_mx: false,
    accepts_mail: null,
  };
  if (!syntax.valid || !parsed || syntax.local_part === null) {
    return {
      email,
      normalized: null,
      syntax,
      domain_check: noDomain,
      flags: { disposable: false, role_account: false, free_provider: false, plus_tag: null },
      verdict: "undeliverable",
      reasons: ["invalid_syntax"],
    };
  }
  const domain = parsed.hostname;
  const { normalized, base, tag } = normalize(syntax.local_part, domain, syntax.quoted);
  const flags = {
    disposable: isDisposableDomain(domain),
    role_account: ROLE_ACCOUNTS.has(base),
    free_provider: FREE_PROVIDER_DOMAINS.has(domain),
    plus_tag: tag,
  };
  const check = await mailServers(domain, dns, signal);
  const reasons = [...check.reasons];
  if (flags.disposable) reasons.push("disposable_domain");
  if (flags.role_account) reasons.push("role_account");
  if (check.result.implicit_mx) reasons.push("implicit_mx");
  if (syntax.quoted) reasons.push("quoted_local_part");
  const verdict: Verdict =
    check.accepts_mail === false
      ? "undeliverable"
      : check.accepts_mail === null
        ? "unknown"
        : reasons.length > 0
          ? "risky"
          : "deliverable";
  return { email, normalized, syntax, domain_check: { domain, ...check.result }, flags, verdict, reasons };
}

/**
 * Lower-cases (the local part is case-sensitive in theory, case-insensitive at every major provider) and
 * removes a `+tag` (subaddressing, RFC 5233, as Gmail, Outlook, iCloud, Fastmail and Proton do). Dots are
 * removed only for gmail.com/googlemail.com, whose mailboxes ignore them; elsewhere a dot is significant.
 * Quoted local parts are left as they are.
 */
export function normalize(local: string, domain: string, quoted = false) {
  if (quoted) return { normalized: `${local}@${domain}`, base: local.toLowerCase(), tag: null };
  const lower = local.toLowerCase();
  const plus = lower.indexOf("+");
  let base = plus > 0 ? lower.slice(0, plus) : lower;
  const tag = plus > 0 ? lower.slice(plus + 1) : null;
  let target = domain;
  if (GMAIL_DOMAINS.includes(domain)) {
    base = base.replaceAll(".", "");
    target = "gmail.com";
  }
  return { normalized: `${base}@${target}`, base, tag };
}

async function mailServers(domain: string, dns: DnsOptions, signal?: AbortSignal) {
  const resolver = createResolver(dns, signal);
  const mx = await query(() => resolver.resolveMx(domain));
  if (mx.kind === "failed") throw dnsUnavailable(domain, [mx.code]);
  const base = {
    mx_found: false,
    mx: [] as { exchange: string; priority: number }[],
    implicit_mx: false,
    null_mx: false,
  };
  if (mx.kind === "nxdomain") {
    return {
      accepts_mail: false,
      reasons: ["domain_not_found"],
      result: { exists: false, ...base, accepts_mail: false },
    };
  }
  const records = recordsOf(mx)
    .map((r) => ({ exchange: r.exchange.toLowerCase().replace(/\.$/, ""), priority: r.priority }))
    .sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange));
  if (records.length === 1 && records[0]?.exchange === "") {
    const result = { exists: true, ...base, mx: records, null_mx: true, accepts_mail: false };
    return { accepts_mail: false, reasons: ["null_mx"], result };
  }
  // No MX: the domain itself is the mail server if it has an address (implicit MX, RFC 5321 5.1).
  const hosts = records.length > 0 ? records.slice(0, MAX_MX_CHECKED).map((r) => r.exchange) : [domain];
  const addressed = await Promise.all(
    hosts.map(async (host) => {
      const [v4, v6] = await Promise.all([
        query(() => resolver.resolve4(host)),
        query(() => resolver.resolve6(host)),
      ]);
      if (v4.kind === "answer" || v6.kind === "answer") return "yes";
      return v4.kind === "failed" || v6.kind === "failed" ? "failed" : "no";
    }),
  );
  const reachable = addressed.includes("yes");
  const accepts = reachable ? true : addressed.includes("failed") ? null : false;
  const reasons = accepts === false ? [records.length > 0 ? "mx_hosts_unresolvable" : "no_mail_server"] : [];
  if (accepts === null) reasons.push("mx_hosts_unanswered");
  return {
    accepts_mail: accepts,
    reasons,
    result: {
      exists: true,
      ...base,
      mx_found: records.length > 0,
      mx: records,
      implicit_mx: records.length === 0 && reachable,
      accepts_mail: accepts,
    },
  };
}
