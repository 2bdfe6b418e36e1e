/**
 * Reading the mail-authentication TXT records a domain publishes: SPF (RFC 7208), DMARC (RFC 7489) and
 * DKIM keys (RFC 6376). Pure functions over record strings; the queries are in dns-engine.ts.
 */

export interface SpfInfo {
  present: boolean;
  /** The `v=spf1` record; with several, the first (several is a permerror for receivers). */
  record: string | null;
  /** More than one `v=spf1` record: receivers treat the policy as broken (RFC 7208 4.5). */
  multiple: boolean;
  /** The final `all` mechanism with its qualifier (`-all`, `~all`, `?all`, `+all`), if any. */
  all: string | null;
}

export function readSpf(txt: readonly string[]): SpfInfo {
  const records = txt.filter((r) => /^v=spf1(\s|$)/i.test(r.trim()));
  const record = records[0]?.trim() ?? null;
  const all = record ? (/(?:^|\s)([-~?+]?)all(?:\s|$)/i.exec(record) ?? null) : null;
  return {
    present: record !== null,
    record,
    multiple: records.length > 1,
    all: all ? `${all[1] || "+"}all` : null,
  };
}

export type DmarcPolicy = "none" | "quarantine" | "reject";

export interface DmarcInfo {
  present: boolean;
  record: string | null;
  /** `p=`: what receivers should do with mail failing DMARC. */
  policy: DmarcPolicy | null;
  /** `sp=`, the policy for subdomains (defaults to `p`). */
  subdomain_policy: DmarcPolicy | null;
  /** `pct=`, the share of failing mail the policy applies to (default 100). */
  pct: number | null;
  /** `rua=` aggregate report addresses. */
  rua: string[];
  /** The name the record was found at: `_dmarc.<host>`, else `_dmarc.<organizational domain>`. */
  found_at: string | null;
}

const POLICIES: readonly string[] = ["none", "quarantine", "reject"];

/** Tag-value list of a DMARC or DKIM record ("v=DMARC1; p=reject; rua=mailto:x"). */
export function tagList(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return tags;
}

/**
 * The DMARC record among the TXT records of a `_dmarc` name: exactly one starting `v=DMARC1`, else none
 * (RFC 7489 6.6.3). A record with an unknown `p` has no valid policy (`policy: null`).
 */
export function readDmarc(txt: readonly string[], foundAt: string): DmarcInfo | null {
  const records = txt.filter((r) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(r.trim()));
  if (records.length !== 1) return null;
  const record = (records[0] ?? "").trim();
  const tags = tagList(record);
  const policy = policyOf(tags.get("p"));
  const pct = tags.has("pct") ? Number.parseInt(tags.get("pct") ?? "", 10) : 100;
  return {
    present: true,
    record,
    policy,
    subdomain_policy: policyOf(tags.get("sp")) ?? policy,
    pct: Number.isInteger(pct) && pct >= 0 && pct <= 100 ? pct : null,
    rua: (tags.get("rua") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
    found_at: foundAt,
  };
}

export const NO_DMARC: DmarcInfo = {
  present: false,
  record: null,
  policy: null,
  subdomain_policy: null,
  pct: null,
  rua: [],
  found_at: null,
};

function policyOf(value: string | undefined): DmarcPolicy | null {
  const v = value?.toLowerCase();
  return v !== undefined && POLICIES.includes(v) ? (v as DmarcPolicy) : null;
}

/** A DKIM key record: `v=DKIM1` (optional) and a `p=` tag; an empty `p=` is a revoked key. */
export function isDkimKey(record: string): boolean {
  const tags = tagList(record);
  const version = tags.get("v");
  return tags.has("p") && (version === undefined || version.toUpperCase() === "DKIM1");
}
