/**
 * A route's 402 made once (payments/required-cache.ts) is the SDK's: for every route of every project merchant,
 * with every extension a host may declare (signed offers, sign-in, builder code) and every way to pay (channels
 * among them), the kit's answer to an unpaid request is compared with the one `@x402/core` builds alone for the
 * same request, header bytes included; only what is fresh by design (a sign-in challenge's nonce and times)
 * is set aside. And a change in the facilitators' `/supported` is seen in the next 402, made again.
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { x402HTTPResourceServer, x402ResourceServer } from "@x402/core/server";
import { HonoAdapter } from "@x402/hono";
import { Hono } from "hono";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Database } from "../../../src/common/db/index.ts";
import { resourceServers } from "../../../src/merchant-kit/app.ts";
import { isMetered, type Merchant } from "../../../src/merchant-kit/endpoint.ts";
import { paymentFronts } from "../../../src/merchant-kit/payments/fronts.ts";
import { UnpaidAnswers } from "../../../src/merchant-kit/payments/required-cache.ts";
import {
  MerchantResourceServer,
  PublicUrlResourceServer,
} from "../../../src/merchant-kit/payments/resource-server.ts";
import { REFUND_PATH, refundRoute, x402Routes } from "../../../src/merchant-kit/routes.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../src/merchants/inference/catalogue.ts";
import { socialMerchant, socialProxyMerchant } from "../../../src/merchants/social/catalogue.ts";
import { socialSetup } from "../../../src/merchants/social/setup.ts";
import { utilityMerchant } from "../../../src/merchants/utility/catalogue.ts";
import { loadConfig } from "../../../src/services/config.ts";
import { switchingFacilitator } from "../../helpers/facilitator.ts";
import { NETWORK, newMerchant } from "../../helpers/x402.ts";

const config = loadConfig({ env: {} });
/** Where the host listens; its 402s name its public URL, which has a path of its own. */
const LOCAL = "http://127.0.0.1:1";
const AUTHORIZER = "0x00000000000000000000000000000000000000a1";

/** A facilitator that lists every way to pay (upto while on) and judges every probe. */
const facilitator = () => switchingFacilitator(AUTHORIZER, { upto: true, channels: true });

/** Each project merchant, with what a host may add: a receipt key, a builder code, its own channel authorizer. */
function merchants(): Merchant[] {
  const host = { payTo: newMerchant(), publicUrl: "https://api.example.test/base" };
  const social = socialSetup(config.social);
  return [
    utilityMerchant(host),
    inferenceMerchant(host, OFFLINE_SETTINGS),
    socialMerchant(host, social),
    socialProxyMerchant(host, social),
  ].map((m) => ({
    ...m,
    // Signed offers on the merchants of few routes: each new URL's offers are signed (1.6 ms a way).
    ...(m.name.startsWith("social") && { receiptSigner: privateKeyToAccount(generatePrivateKey()) }),
    builderCode: "x402m_test",
    channelAuthorizer: privateKeyToAccount(generatePrivateKey()),
  }));
}

/** An app answering each request with what `http` tells the SDK's middleware to answer, as JSON. */
function answering(http: () => Promise<PublicUrlResourceServer>): Hono {
  return new Hono().all("*", async (c) => {
    const request = { adapter: new HonoAdapter(c), path: c.req.path, method: c.req.method };
    return c.json(await (await http()).processHTTPRequest(request));
  });
}

/**
 * The merchant's payments as merchantApp makes them: its resource server, read the facilitator's support, and
 * its routes with the refund route. Not its fronts (payments/fronts.ts): a process's first front of a catalogue
 * checks every route's Bazaar schema (payments/bazaar-checked.ts), a second on these catalogues.
 */
async function host(merchant: Merchant, client: FacilitatorClient) {
  // Channels' storage is not read by an unpaid request.
  const server = resourceServers(merchant, {} as Database, client, NETWORK, config.channels)();
  await server.initialize();
  const refund = refundRoute(merchant, config.payments);
  const routes = {
    ...x402Routes(merchant, config.payments),
    ...(refund && { [`GET ${REFUND_PATH}`]: refund }),
  };
  const http = new PublicUrlResourceServer(server, routes, merchant.publicUrl);
  return { app: answering(async () => http), routes };
}

/** With the cache off: the SDK's own `processHTTPRequest`, requirements and enriched declarations. */
function sdkAlone() {
  const answer = vi.spyOn(UnpaidAnswers.prototype, "answer").mockResolvedValue(undefined);
  const built = vi
    .spyOn(MerchantResourceServer.prototype, "buildPaymentRequirementsFromOptions")
    .mockImplementation(function (this: x402ResourceServer, ...args) {
      return x402ResourceServer.prototype.buildPaymentRequirementsFromOptions.apply(this, args);
    });
  const enriched = vi
    .spyOn(MerchantResourceServer.prototype, "enrichExtensions")
    .mockImplementation(function (this: x402ResourceServer, ...args) {
      return x402ResourceServer.prototype.enrichExtensions.apply(this, args);
    });
  return () => {
    for (const spy of [answer, built, enriched]) spy.mockRestore();
  };
}

/** A request of each route the middleware guards: path parameters filled, a query with characters to encode. */
function requests(routes: Record<string, unknown>): Request[] {
  return Object.keys(routes).map((key) => {
    const [method, path] = key.split(" ") as [string, string];
    const filled = path.replace(/:([a-zA-Z_]\w*)/g, "x_$1");
    return new Request(`${LOCAL}${filled}?q=a%20b&n=1`, {
      method,
      headers: { accept: "application/json" },
    });
  });
}

type Seen = { status: number; headers: Record<string, string>; body: unknown; header: string };

async function seen(app: Hono, request: Request): Promise<Seen> {
  const result = (await (await app.fetch(request.clone())).json()) as { response?: Omit<Seen, "header"> };
  const { status, headers, body } = result.response ?? { status: 0, headers: {}, body: undefined };
  return {
    status,
    headers: { ...headers, "PAYMENT-REQUIRED": "" },
    body,
    header: headers["PAYMENT-REQUIRED"] ?? "",
  };
}

/** The 402's JSON with the sign-in challenge's fresh fields set aside (a new nonce and time per 402, by design). */
function settled(header: string): string {
  const required = decodePaymentRequiredHeader(header) as { extensions?: Record<string, { info?: object }> };
  const info = required.extensions?.["sign-in-with-x"]?.info as Record<string, unknown> | undefined;
  if (info)
    for (const field of ["nonce", "issuedAt", "expirationTime"]) if (field in info) info[field] = "fresh";
  return JSON.stringify(required);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a route's 402, made once", () => {
  it("is the SDK's for every route of every merchant, header bytes included but for the sign-in challenge", async () => {
    const { client } = facilitator();
    let routes = 0;
    for (const merchant of merchants()) {
      const { app, routes: guarded } = await host(merchant, client);
      for (const request of requests(guarded)) {
        const name = `${merchant.name} ${request.method} ${new URL(request.url).pathname}`;
        // Twice each: once made, once kept.
        const sdkAnswers = vi.spyOn(x402HTTPResourceServer.prototype, "processHTTPRequest");
        const made = await seen(app, request);
        const kept = await seen(app, request);
        // Answered from what was made, the SDK's answer never asked for.
        expect(sdkAnswers, name).not.toHaveBeenCalled();
        sdkAnswers.mockRestore();
        const restore = sdkAlone();
        const sdk = await seen(app, request);
        restore();
        expect(sdk.status, name).toBe(402);
        const signsIn = "sign-in-with-x" in (decodePaymentRequiredHeader(sdk.header).extensions ?? {});
        for (const ours of [made, kept]) {
          expect({ ...ours, header: settled(ours.header) }, name).toEqual({
            ...sdk,
            header: settled(sdk.header),
          });
          if (!signsIn) expect(ours.header, name).toBe(sdk.header);
        }
        if (signsIn) expect(settled(made.header), name).not.toBe(made.header);
        routes++;
      }
    }
    expect(routes).toBeGreaterThan(20);
  });

  it("keeps the sign-in challenge fresh in every 402", async () => {
    const merchant = merchants()[3] as Merchant;
    const { app } = await host(merchant, facilitator().client);
    const day = merchant.endpoints.find((e) => e.accessSeconds) as Merchant["endpoints"][number];
    const request = new Request(`${LOCAL}${day.path.replace(/:(\w+)/g, "x_$1")}`, {
      method: day.method,
    });
    const nonces = new Set<unknown>();
    for (let i = 0; i < 3; i++) {
      const { header } = await seen(app, request);
      const required = decodePaymentRequiredHeader(header);
      const signIn = required.extensions?.["sign-in-with-x"] as { info: { nonce: string } };
      nonces.add(signIn.info.nonce);
    }
    expect(nonces.size).toBe(3);
  });

  it("is made again when the facilitators' /supported changes", async () => {
    const { client, kinds } = facilitator();
    const inference = merchants()[1] as Merchant;
    // One metered route: a front checks its routes' Bazaar schemas, the first time a process makes it.
    const merchant = { ...inference, endpoints: inference.endpoints.filter(isMetered).slice(0, 1) };
    const metered = merchant.endpoints[0] as Merchant["endpoints"][number];
    const servers = resourceServers(merchant, {} as Database, client, NETWORK, config.channels);
    const fronts = paymentFronts(merchant, servers, config.payments, config.channels, client);
    const app = answering(async () => (await fronts.pick()).httpServer);
    const request = requests({ [`${metered.method} ${metered.path}`]: {} })[0] as Request;
    const schemes = async () =>
      decodePaymentRequiredHeader((await seen(app, request)).header).accepts.map((a) => a.scheme);
    expect(await schemes()).toContain("upto");
    kinds.upto = false;
    await fronts.refresh();
    expect(await schemes()).not.toContain("upto");
    const restore = sdkAlone();
    const sdk = await seen(app, request);
    restore();
    expect((await seen(app, request)).header).toBe(sdk.header);
    kinds.upto = true;
    await fronts.refresh();
    expect(await schemes()).toContain("upto");
  });
});
