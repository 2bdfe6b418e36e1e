/**
 * `X402M_FETCH_ALLOW` reaches every utility endpoint that fetches a caller's URL: without it a page on
 * this host is refused; with it the operator's own services can be scraped and probed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyEndpoint } from "../../src/merchant-kit/endpoint.ts";
import { MERCHANTS } from "../../src/merchants/index.ts";
import { loadConfig } from "../../src/services/config.ts";
import { type FixtureServer, html, startFixtureServer } from "../helpers/fixtures/index.ts";

let server: FixtureServer;
beforeAll(async () => {
  server = await startFixtureServer({
    routes: { "/": html("<html><head><title>Wiki</title></head><body><p>Internal notes.</p></body></html>") },
  });
});
afterAll(() => server?.close());

const host = { payTo: "0x000000000000000000000000000000000000dEaD" as const, publicUrl: "https://u.test" };

function endpointOf(env: Record<string, string>, path: string): AnyEndpoint {
  const endpoint = MERCHANTS.utility(host, loadConfig({ env })).endpoints.find((e) => e.path === path);
  if (!endpoint) throw new Error(`no ${path}`);
  return endpoint;
}

async function call(endpoint: AnyEndpoint, input: unknown): Promise<unknown> {
  const config = loadConfig({ env: {} });
  return endpoint.handler(endpoint.input.parse(input), {
    payer: "0x0000000000000000000000000000000000000001",
    signal: AbortSignal.timeout(10_000),
    services: { config, db: undefined as never },
    request: new Request("https://u.test/"),
  });
}

describe("the operator's fetch allow-list", () => {
  it("keeps this host's services out by default and lets them in when listed", async () => {
    const refused = await call(endpointOf({}, "/api/scrape"), { url: server.url }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "ssrf_blocked", status: 400 });

    const allowed = { X402M_FETCH_ALLOW: "127.0.0.1" };
    expect(await call(endpointOf(allowed, "/api/scrape"), { url: server.url })).toMatchObject({
      title: "Wiki",
    });
    expect(await call(endpointOf(allowed, "/api/ping"), { url: server.url })).toMatchObject({ status: 200 });
  });
});
