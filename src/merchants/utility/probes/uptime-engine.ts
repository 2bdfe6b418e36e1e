import {
  abortable,
  FetchError,
  parseTarget,
  type ResolvedAddress,
  type Target,
  type VettedAddresses,
  vetTarget,
} from "../../../merchant-kit/index.ts";
import { type CdnDetection, detectCdn } from "./cdn.ts";
import { type CertificateReport, describeCertificate } from "./certificate.ts";
import { describeFailure, isRefusal, type ProbeFailure } from "./failure.ts";
import type { ResolvedProbeOptions, ServerLocation } from "./options.ts";
import { UP_BELOW } from "./ping-engine.ts";
import { type SecurityHeaders, securityHeaders } from "./security-headers.ts";
import { type HeadResult, type PhaseTimings, type ProbePhase, timedHead } from "./timed-head.ts";

export interface NetworkReport {
  ip: string;
  port: number;
  family: 4 | 6;
  location: ServerLocation | null;
  /** `"2"`, `"1.1"` or `"1.0"`: the HTTP version the answer came in. */
  http_version: string | null;
  alpn: string | null;
  h2_supported: boolean;
  tls_protocol: string | null;
  cipher: string | null;
}

/** One answer of the redirect chain. */
export interface RedirectReport {
  url: string;
  status: number;
  location: string;
  ip: string;
  total_ms: number | null;
}

export interface UptimeReport {
  url: string;
  checked_at: string;
  up: boolean;
  final_url: string;
  final_status: number | null;
  final_error: (ProbeFailure & { phase: ProbePhase }) | null;
  status: number | null;
  error: (ProbeFailure & { phase: ProbePhase }) | null;
  timing_ms: PhaseTimings;
  network: NetworkReport | null;
  certificate: CertificateReport | null;
  cdn: CdnDetection | null;
  server: string | null;
  security_headers: SecurityHeaders | null;
  redirects: RedirectReport[];
}

interface Hop {
  target: Target;
  address: ResolvedAddress | null;
  head: HeadResult;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * The uptime report of `url`: one HEAD probe of the URL itself, measured phase by phase (timing,
 * network, certificate, CDN, security headers all describe this first answer), then its redirects followed
 * with HEAD, each hop vetted like the first (the SSRF rules of the platform's fetch: one lookup, refused
 * ranges, connect to the vetted address), up to the policy's `maxRedirects` (5). The whole probe shares the
 * policy's time limit (10 s). A failure to connect, handshake or answer in time is part of the report
 * (`error`, `up: false`); only a refused URL throws (400 `bad_url` / `ssrf_blocked`, not charged).
 */
export async function uptimeReport(
  url: string,
  options: ResolvedProbeOptions,
  signal?: AbortSignal,
): Promise<UptimeReport> {
  const policy = options.resolved;
  const checkedAt = new Date();
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new FetchError("timeout", `no answer within ${policy.timeoutMs} ms`)),
    policy.timeoutMs,
  );
  const onCallerAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onCallerAbort, { once: true });
  const hops: Hop[] = [];
  try {
    let target = parseTarget(url);
    // Within one report a host is resolved once: a later hop back to it cannot be rebound.
    const vetted = new Map<string, VettedAddresses>();
    for (;;) {
      const hop = await probeHop(target, vetted, options, controller.signal, hops.length === 0);
      hops.push(hop);
      const location = hop.head.headers.location;
      if (hop.head.status === null || !REDIRECT_STATUSES.has(hop.head.status) || location === undefined)
        break;
      if (hops.length > policy.maxRedirects) {
        hop.head.error = {
          code: "too_many_redirects",
          message: `more than ${policy.maxRedirects} redirects`,
          phase: "response",
        };
        break;
      }
      try {
        target = parseTarget(location, target.url);
      } catch (error) {
        hop.head.error = { ...describeFailure(error), phase: "response" };
        break;
      }
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onCallerAbort);
  }
  // The caller left: nobody reads this report, and the platform answers for the abort.
  if (signal?.aborted) throw signal.reason;
  const server = hops[0]?.address;
  return assemble(hops, checkedAt, server ? await options.locate(server.address) : null);
}

/**
 * Vets and probes one hop. A refusal of the URL asked is the caller's error (thrown: 400); a redirect to a
 * refused address is a finding about the site, reported in the chain and not followed.
 */
async function probeHop(
  target: Target,
  vetted: Map<string, VettedAddresses>,
  options: ResolvedProbeOptions,
  signal: AbortSignal,
  first: boolean,
): Promise<Hop> {
  let addresses = vetted.get(target.host);
  let dnsMs: number | null = null;
  if (!addresses) {
    const started = performance.now();
    try {
      addresses = await abortable(vetTarget(target, options.resolved), signal);
    } catch (error) {
      if (first && isRefusal(error)) throw error;
      const cause = signal.aborted ? signal.reason : error;
      return { target, address: null, head: failedBeforeConnect(cause) };
    }
    if (!target.literal) dnsMs = Math.round((performance.now() - started) * 10) / 10;
    vetted.set(target.host, addresses);
  }
  const [address] = addresses;
  const head = await timedHead(target, address, dnsMs, {
    ca: options.resolved.ca,
    userAgent: options.resolved.userAgent,
    signal,
  });
  return { target, address, head };
}

function failedBeforeConnect(error: unknown): HeadResult {
  return {
    status: null,
    statusText: null,
    headers: {},
    httpVersion: null,
    tls: null,
    timing: { dns: null, tcp: null, tls: null, ttfb: null, total: null },
    error: { ...describeFailure(error), phase: "dns" },
  };
}

function assemble(hops: Hop[], checkedAt: Date, location: ServerLocation | null): UptimeReport {
  const [first] = hops;
  const last = hops.at(-1);
  if (!first || !last) throw new Error("uptime report without a probe");
  const { head, address, target } = first;
  const tlsInfo = head.tls;
  const finalStatus = last.head.status;
  return {
    url: target.url.href,
    checked_at: checkedAt.toISOString(),
    up: finalStatus !== null && finalStatus < UP_BELOW && last.head.error === null,
    final_url: last.target.url.href,
    final_status: finalStatus,
    final_error: last.head.error,
    status: head.status,
    error: head.error,
    timing_ms: head.timing,
    network: address && {
      ip: address.address,
      port: Number(target.url.port || (target.url.protocol === "https:" ? 443 : 80)),
      family: address.family,
      location,
      http_version: head.httpVersion,
      alpn: tlsInfo?.alpn ?? null,
      h2_supported: tlsInfo?.alpn === "h2",
      tls_protocol: tlsInfo?.protocol ?? null,
      cipher: tlsInfo?.cipher ?? null,
    },
    certificate:
      tlsInfo?.certificate != null
        ? describeCertificate(tlsInfo.certificate, tlsInfo.authorized, tlsInfo.authorizationError, checkedAt)
        : null,
    cdn: head.status === null ? null : detectCdn(head.headers),
    server: head.headers.server ?? null,
    security_headers: head.status === null ? null : securityHeaders(head.headers),
    redirects: hops.flatMap((hop, i) => {
      const next = hops[i + 1];
      if (!next || hop.head.status === null || !hop.address) return [];
      return [
        {
          url: hop.target.url.href,
          status: hop.head.status,
          location: next.target.url.href,
          ip: hop.address.address,
          total_ms: hop.head.timing.total,
        },
      ];
    }),
  };
}
