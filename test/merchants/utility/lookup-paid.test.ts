/**
 * The lookup endpoints sold through the real x402 flow on a devnet: one paid happy path each, and a bad
 * input of each that is refused with a 400 and charges nothing. `/api/dns` and `/api/email/verify` ask a
 * DNS server on 127.0.0.1; `/api/timezone` runs on a pinned clock.
 */
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, startDevnet } from "../../../src/chain/devnet.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { lookupEndpoints } from "../../../src/merchants/utility/lookup/index.ts";
import type { Listening } from "../../../src/platform/listen.ts";
import { startMiner } from "../../helpers/chain.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant } from "../../helpers/merchant.ts";
import { NETWORK, newMerchant, usdcReader } from "../../helpers/x402.ts";
import { type DnsFixture, startDnsFixture } from "./lookup-dns-fixture.ts";

let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;
let facilitator: Facilitator;
let dns: DnsFixture;
let shop: Listening;
const payTo = newMerchant();
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
  miner = startMiner(devnet);
  const facilitatorDb = await openTestDatabase("pglite");
  closers.push(facilitatorDb.close);
  facilitator = await devnetFacilitator(devnet, facilitatorDb.db);
  dns = await startDnsFixture();
  const merchantDb = await openTestDatabase("pglite");
  closers.push(merchantDb.close);
  const endpoints = lookupEndpoints({
    dns: { servers: [dns.server], timeoutMs: 500, tries: 1, dkimBudgetMs: 1000 },
    clock: () => new Date("2026-07-01T12:00:00Z"),
  });
  shop = await startMerchant(
    (url) => ({ name: "lookup", title: "Lookup test", payTo, publicUrl: url, endpoints }),
    merchantDb.db,
    inProcessClient(facilitator),
  );
});
afterAll(async () => {
  await shop?.close();
  await facilitator?.close();
  await dns?.close();
  for (const close of closers.reverse()) await close();
  await miner?.stop();
  await devnet?.stop();
});

const buyer = () => devnet.buyers[0] as Devnet["buyers"][0];
const buyerFetch = () =>
  wrapFetchWithPayment(
    fetch,
    new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer().privateKey))),
  );

describe("lookup endpoints, paid", () => {
  it.each([
    [
      "/api/timezone?lat=40.7128&lng=-74.006",
      1000n,
      { timezone: "America/New_York", abbreviation: "EDT", local_time: "2026-07-01T08:00:00-04:00" },
    ],
    ["/api/geo?ip=81.2.69.160", 1000n, { country: "GB", city: "St Albans", timezone: "Europe/London" }],
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
    const usdc = usdcReader(devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    const merchantBefore = await usdc.balanceOf(payTo);
    const response = await buyerFetch()(`${shop.url}${path}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject(expected);
    expect(response.headers.get("PAYMENT-RESPONSE")).toBeTruthy();
    expect(await usdc.balanceOf(buyer().address)).toBe(before - price);
    expect(await usdc.balanceOf(payTo)).toBe(merchantBefore + price);
  });

  it("charges nothing for bad inputs, even through the paying fetch", async () => {
    const usdc = usdcReader(devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
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
      const response = await buyerFetch()(`${shop.url}${path}`);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code, path).toBeTruthy();
    }
    await miner.pending();
    expect(await usdc.balanceOf(buyer().address)).toBe(before);
  });
});
