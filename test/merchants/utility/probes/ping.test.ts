/** `/api/ping` against fixture servers on 127.0.0.1: up/down, status, latency, redirects, failures, refusals. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFetchError } from "../../../../src/merchant-kit/fetch/index.ts";
import { resolveProbeOptions } from "../../../../src/merchants/utility/probes/options.ts";
import { pingEndpoint } from "../../../../src/merchants/utility/probes/ping.ts";
import { ping } from "../../../../src/merchants/utility/probes/ping-engine.ts";
import {
  type FixtureServer,
  fakeLookup,
  redirect,
  slow,
  startFixtureServer,
  text,
} from "../../../helpers/fixtures/index.ts";

let server: FixtureServer;
const open = resolveProbeOptions({ policy: { allowAddresses: ["127.0.0.1"], timeoutMs: 2_000 } });

beforeAll(async () => {
  server = await startFixtureServer({
    routes: {
      "/ok": text("fine"),
      "/missing": text("no", { status: 404 }),
      "/broken": text("down", { status: 503 }),
      "/moved": redirect("/ok", 301),
      "/slow": slow(5_000),
    },
  });
});
afterAll(async () => server?.close());

describe("ping", () => {
  it("reports an answering server as up with its status, latency and address, with one HEAD", async () => {
    const before = server.requests.length;
    const result = await ping(`${server.url}ok`, "HEAD", open);
    expect(result).toMatchObject({ up: true, status: 200, status_text: "OK", ip: "127.0.0.1", error: null });
    expect(result.latency_ms).toBeGreaterThanOrEqual(0);
    expect(result.latency_ms).toBeLessThan(2_000);
    expect(server.requests.slice(before).map((r) => r.method)).toEqual(["HEAD"]);
  });

  it("sends a GET when asked", async () => {
    const before = server.requests.length;
    expect(await ping(`${server.url}ok`, "GET", open)).toMatchObject({
      up: true,
      status: 200,
      method: "GET",
    });
    expect(server.requests.slice(before).map((r) => r.method)).toEqual(["GET"]);
  });

  it("counts any answer below 500 as up, and 5xx as down", async () => {
    expect(await ping(`${server.url}missing`, "HEAD", open)).toMatchObject({ up: true, status: 404 });
    expect(await ping(`${server.url}broken`, "HEAD", open)).toMatchObject({
      up: false,
      status: 503,
      error: null,
    });
  });

  it("reports a redirect with its absolute Location and does not follow it", async () => {
    const before = server.requests.length;
    const result = await ping(`${server.url}moved`, "HEAD", open);
    expect(result).toMatchObject({
      up: true,
      status: 301,
      redirect: { status: 301, location: `${server.url}ok` },
    });
    expect(server.requests.slice(before).map((r) => r.url)).toEqual(["/moved"]);
  });

  it("answers up: false with the reason when the time limit passes", async () => {
    const quick = resolveProbeOptions({ policy: { allowAddresses: ["127.0.0.1"], timeoutMs: 300 } });
    const result = await ping(`${server.url}slow`, "HEAD", quick);
    expect(result).toMatchObject({ up: false, status: null, error: { code: "timeout" } });
    expect(result.latency_ms).toBeGreaterThanOrEqual(250);
  });

  it("answers up: false when nothing listens or the name does not resolve", async () => {
    const gone = await startFixtureServer();
    const url = gone.url;
    await gone.close();
    const refused = await ping(url, "HEAD", open);
    expect(refused).toMatchObject({ up: false, status: null, error: { code: "fetch_failed" } });
    expect(refused.error?.message).toMatch(/ECONNREFUSED/);
    const dns = fakeLookup({});
    const options = resolveProbeOptions({ policy: { lookup: dns.lookup } });
    expect(await ping("https://nowhere.example/", "HEAD", options)).toMatchObject({
      up: false,
      error: { code: "dns_failed" },
    });
  });

  it("refuses a name that resolves to a private address unless the policy allows it", async () => {
    const dns = fakeLookup({ "fixture.test": ["127.0.0.1"] });
    const url = `http://fixture.test:${server.port}/ok`;
    const before = server.requests.length;
    const error = await ping(url, "HEAD", resolveProbeOptions({ policy: { lookup: dns.lookup } })).catch(
      (e) => e,
    );
    expect(isFetchError(error, "ssrf_blocked")).toBe(true);
    expect(error.status).toBe(400);
    expect(server.requests.length).toBe(before);
    const allowed = resolveProbeOptions({ policy: { lookup: dns.lookup, allowAddresses: ["127.0.0.1"] } });
    expect(await ping(url, "HEAD", allowed)).toMatchObject({ up: true, status: 200 });
  });
});

describe("ping input", () => {
  const input = pingEndpoint(resolveProbeOptions()).input;

  it("refuses, before any payment, what needs no DNS to refuse", () => {
    for (const url of [
      "ftp://example.com/",
      "http://user:pw@example.com/",
      "http://127.0.0.1/",
      "http://[::1]/",
      "http://169.254.169.254/latest/meta-data",
      "http://0x7f.1/",
      "http://metadata.google.internal/",
      "http://example.com:25/",
      "http://",
    ]) {
      expect(input.safeParse({ url }).success, url).toBe(false);
    }
    expect(input.safeParse({}).success).toBe(false);
    expect(input.safeParse({ url: "https://example.com/", method: "POST" }).success).toBe(false);
  });

  it("reads a bare host as https and defaults to HEAD", () => {
    expect(input.parse({ url: "example.com/status" })).toEqual({
      url: "https://example.com/status",
      method: "HEAD",
    });
    expect(input.parse({ url: "http://example.com", method: "get" }).method).toBe("GET");
  });

  it("lets an allow-listed literal through (the tests' door)", () => {
    const open = pingEndpoint(resolveProbeOptions({ policy: { allowAddresses: ["127.0.0.1"] } })).input;
    expect(open.safeParse({ url: "http://127.0.0.1:8080/" }).success).toBe(true);
  });
});
