import { z } from "zod";
import { defineEndpoint, FETCH_ERRORS } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import type { ResolvedProbeOptions } from "./options.ts";
import { uptimeReport } from "./uptime-engine.ts";
import { urlField } from "./url-input.ts";

const ms = z.number().nullable();
const Failure = z
  .object({
    code: z
      .string()
      .describe("`timeout`, `dns_failed`, `ssrf_blocked`, `too_many_redirects`, or the system's."),
    message: z.string(),
    phase: z.enum(["dns", "connect", "tls", "response"]),
  })
  .nullable();

const Output = z.object({
  url: z.string().describe("The URL probed."),
  checked_at: z.string(),
  up: z.boolean().describe("After redirects, an HTTP answer below 500 arrived."),
  final_url: z.string().describe("Where the redirects ended."),
  final_status: z.number().int().nullable(),
  final_error: Failure,
  status: z.number().int().nullable().describe("Status of the URL asked (a 3xx when it redirects)."),
  error: Failure.describe("Why the URL asked gave no answer, and in which phase."),
  timing_ms: z
    .object({ dns: ms, tcp: ms, tls: ms, ttfb: ms, total: ms })
    .describe(
      "Waterfall of the URL asked, each phase's own duration: DNS lookup (null for an IP), TCP connect, TLS handshake (null for http), TTFB (request sent to response headers), total (their sum).",
    ),
  network: z
    .object({
      ip: z.string(),
      port: z.number().int(),
      family: z.union([z.literal(4), z.literal(6)]),
      location: z
        .object({
          country: z.string(),
          region: z.string().nullable(),
          city: z.string().nullable(),
          timezone: z.string().nullable(),
          ll: z.tuple([z.number(), z.number()]).nullable(),
        })
        .nullable()
        .describe(
          "Where the server is, when known: the /api/geo database (IP Geolocation by DB-IP, https://db-ip.com, CC BY 4.0).",
        ),
      http_version: z.string().nullable(),
      alpn: z.string().nullable().describe("Protocol chosen by ALPN among h2 and http/1.1 offered."),
      h2_supported: z.boolean(),
      tls_protocol: z.string().nullable(),
      cipher: z.string().nullable(),
    })
    .nullable(),
  certificate: z
    .object({
      subject: z.string().nullable(),
      subject_alt_names: z.array(z.string()),
      issuer: z.string().nullable(),
      valid_from: z.string(),
      valid_to: z.string(),
      days_remaining: z.number().int(),
      expired: z.boolean(),
      fingerprint_sha256: z.string(),
      serial_number: z.string(),
      trusted: z.boolean().describe("Chain and host name verified against the default CA store."),
      authorization_error: z.string().nullable(),
      reason: z.string().nullable(),
    })
    .nullable(),
  cdn: z
    .object({ provider: z.string(), evidence: z.array(z.string()) })
    .nullable()
    .describe("CDN named by the response headers (cf-ray, x-amz-cf-id, x-served-by, x-vercel-id, ...)."),
  server: z.string().nullable(),
  security_headers: z.record(z.string(), z.string().nullable()).nullable(),
  redirects: z
    .array(
      z.object({
        url: z.string(),
        status: z.number().int(),
        location: z.string(),
        ip: z.string(),
        total_ms: ms,
      }),
    )
    .describe("Each redirect followed (HEAD, at most 5, every hop checked like the first)."),
});

/** GET /api/uptime/report; `url` as in /api/ping. */
export function uptimeEndpoint(options: ResolvedProbeOptions) {
  return defineEndpoint({
    method: "GET",
    path: "/api/uptime/report",
    price: PRICES["/api/uptime/report"],
    description:
      "Uptime report of a public URL from one HEAD probe: timing waterfall (DNS, TCP, TLS, TTFB, total in ms), TLS certificate (issuer, expiry countdown, trust), HTTP/2 via ALPN, server IP and location, CDN detection, security headers, and the redirect chain (up to 5 hops, each checked). A failure to connect or answer in time is reported (up: false with the phase); private addresses are refused (400, not charged).",
    input: z.object({
      url: urlField(options.resolved).describe(
        "Public http(s) URL, e.g. `https://example.com/`. A bare host (`example.com`) means `https://example.com/`.",
      ),
    }),
    output: Output,
    example: {
      input: { url: "https://example.com/" },
      output: {
        url: "https://example.com/",
        checked_at: "2026-11-21T10:00:00.000Z",
        up: true,
        final_url: "https://example.com/",
        final_status: 200,
        final_error: null,
        status: 200,
        error: null,
        timing_ms: { dns: 4.1, tcp: 11.8, tls: 24.6, ttfb: 13.2, total: 53.7 },
        network: {
          ip: "23.215.0.136",
          port: 443,
          family: 4,
          location: {
            country: "US",
            region: "Virginia",
            city: "Ashburn",
            timezone: "America/New_York",
            ll: [39.0438, -77.4874],
          },
          http_version: "2",
          alpn: "h2",
          h2_supported: true,
          tls_protocol: "TLSv1.3",
          cipher: "TLS_AES_256_GCM_SHA384",
        },
        certificate: {
          subject: "*.example.com",
          subject_alt_names: ["*.example.com", "example.com"],
          issuer: "DigiCert Inc",
          valid_from: "2026-01-15T00:00:00.000Z",
          valid_to: "2027-01-15T23:59:59.000Z",
          days_remaining: 55,
          expired: false,
          fingerprint_sha256: "31:0D:B7:...",
          serial_number: "0AD893BAFA68B0B7FB7A404F06ECAF9A",
          trusted: true,
          authorization_error: null,
          reason: null,
        },
        cdn: { provider: "Akamai", evidence: ["akamai-grn: 0.8a3e1602.1763719200.1b2c3d"] },
        server: null,
        security_headers: {
          strict_transport_security: null,
          content_security_policy: null,
          x_frame_options: null,
          x_content_type_options: null,
          referrer_policy: null,
          permissions_policy: null,
          cross_origin_opener_policy: null,
        },
        redirects: [],
      },
    },
    timeoutMs: options.resolved.timeoutMs + 5_000,
    // A fetch that fails is the answer (up: false); only a URL the probe refuses is a refusal.
    errors: { 400: FETCH_ERRORS[400] },
    handler: async (input, ctx) => uptimeReport(input.url, options, ctx.signal),
  });
}
