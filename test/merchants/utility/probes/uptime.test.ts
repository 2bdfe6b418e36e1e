/**
 * `/api/uptime/report` against fixture servers on 127.0.0.1: HTTP, HTTPS with an untrusted and a trusted
 * certificate, HTTP/2 via ALPN, CDN headers, redirect chains, a slow server and refused targets.
 */
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFetchError } from "../../../../src/merchant-kit/fetch/index.ts";
import { detectCdn } from "../../../../src/merchants/utility/probes/cdn.ts";
import { locateServer, resolveProbeOptions } from "../../../../src/merchants/utility/probes/options.ts";
import { uptimeReport } from "../../../../src/merchants/utility/probes/uptime-engine.ts";
import {
  type FixtureCertificate,
  type FixtureServer,
  fakeLookup,
  fixtureCertificate,
  redirect,
  slow,
  startFixtureServer,
  text,
} from "../../../helpers/fixtures/index.ts";

let plain: FixtureServer;
let secure: FixtureServer;
let h2: http2.Http2SecureServer;
let h2Port: number;
let cert: FixtureCertificate;
const dns = fakeLookup({ "fixture.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });
const policy = { allowAddresses: ["127.0.0.1"], lookup: dns.lookup, timeoutMs: 2_000 };
const open = resolveProbeOptions({
  policy,
  locate: async (ip) => (ip === "127.0.0.1" ? null : locateServer(ip)),
});

beforeAll(async () => {
  cert = await fixtureCertificate();
  plain = await startFixtureServer({
    routes: {
      "/ok": text("fine", {
        headers: { "strict-transport-security": "max-age=63072000", "x-content-type-options": "nosniff" },
      }),
      "/cdn": text("cached", { headers: { "cf-ray": "8c1f2e3d4a5b6c7d-FRA", server: "cloudflare" } }),
      "/a": redirect("/b", 301),
      "/b": redirect("/c", 302),
      "/c": text("landed"),
      "/loop": redirect("/loop"),
      "/to-private": redirect("http://10.1.2.3/admin"),
      "/slow": slow(5_000),
      "/broken": text("down", { status: 502 }),
    },
  });
  secure = await startFixtureServer({ tls: cert, routes: { "/": text("secure") } });
  h2 = http2.createSecureServer({ ...cert, allowHTTP1: true }, (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain", "x-vercel-id": "fra1::abcde-1700000000000" });
    res.end("h2");
  });
  await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve));
  h2Port = (h2.address() as AddressInfo).port;
});
afterAll(async () => {
  await plain?.close();
  await secure?.close();
  await new Promise((resolve) => h2?.close(resolve));
});

describe("uptime report", () => {
  it("measures an HTTP server with one HEAD: waterfall, address, headers", async () => {
    const before = plain.requests.length;
    const report = await uptimeReport(`http://fixture.test:${plain.port}/ok`, open);
    expect(plain.requests.slice(before).map((r) => [r.method, r.url, r.headers.host])).toEqual([
      ["HEAD", "/ok", `fixture.test:${plain.port}`],
    ]);
    expect(report).toMatchObject({
      up: true,
      status: 200,
      final_status: 200,
      error: null,
      certificate: null,
      cdn: null,
      redirects: [],
      network: { ip: "127.0.0.1", port: plain.port, family: 4, location: null, http_version: "1.1" },
      security_headers: {
        strict_transport_security: "max-age=63072000",
        x_content_type_options: "nosniff",
        content_security_policy: null,
      },
    });
    expect(report.network?.h2_supported).toBe(false);
    const { dns: d, tcp, tls, ttfb, total } = report.timing_ms;
    expect(tls).toBeNull();
    for (const value of [d, tcp, ttfb]) expect(value).toBeGreaterThanOrEqual(0);
    expect(total).toBeCloseTo((d ?? 0) + (tcp ?? 0) + (ttfb ?? 0), 0);
  });

  it("reports a self-signed certificate as untrusted, with the reason", async () => {
    const report = await uptimeReport(`https://fixture.test:${secure.port}/`, open);
    expect(report.status).toBe(200);
    expect(report.certificate).toMatchObject({
      subject: "fixture.test",
      trusted: false,
      authorization_error: "DEPTH_ZERO_SELF_SIGNED_CERT",
      reason: expect.stringMatching(/self-signed/),
      expired: false,
    });
    expect(report.certificate?.subject_alt_names).toEqual(["fixture.test", "localhost", "127.0.0.1"]);
    expect(report.certificate?.days_remaining).toBeGreaterThan(0);
    expect(report.network?.tls_protocol).toMatch(/^TLSv1\.[23]$/);
    expect(report.timing_ms.tls).toBeGreaterThanOrEqual(0);
  });

  it("trusts a certificate its CA vouches for, and checks the host name against it", async () => {
    const trusting = resolveProbeOptions({ policy: { ...policy, ca: cert.cert } });
    const trusted = await uptimeReport(`https://fixture.test:${secure.port}/`, trusting);
    expect(trusted.certificate).toMatchObject({ trusted: true, authorization_error: null, reason: null });
    const wrongName = await uptimeReport(`https://other.test:${secure.port}/`, trusting);
    expect(wrongName.certificate).toMatchObject({
      trusted: false,
      authorization_error: "ERR_TLS_CERT_ALTNAME_INVALID",
    });
  });

  it("negotiates HTTP/2 through ALPN when the server offers it", async () => {
    const report = await uptimeReport(`https://fixture.test:${h2Port}/`, open);
    expect(report).toMatchObject({
      up: true,
      status: 200,
      network: { alpn: "h2", h2_supported: true, http_version: "2" },
      cdn: { provider: "Vercel", evidence: ["x-vercel-id: fra1::abcde-1700000000000"] },
    });
  });

  it("says HTTP/1.1 only when the server chooses no h2", async () => {
    const report = await uptimeReport(`https://fixture.test:${secure.port}/`, open);
    expect(report.network?.h2_supported).toBe(false);
    expect(report.network?.http_version).toBe("1.1");
  });

  it("detects a CDN from its headers", async () => {
    const report = await uptimeReport(`http://127.0.0.1:${plain.port}/cdn`, open);
    expect(report.cdn).toEqual({
      provider: "Cloudflare",
      evidence: ["cf-ray: 8c1f2e3d4a5b6c7d-FRA", "server: cloudflare"],
    });
    expect(report.server).toBe("cloudflare");
    expect(report.timing_ms.dns).toBeNull();
  });

  it("follows a redirect chain with HEAD and reports every hop", async () => {
    const base = `http://fixture.test:${plain.port}`;
    const report = await uptimeReport(`${base}/a`, open);
    expect(report).toMatchObject({ up: true, status: 301, final_status: 200, final_url: `${base}/c` });
    expect(report.redirects.map(({ url, status, location }) => [url, status, location])).toEqual([
      [`${base}/a`, 301, `${base}/b`],
      [`${base}/b`, 302, `${base}/c`],
    ]);
  });

  it("stops after 5 redirects", async () => {
    const report = await uptimeReport(`http://127.0.0.1:${plain.port}/loop`, open);
    expect(report.redirects).toHaveLength(5);
    expect(report).toMatchObject({ up: false, final_error: { code: "too_many_redirects" } });
  });

  it("re-vets every hop: a redirect to a private address is reported, not followed", async () => {
    const report = await uptimeReport(`http://127.0.0.1:${plain.port}/to-private`, open);
    expect(report).toMatchObject({
      up: false,
      status: 302,
      final_url: "http://10.1.2.3/admin",
      final_status: null,
      final_error: { code: "ssrf_blocked" },
    });
  });

  it("reports a slow server's timeout with the phase it stopped in", async () => {
    const quick = resolveProbeOptions({ policy: { ...policy, timeoutMs: 300 } });
    const report = await uptimeReport(`http://127.0.0.1:${plain.port}/slow`, quick);
    expect(report).toMatchObject({ up: false, status: null, error: { code: "timeout", phase: "response" } });
    expect(report.timing_ms.tcp).toBeGreaterThanOrEqual(0);
    expect(report.timing_ms.ttfb).toBeNull();
  });

  it("reports a 5xx as down and a closed port as a connect failure", async () => {
    expect(await uptimeReport(`http://127.0.0.1:${plain.port}/broken`, open)).toMatchObject({
      up: false,
      status: 502,
    });
    const gone = await startFixtureServer();
    await gone.close();
    expect(await uptimeReport(gone.url, open)).toMatchObject({
      up: false,
      error: { code: "ECONNREFUSED", phase: "connect" },
    });
  });

  it("refuses a private target without the allow-list, before connecting", async () => {
    const before = plain.requests.length;
    const closed = resolveProbeOptions({ policy: { lookup: dns.lookup } });
    for (const url of [`http://fixture.test:${plain.port}/ok`, `http://127.0.0.1:${plain.port}/ok`]) {
      const error = await uptimeReport(url, closed).catch((e) => e);
      expect(isFetchError(error, "ssrf_blocked"), url).toBe(true);
    }
    expect(plain.requests.length).toBe(before);
  });

  it("locates the server with the geo engine", async () => {
    const located = resolveProbeOptions({ policy, locate: () => locateServer("81.2.69.160") });
    const report = await uptimeReport(`http://127.0.0.1:${plain.port}/ok`, located);
    expect(report.network?.location).toMatchObject({ country: "GB", city: "London" });
    expect(await locateServer("127.0.0.1")).toBeNull();
  });
});

describe("CDN table", () => {
  it.each([
    [{ "x-amz-cf-id": "abc==", via: "1.1 abc.cloudfront.net (CloudFront)" }, "Amazon CloudFront"],
    [{ "x-served-by": "cache-fra-eddf8230089-FRA" }, "Fastly"],
    [{ server: "AkamaiGHost" }, "Akamai"],
    [{ "x-nf-request-id": "01H" }, "Netlify"],
    [{ "cf-ray": "1-AMS", "x-vercel-id": "x" }, "Cloudflare"],
  ])("%o is %s", (headers, provider) => {
    expect(detectCdn(headers)?.provider).toBe(provider);
  });

  it("names none for an origin's ordinary headers", () => {
    expect(detectCdn({ server: "nginx", "x-served-by": "web-3" })).toBeNull();
  });
});
