import { z } from "zod";
import { defineEndpoint, FETCH_ERRORS } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import type { ResolvedProbeOptions } from "./options.ts";
import { ping } from "./ping-engine.ts";
import { urlField } from "./url-input.ts";

const FailureOutput = z.object({
  code: z.string().describe("`timeout`, `dns_failed`, `fetch_failed`, or the system's (`ECONNREFUSED`...)."),
  message: z.string(),
});

/**
 * GET /api/ping. `url` is what uptime and ping APIs (and the comparable x402 service) take. HEAD by
 * default: one request with no body to download is the cheapest real answer; `method=GET` is there for
 * servers that answer HEAD badly (405 is still "up", a 501 to HEAD would not be).
 */
export function pingEndpoint(options: ResolvedProbeOptions) {
  return defineEndpoint({
    method: "GET",
    path: "/api/ping",
    price: PRICES["/api/ping"],
    description:
      "Ping a public URL with one HTTP request (HEAD, or GET with method=GET): up/down, HTTP status and latency in ms (DNS lookup to response headers). Any HTTP answer below 500 counts as up; redirects are reported with their Location, not followed. A connection failure or timeout is an answer (up: false with the reason); private addresses are refused (400, not charged).",
    input: z.object({
      url: urlField(options.resolved).describe(
        "Public http(s) URL to ping, e.g. `https://example.com/`. A bare host (`example.com`) means `https://example.com/`.",
      ),
      method: z
        .enum(["HEAD", "GET", "head", "get"])
        .default("HEAD")
        .transform((m) => m.toUpperCase() as "HEAD" | "GET")
        .describe("`HEAD` (default) or `GET`; a GET's body is not downloaded."),
    }),
    output: z.object({
      url: z.string().describe("The URL pinged (with the scheme added when it was missing)."),
      method: z.enum(["HEAD", "GET"]),
      up: z.boolean().describe("An HTTP answer below 500 arrived."),
      status: z.number().int().nullable().describe("HTTP status; null when no answer arrived."),
      status_text: z.string().nullable(),
      latency_ms: z.number().describe("From the DNS lookup to the response headers (or to the failure)."),
      ip: z.string().nullable().describe("The address connected to."),
      redirect: z
        .object({ status: z.number().int(), location: z.string().nullable() })
        .nullable()
        .describe("Set for a 3xx: its status and absolute Location (not followed)."),
      error: FailureOutput.nullable().describe("Why no answer arrived, when none did."),
      checked_at: z.string().describe("When the ping started (ISO 8601, UTC)."),
    }),
    example: {
      input: { url: "https://example.com/" },
      output: {
        url: "https://example.com/",
        method: "HEAD",
        up: true,
        status: 200,
        status_text: "OK",
        latency_ms: 87,
        ip: "23.215.0.136",
        redirect: null,
        error: null,
        checked_at: "2026-11-21T10:00:00.000Z",
      },
    },
    timeoutMs: options.resolved.timeoutMs + 5_000,
    // A fetch that fails is the answer (up: false); only a URL the probe refuses is a refusal.
    errors: { 400: FETCH_ERRORS[400] },
    handler: async (input, ctx) => ping(input.url, input.method, options, ctx.signal),
  });
}
