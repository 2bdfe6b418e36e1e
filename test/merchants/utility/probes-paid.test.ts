/**
 * The probe endpoints sold through the real x402 flow on a devnet: a paid happy path each against a
 * fixture server on 127.0.0.1 (opened through the policy's allow-list), and bad inputs that are refused
 * with a 400 and charge nothing, including a host name that only the probe finds to be private.
 */
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, startDevnet } from "../../../src/chain/devnet.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { probeEndpoints } from "../../../src/merchants/utility/probes/index.ts";
import type { Listening } from "../../../src/platform/listen.ts";
import { startMiner } from "../../helpers/chain.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import {
  type FixtureServer,
  fakeLookup,
  redirect,
  startFixtureServer,
  text,
} from "../../helpers/fixtures/index.ts";
import { startMerchant } from "../../helpers/merchant.ts";
import { NETWORK, newMerchant, usdcReader } from "../../helpers/x402.ts";

let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;
let facilitator: Facilitator;
let site: FixtureServer;
let shop: Listening;
const payTo = newMerchant();
const closers: (() => Promise<void>)[] = [];
// `site.test` is the fixture; `intranet.test` is a name that resolves to a private address.
const dns = fakeLookup({ "site.test": ["127.0.0.1"], "intranet.test": ["10.0.0.7"] });

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
  miner = startMiner(devnet);
  const facilitatorDb = await openTestDatabase("pglite");
  closers.push(facilitatorDb.close);
  facilitator = await devnetFacilitator(devnet, facilitatorDb.db);
  site = await startFixtureServer({ routes: { "/": text("home"), "/old": redirect("/") } });
  const merchantDb = await openTestDatabase("pglite");
  closers.push(merchantDb.close);
  const endpoints = probeEndpoints({
    policy: { allowAddresses: ["127.0.0.1"], lookup: dns.lookup, timeoutMs: 3_000 },
  });
  shop = await startMerchant(
    (url) => ({ name: "probes", title: "Probes test", payTo, publicUrl: url, endpoints }),
    merchantDb.db,
    inProcessClient(facilitator),
  );
});
afterAll(async () => {
  await shop?.close();
  await facilitator?.close();
  await site?.close();
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
    const usdc = usdcReader(devnet.rpc);
    const before = await usdc.balanceOf(buyer().address);
    const merchantBefore = await usdc.balanceOf(payTo);
    const response = await buyerFetch()(`${shop.url}${path()}`);
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
    await miner.pending();
    expect(await usdc.balanceOf(buyer().address)).toBe(before);
  });

  it("charges nothing when the host turns out to be private (refused after payment was offered)", async () => {
    const usdc = usdcReader(devnet.rpc);
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
    await miner.pending();
    expect(await usdc.balanceOf(buyer().address)).toBe(before);
  });
});
