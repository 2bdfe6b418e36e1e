/**
 * The lookup endpoints sold through the real x402 flow on a devnet: one paid happy path each, and a bad
 * input of each that is refused with a 400 and charges nothing. `/api/dns` and `/api/email/verify` ask a
 * DNS server on 127.0.0.1; `/api/timezone` runs on a pinned clock.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lookupEndpoints } from "../../../../src/merchants/utility/lookup/index.ts";
import { type PaidShop, startPaidShop } from "../../../helpers/paid.ts";
import { type DnsFixture, startDnsFixture } from "./dns-fixture.ts";

let dns: DnsFixture;
let shop: PaidShop;

beforeAll(async () => {
  dns = await startDnsFixture();
  const endpoints = lookupEndpoints({
    dns: { servers: [dns.server], timeoutMs: 500, tries: 1, dkimBudgetMs: 1000 },
    clock: () => new Date("2026-07-01T12:00:00Z"),
  });
  shop = await startPaidShop(endpoints);
});
afterAll(async () => {
  await shop?.close();
  await dns?.close();
});

describe("lookup endpoints, paid", () => {
  it.each([
    [
      "/api/timezone?lat=40.7128&lng=-74.006",
      1000n,
      { timezone: "America/New_York", abbreviation: "EDT", local_time: "2026-07-01T08:00:00-04:00" },
    ],
    [
      "/api/geo?ip=1.1.1.1",
      1000n,
      {
        country: "AU",
        city: "Sydney",
        timezone: "Australia/Sydney",
        source: { attribution: "IP Geolocation by DB-IP" },
      },
    ],
    [
      "/api/dns?domain=example.com",
      2000n,
      { status: "NOERROR", email: { dkim: { found_selectors: ["google", "selector1"] } } },
    ],
    [
      "/api/email/verify?email=Jane.Doe%2Bnews%40gmail.com",
      2000n,
      { normalized: "janedoe@gmail.com", verdict: "deliverable" },
    ],
  ])("sells %s", async (path, price, expected) => {
    const before = await shop.balanceOf(shop.buyer().address);
    const merchantBefore = await shop.balanceOf(shop.payTo);
    const response = await shop.buyerFetch()(`${shop.url}${path}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject(expected);
    expect(response.headers.get("PAYMENT-RESPONSE")).toBeTruthy();
    expect(await shop.balanceOf(shop.buyer().address)).toBe(before - price);
    expect(await shop.balanceOf(shop.payTo)).toBe(merchantBefore + price);
  });

  it("charges nothing for bad inputs, even through the paying fetch", async () => {
    const before = await shop.balanceOf(shop.buyer().address);
    for (const path of [
      "/api/timezone?lat=91&lng=0",
      "/api/timezone?lat=10",
      "/api/geo?ip=192.168.1.1",
      "/api/geo?ip=not-an-ip",
      "/api/dns?domain=localhost",
      "/api/dns?domain=1.2.3.4",
      "/api/email/verify",
    ]) {
      // Refused before any payment is asked for: a plain request gets the 400, not a 402.
      expect((await fetch(`${shop.url}${path}`)).status, path).toBe(400);
      const response = await shop.buyerFetch()(`${shop.url}${path}`);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code, path).toBeTruthy();
    }
    expect(await shop.pending()).toBe(0);
    expect(await shop.balanceOf(shop.buyer().address)).toBe(before);
  });

  it("charges nothing for a public address the geo data does not know", async () => {
    const before = await shop.balanceOf(shop.buyer().address);
    // Only the lookup can tell: the payment is asked for, then not settled.
    expect((await fetch(`${shop.url}/api/geo?ip=3000::1`)).status).toBe(402);
    const response = await shop.buyerFetch()(`${shop.url}/api/geo?ip=3000::1`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("location_unknown");
    expect(await shop.pending()).toBe(0);
    expect(await shop.balanceOf(shop.buyer().address)).toBe(before);
  });
});
