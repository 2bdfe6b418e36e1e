import { once } from "node:events";
import http, { type IncomingHttpHeaders } from "node:http";
import http2, { type IncomingHttpHeaders as Http2Headers } from "node:http2";
import net from "node:net";
import tls from "node:tls";
import type { ResolvedAddress, Target } from "../../../merchant-kit/index.ts";
import { describeFailure, type ProbeFailure } from "./failure.ts";

/** Where a probe stopped, when it did. */
export type ProbePhase = "dns" | "connect" | "tls" | "response";

/** Each phase's own duration in ms, null when the phase did not happen (no TLS on http) or did not end. */
export interface PhaseTimings {
  dns: number | null;
  tcp: number | null;
  tls: number | null;
  ttfb: number | null;
  total: number | null;
}

export interface TlsDetails {
  protocol: string | null;
  cipher: string | null;
  /** The ALPN protocol the server chose among the `h2` and `http/1.1` we offered; null when it chose none. */
  alpn: string | null;
  authorized: boolean;
  authorizationError: Error | string | null;
  certificate: tls.DetailedPeerCertificate | null;
}

export interface HeadResult {
  status: number | null;
  statusText: string | null;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  httpVersion: string | null;
  tls: TlsDetails | null;
  timing: PhaseTimings;
  error: (ProbeFailure & { phase: ProbePhase }) | null;
}

export interface HeadOptions {
  /** Trusted roots replacing the system's (tests' self-signed fixtures). */
  ca: string | Buffer | Array<string | Buffer> | undefined;
  userAgent: string;
  /** Aborted on the probe's time limit (reason: a `timeout` FetchError) or when the caller leaves. */
  signal: AbortSignal;
}

/** What ALPN offers, in preference order. */
const ALPN = ["h2", "http/1.1"];

/**
 * One HEAD request to a vetted address, measured phase by phase with our own sockets: TCP connect to
 * `address` (never a second lookup), TLS handshake with SNI = the URL's host name (none for an IP literal,
 * as RFC 6066 forbids it), then the request over HTTP/2 when ALPN chose `h2`, else HTTP/1.1. TTFB is the
 * time from sending the request to the response headers. The handshake does not reject an untrusted
 * certificate (`rejectUnauthorized: false`), so it can be inspected; Node's verdict is kept in `tls`.
 * Failures do not throw: they end the measurement and are returned with the phase they happened in.
 */
export async function timedHead(
  target: Target,
  address: ResolvedAddress,
  dnsMs: number | null,
  options: HeadOptions,
): Promise<HeadResult> {
  const result: HeadResult = {
    status: null,
    statusText: null,
    headers: {},
    httpVersion: null,
    tls: null,
    timing: { dns: dnsMs, tcp: null, tls: null, ttfb: null, total: null },
    error: null,
  };
  const { signal } = options;
  const https = target.url.protocol === "https:";
  const port = Number(target.url.port || (https ? 443 : 80));
  const sockets: net.Socket[] = [];
  let session: http2.ClientHttp2Session | undefined;
  let phase: ProbePhase = "connect";
  try {
    signal.throwIfAborted();
    let started = performance.now();
    const socket = net.connect({ host: address.address, port, family: address.family });
    sockets.push(socket);
    await once(socket, "connect", { signal });
    result.timing.tcp = since(started);

    let stream: net.Socket = socket;
    if (https) {
      phase = "tls";
      started = performance.now();
      const secure = tls.connect({
        socket,
        // `host` is the name the certificate is checked against (it defaults to "localhost").
        host: target.host,
        ...(target.literal ? {} : { servername: target.host }),
        ALPNProtocols: ALPN,
        rejectUnauthorized: false,
        ...(options.ca === undefined ? {} : { ca: options.ca }),
      });
      sockets.push(secure);
      await once(secure, "secureConnect", { signal });
      result.timing.tls = since(started);
      result.tls = {
        protocol: secure.getProtocol() ?? null,
        cipher: secure.getCipher()?.name ?? null,
        alpn: typeof secure.alpnProtocol === "string" ? secure.alpnProtocol : null,
        authorized: secure.authorized,
        authorizationError: secure.authorizationError ?? null,
        certificate: peerCertificate(secure),
      };
      stream = secure;
    }

    phase = "response";
    started = performance.now();
    if (result.tls?.alpn === "h2") {
      session = http2.connect(target.url.origin, { createConnection: () => stream });
      session.on("error", () => {});
      const request = session.request({
        ":method": "HEAD",
        ":path": `${target.url.pathname}${target.url.search}`,
        "user-agent": options.userAgent,
        accept: "*/*",
      });
      request.on("error", () => {});
      const [headers] = (await once(request, "response", { signal })) as [Http2Headers];
      result.timing.ttfb = since(started);
      result.status = Number(headers[":status"]);
      result.headers = flatten(headers);
      result.httpVersion = "2";
    } else {
      const request = http.request({
        method: "HEAD",
        path: `${target.url.pathname}${target.url.search}`,
        headers: { host: target.url.host, "user-agent": options.userAgent, accept: "*/*" },
        createConnection: () => stream,
      });
      // Destroying the socket below (time limit, or done) makes an unanswered request emit "socket hang
      // up" later; the failure was already recorded from `once`.
      request.on("error", () => {});
      request.end();
      const [response] = (await once(request, "response", { signal })) as [http.IncomingMessage];
      result.timing.ttfb = since(started);
      response.resume();
      result.status = response.statusCode ?? null;
      result.statusText = response.statusMessage || null;
      result.headers = flatten(response.headers);
      result.httpVersion = response.httpVersion;
    }
  } catch (error) {
    // The abort reason (our time limit's FetchError, or the caller's) says more than events' AbortError.
    const cause = signal.aborted ? signal.reason : error;
    result.error = { ...describeFailure(cause), phase };
  } finally {
    session?.destroy();
    for (const socket of sockets) {
      socket.on("error", () => {});
      socket.destroy();
    }
  }
  const { dns, tcp, tls: tlsMs, ttfb } = result.timing;
  if (ttfb !== null) result.timing.total = round((dns ?? 0) + (tcp ?? 0) + (tlsMs ?? 0) + ttfb);
  return result;
}

function peerCertificate(socket: tls.TLSSocket): tls.DetailedPeerCertificate | null {
  const cert = socket.getPeerCertificate(true);
  return cert && Object.keys(cert).length > 0 ? cert : null;
}

/** HTTP/2 pseudo-headers (`:status`) are dropped; repeated headers are joined. */
function flatten(headers: IncomingHttpHeaders | Http2Headers): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || value === undefined) continue;
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return flat;
}

function since(started: number): number {
  return round(performance.now() - started);
}

/** Tenths of a millisecond: finer than any network phase worth reading, coarse enough to look honest. */
function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
