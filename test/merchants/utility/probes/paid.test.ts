/**
 * The probe endpoints sold through the real x402 flow on a devnet: a paid happy path each against a
 * fixture server on 127.0.0.1 (opened through the policy's allow-list), and bad inputs that are refused
 * with a 400 and charge nothing, including a host name that only the probe finds to be private.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeEndpoints } from "../../../../src/merchants/utility/probes/index.ts";
import {
  type FixtureServer,
  fakeLookup,
  redirect,
  startFixtureServer,
  text,
} from "../../../helpers/fixtures/index.ts";
import { type PaidShop, startPaidShop } from "../../../helpers/paid.ts";
import { usdcReader } from "../../../helpers/x402.ts";

let site: FixtureServer;
let shop: PaidShop;
// `site.test` is the fixture; `intranet.test` is a name that resolves to a private address.
const dns = fakeLookup({ "site.test": ["127.0.0.1"], "intranet.test": ["10.0.0.7"] });

beforeAll(async () => {
  site = await startFixtureServer({ routes: { "/": text("home"), "/old": redirect("/") } });
  shop = await startPaidShop(
    probeEndpoints({ policy: { allowAddresses: ["127.0.0.1"], lookup: dns.lookup, timeoutMs: 3_000 } }),
  );
});
afterAll(async () => {
  await shop?.close();
  await site?.close();
});

const buyer = () => shop.buyer();
const buyerFetch = () => shop.buyerFetch();
const q = (url: string) => encodeURIComponent(url);

describe("probe endpoints, paid", () => {
  it.each([
    [
      "/api/ping",
      () => `/api/ping?url=${q(`http://site.test:${site.port}/old`)}`,
      1000n,
      { up: true, status: 302, ip: "127.0.0.1", redirect: { status: 302 } },
    ],
    [
      "/api/uptime/report",
      () => `/api/uptime/report?url=${q(`http://site.test:${site.port}/old`)}`,
      10000n,
      {
        up: true,
        status: 302,
        final_status: 200,
        network: { ip: "127.0.0.1" },
        redirects: [{ status: 302 }],
      },
    ],
  ])("sells %s", async (_name, path, price, expected) => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    const merchantBefore = await usdc.balanceOf(shop.payTo);
    const response = await buyerFetch()(`${shop.url}${path()}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject(expected);
    expect(response.headers.get("PAYMENT-RESPONSE")).toBeTruthy();
    expect(await usdc.balanceOf(buyer().address)).toBe(before - price);
    expect(await usdc.balanceOf(shop.payTo)).toBe(merchantBefore + price);
  });

  it("charges nothing for bad inputs, even through the paying fetch", async () => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    for (const path of [
      "/api/ping",
      `/api/ping?url=${q("ftp://example.com/")}`,
      `/api/ping?url=${q("http://169.254.169.254/latest/meta-data/")}`,
      `/api/ping?url=${q("https://example.com/")}&method=DELETE`,
      `/api/uptime/report?url=${q("http://10.0.0.1/")}`,
      `/api/uptime/report?url=${q("http://user:pw@example.com/")}`,
    ]) {
      // Refused before any payment is asked for: a plain request gets the 400, not a 402.
      expect((await fetch(`${shop.url}${path}`)).status, path).toBe(400);
      const response = await buyerFetch()(`${shop.url}${path}`);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code, path).toBe("invalid_input");
    }
    expect(await shop.pending()).toBe(0);
    expect(await usdc.balanceOf(buyer().address)).toBe(before);
  });

  it("charges nothing when the host turns out to be private (refused after payment was offered)", async () => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    for (const path of ["/api/ping", "/api/uptime/report"]) {
      const url = `${shop.url}${path}?url=${q("http://intranet.test/")}`;
      // Only DNS can tell: the request is valid, so it is offered for payment...
      expect((await fetch(url)).status, path).toBe(402);
      // ...and refused by the probe, which the platform never settles.
      const response = await buyerFetch()(url);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code, path).toBe("ssrf_blocked");
    }
    expect(await shop.pending()).toBe(0);
    expect(await usdc.balanceOf(buyer().address)).toBe(before);
  });
});
