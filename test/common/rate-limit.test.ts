import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { Hono } from "hono";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { startDevnet } from "../../src/chain/devnet/index.ts";
import { onError } from "../../src/common/http.ts";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import { listenWithUrl } from "../../src/common/listen.ts";
import {
  clientKey,
  limitPaths,
  limitUnpaid,
  paymentVerified,
  plainAddress,
  TokenBuckets,
  UnpaidLimit,
  type UnpaidLimitSettings,
} from "../../src/common/rate-limit.ts";
import { inProcessClient } from "../../src/facilitator/index.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import { loadConfig } from "../../src/services/config.ts";
import { startServices } from "../../src/services/start.ts";
import { startMiner } from "../helpers/chain.ts";
import { isolatedDatabaseOptions, LEDGER_KIND, openTestDatabase, SERVER_URL } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { echo, listenSupportedOnly, runs, testConfig } from "../helpers/merchant.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";

/** A clock the test turns: no assertion here depends on how fast the machine runs. */
function manualClock() {
  let ms = 1_000_000;
  return { now: () => ms, advance: (by: number) => (ms += by) };
}

const SETTINGS: UnpaidLimitSettings = {
  perSecond: 2,
  burst: 3,
  clients: 1_000,
  loopback: "limited",
  trustedProxies: [],
  forwardedHeader: "x-forwarded-for",
};

/** Node's server bindings as `@hono/node-server` passes them: only the socket's peer is read. */
const from = (remoteAddress: string) => ({ incoming: { socket: { remoteAddress } } });

/**
 * An app behind the limit whose `/paid` route stands for a paywall: a `PAYMENT-SIGNATURE: good` verifies
 * (the route answers 200), any other is refused (402). `verifications` counts the payments it looked at.
 */
function limitedApp(limit: UnpaidLimit) {
  const seen = { verifications: 0 };
  const app = new Hono();
  app.onError(onError);
  app.use("*", limitUnpaid(limit, { carriesPayment: (request) => request.headers.has("payment-signature") }));
  app.get("/free", (c) => c.json({ ok: true }));
  app.get(
    "/paid",
    async (c, next) => {
      const header = c.req.header("payment-signature");
      if (header === undefined) return c.json({}, 402);
      seen.verifications++;
      if (header !== "good") return c.json({}, 402);
      await next();
    },
    paymentVerified(),
    (c) => c.json({ paid: true }),
  );
  const call = (path: string, address: string, headers: Record<string, string> = {}) =>
    app.request(`http://host.test${path}`, { headers }, from(address));
  return { app, seen, call };
}

describe("token buckets", () => {
  it("allow a burst, refuse beyond it until tokens come back at the rate, and never hold more than the burst", () => {
    const clock = manualClock();
    const buckets = new TokenBuckets(2, 3, 10, clock.now);
    expect([1, 2, 3].map(() => buckets.take("a").ok)).toEqual([true, true, true]);
    expect(buckets.take("a")).toEqual({ ok: false, retryAfterS: 1 });
    clock.advance(499);
    expect(buckets.take("a").ok).toBe(false);
    clock.advance(1);
    expect(buckets.take("a").ok).toBe(true);
    expect(buckets.take("a").ok).toBe(false);
    // A long quiet spell fills the bucket to the burst, not beyond.
    clock.advance(3_600_000);
    expect([1, 2, 3, 4].map(() => buckets.take("a").ok)).toEqual([true, true, true, false]);
    // Another key has a bucket of its own.
    expect(buckets.take("b").ok).toBe(true);
  });

  it("say how long until a token in Retry-After's whole seconds, credit included", () => {
    const clock = manualClock();
    const buckets = new TokenBuckets(0.5, 2, 10, clock.now);
    buckets.take("a");
    buckets.take("a");
    expect(buckets.take("a")).toEqual({ ok: false, retryAfterS: 2 });
    // On credit down to -2: two more, then the wait is for the bucket to climb back above the floor.
    expect(buckets.take("a", -2).ok).toBe(true);
    expect(buckets.take("a", -2).ok).toBe(true);
    expect(buckets.take("a", -2)).toEqual({ ok: false, retryAfterS: 2 });
    expect(buckets.take("a")).toEqual({ ok: false, retryAfterS: 6 });
  });

  it("remember at most their capacity, forgetting the client seen least recently, which gets a full bucket back", () => {
    const clock = manualClock();
    const buckets = new TokenBuckets(1, 2, 3, clock.now);
    for (const key of ["a", "b", "c"]) {
      buckets.take(key);
      buckets.take(key);
    }
    // "a" is seen again, so "b" is now the one seen least recently: a new client pushes it out.
    expect(buckets.take("a").ok).toBe(false);
    buckets.take("d");
    expect(buckets.size).toBe(3);
    expect(buckets.tokens("a")).toBe(0);
    expect(buckets.tokens("c")).toBe(0);
    expect(buckets.tokens("b")).toBe(2);
    // A flood from many addresses: the table stays at its capacity.
    for (let i = 0; i < 10_000; i++) buckets.take(`198.51.${i >> 8}.${i & 255}`);
    expect(buckets.size).toBe(3);
    expect(buckets.take("b").ok).toBe(true);
  });

  it("give a token back up to the burst, and nothing to a client already forgotten", () => {
    const clock = manualClock();
    const buckets = new TokenBuckets(1, 2, 1, clock.now);
    buckets.take("a");
    buckets.give("a");
    buckets.give("a");
    expect(buckets.tokens("a")).toBe(2);
    buckets.take("a");
    buckets.take("b");
    buckets.give("a");
    expect(buckets.size).toBe(1);
    expect(buckets.tokens("b")).toBe(1);
  });
});

describe("addresses", () => {
  it("are made plain from what sockets and proxies write", () => {
    expect(plainAddress("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(plainAddress("192.0.2.7:4711")).toBe("192.0.2.7");
    expect(plainAddress("[2001:DB8::1]:4711")).toBe("2001:db8::1");
    expect(plainAddress("fe80::1%eth0")).toBe("fe80::1");
    expect(plainAddress(" 198.51.100.2 ")).toBe("198.51.100.2");
    for (const junk of ["unknown", "_hidden", "", "1.2.3", "not-an-ip"])
      expect(plainAddress(junk)).toBeUndefined();
  });

  it("share a bucket per IPv6 /64, one per IPv4 address", () => {
    expect(clientKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
    expect(clientKey("::ffff:0:1.2.3.4")).toBe("0:0:0:0::/64");
    expect(clientKey("192.0.2.7")).toBe("192.0.2.7");
  });
});

describe("the unpaid limit", () => {
  it("answers a burst beyond the limit with 429, Retry-After and the JSON error shape, client by client", async () => {
    const clock = manualClock();
    const { call } = limitedApp(new UnpaidLimit(SETTINGS, clock.now));
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call("/free", "192.0.2.1")).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const refused = await call("/free", "192.0.2.1");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("too_many_requests");
    expect(body.error.message).toMatch(/try again in 1 s/);
    // Another address is not held back by the first one's requests.
    expect((await call("/free", "192.0.2.2")).status).toBe(200);
    // Nor are 402 challenges: they are unpaid requests too.
    expect((await call("/paid", "192.0.2.1")).status).toBe(429);
    clock.advance(500);
    expect((await call("/paid", "192.0.2.1")).status).toBe(402);
  });

  it("lets a paid request through from a client over its unpaid limit, and gives its token back", async () => {
    const clock = manualClock();
    const limit = new UnpaidLimit(SETTINGS, clock.now);
    const { call } = limitedApp(limit);
    for (let i = 0; i < 3; i++) await call("/free", "192.0.2.1");
    expect((await call("/free", "192.0.2.1")).status).toBe(429);
    for (let i = 0; i < 10; i++) {
      expect((await call("/paid", "192.0.2.1", { "payment-signature": "good" })).status).toBe(200);
    }
    // Paid requests took nothing: the client is exactly where its unpaid requests left it.
    expect(limit.buckets.tokens(clientKey("192.0.2.1"))).toBe(0);
    expect((await call("/free", "192.0.2.1")).status).toBe(429);
  });

  it("counts a payment that does not verify as unpaid, and verifies none once the client's credit is spent", async () => {
    const clock = manualClock();
    const { call, seen } = limitedApp(new UnpaidLimit(SETTINGS, clock.now));
    // Bogus payments from a fresh client use up its unpaid budget...
    for (let i = 0; i < 3; i++) {
      expect((await call("/paid", "192.0.2.9", { "payment-signature": "bogus" })).status).toBe(402);
    }
    expect((await call("/free", "192.0.2.9")).status).toBe(429);
    // ...then its credit (the burst again), after which it is refused before any verification.
    for (let i = 0; i < 3; i++) {
      expect((await call("/paid", "192.0.2.9", { "payment-signature": "bogus" })).status).toBe(402);
    }
    const verified = seen.verifications;
    expect(verified).toBe(6);
    for (let i = 0; i < 5; i++) {
      const refused = await call("/paid", "192.0.2.9", { "payment-signature": "bogus" });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /did not verify/,
      );
    }
    expect(seen.verifications).toBe(verified);
    // The credit comes back at the rate: half a second (one token at 2 a second) and it may pay again.
    clock.advance(500);
    expect((await call("/paid", "192.0.2.9", { "payment-signature": "good" })).status).toBe(200);
  });

  it("exempts loopback clients only when told to", async () => {
    const clock = manualClock();
    const exempt = limitedApp(new UnpaidLimit({ ...SETTINGS, loopback: "exempt" }, clock.now));
    const limited = limitedApp(new UnpaidLimit(SETTINGS, clock.now));
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) {
      const exemptStatuses = [];
      const limitedStatuses = [];
      for (let i = 0; i < 5; i++) {
        exemptStatuses.push((await exempt.call("/free", address)).status);
        limitedStatuses.push((await limited.call("/free", address)).status);
      }
      expect(exemptStatuses, address).toEqual([200, 200, 200, 200, 200]);
      expect(limitedStatuses.filter((s) => s === 429).length, address).toBeGreaterThan(0);
    }
    // Exempt means loopback only: another address is limited as ever.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await exempt.call("/free", "192.0.2.1")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it("leaves a request alone when no socket says who sent it (an app called in process)", async () => {
    const { app } = limitedApp(new UnpaidLimit(SETTINGS, manualClock().now));
    for (let i = 0; i < 10; i++) expect((await app.request("http://host.test/free")).status).toBe(200);
  });

  it("reads the client from a trusted proxy's X-Forwarded-For, right to left, and ignores it from anyone else", () => {
    const limit = new UnpaidLimit({ ...SETTINGS, trustedProxies: ["10.0.0.0/8", "fd00::/8"] });
    const of = (remoteAddress: string, headers: Record<string, string> = {}) =>
      limit.clientOf({ remoteAddress, headers: new Headers(headers) });
    // From the proxy: the last address it appended, whatever the client wrote before it.
    expect(of("10.0.0.1", { "x-forwarded-for": "6.6.6.6, 198.51.100.7" })).toBe("198.51.100.7");
    // Two trusted proxies in a row: the first untrusted hop from the right.
    expect(of("10.0.0.1", { "x-forwarded-for": "198.51.100.7, 10.1.1.1" })).toBe("198.51.100.7");
    expect(of("::ffff:10.0.0.1", { "x-forwarded-for": "2001:db8:5:6::9" })).toBe("2001:db8:5:6::/64");
    // No header, or one the proxy could not fill: the proxy's own address.
    expect(of("10.0.0.1")).toBe("10.0.0.1");
    expect(of("10.0.0.1", { "x-forwarded-for": "unknown" })).toBe("10.0.0.1");
    expect(of("10.0.0.1", { "x-forwarded-for": "198.51.100.7, garbage" })).toBe("10.0.0.1");
    // From anyone else the header is the client's own word: ignored.
    expect(of("192.0.2.5", { "x-forwarded-for": "198.51.100.7" })).toBe("192.0.2.5");
    // Only the configured header is read: a Forwarded header a client added is not.
    expect(of("10.0.0.1", { forwarded: "for=203.0.113.1" })).toBe("10.0.0.1");
    // With none trusted (the default), the socket alone.
    expect(
      new UnpaidLimit(SETTINGS).clientOf({
        remoteAddress: "10.0.0.1",
        headers: new Headers({ "x-forwarded-for": "198.51.100.7" }),
      }),
    ).toBe("10.0.0.1");
  });

  it("reads RFC 7239 Forwarded when the proxies write that, and judges loopback on the client, not the proxy", () => {
    const limit = new UnpaidLimit({
      ...SETTINGS,
      loopback: "exempt",
      trustedProxies: ["127.0.0.1"],
      forwardedHeader: "forwarded",
    });
    const of = (forwarded: string) =>
      limit.clientOf({ remoteAddress: "127.0.0.1", headers: new Headers({ forwarded }) });
    expect(of('for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"')).toBe(
      "2001:db8:cafe:0::/64",
    );
    expect(of('for="198.51.100.3:8080"')).toBe("198.51.100.3");
    expect(of("for=198.51.100.3, for=127.0.0.1")).toBe("198.51.100.3");
    // The proxy on loopback is exempt only as itself; the clients it forwards are limited.
    expect(of("for=_hidden")).toBeUndefined();
    expect(
      limit.clientOf({
        remoteAddress: "127.0.0.1",
        headers: new Headers({ "x-forwarded-for": "198.51.100.3" }),
      }),
    ).toBeUndefined();
  });

  it("limits only the paths it is given in front of another app", async () => {
    const inner = new Hono();
    inner.get("/supported", (c) => c.json({ kinds: [] }));
    inner.post("/verify", (c) => c.json({ isValid: true }));
    const fetch = limitPaths(inner.fetch, new UnpaidLimit({ ...SETTINGS, burst: 1 }, manualClock().now), [
      "/supported",
    ]);
    const call = (path: string, method = "GET") =>
      fetch(new Request(`http://facilitator.test${path}`, { method }), from("192.0.2.1"));
    expect((await call("/supported")).status).toBe(200);
    expect((await call("/supported")).status).toBe(429);
    expect((await call("/supported", "HEAD")).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await call("/verify", "POST")).status).toBe(200);
  });

  it("is configured from the environment, with its defaults and a refusal naming the setting", () => {
    const defaults = loadConfig({ env: {} }).unpaidLimit;
    expect(defaults).toEqual({
      perSecond: 20,
      burst: 100,
      clients: 100_000,
      loopback: "exempt",
      trustedProxies: [],
      forwardedHeader: "x-forwarded-for",
    });
    const set = loadConfig({
      env: {
        X402M_UNPAID_RPS: "0.5",
        X402M_UNPAID_BURST: "7",
        X402M_UNPAID_CLIENTS: "50",
        X402M_UNPAID_LOOPBACK: "limited",
        X402M_TRUSTED_PROXIES: "10.0.0.0/8, ::1",
        X402M_FORWARDED_HEADER: "Forwarded",
      },
    }).unpaidLimit;
    expect(set).toEqual({
      perSecond: 0.5,
      burst: 7,
      clients: 50,
      loopback: "limited",
      trustedProxies: ["10.0.0.0/8", "::1"],
      forwardedHeader: "forwarded",
    });
    expect(() => loadConfig({ env: { X402M_TRUSTED_PROXIES: "10.0.0.0/33" } })).toThrow(
      /X402M_TRUSTED_PROXIES.*10\.0\.0\.0\/33/,
    );
    expect(() => loadConfig({ env: { X402M_UNPAID_LOOPBACK: "sometimes" } })).toThrow(
      /X402M_UNPAID_LOOPBACK/,
    );
    expect(() => loadConfig({ env: { X402M_UNPAID_BURST: "0" } })).toThrow(/X402M_UNPAID_BURST/);
  });
});

describe("the unpaid limit on a merchant host, over HTTP", () => {
  it("lets a paid request through from a client over its limit, and counts payments that do not verify", async () => {
    const devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
    onTestFinished(() => devnet.stop());
    const miner = startMiner(devnet);
    onTestFinished(() => miner.stop());
    const ledger = await openTestDatabase(LEDGER_KIND);
    onTestFinished(ledger.close);
    const facilitator = await devnetFacilitator(devnet, ledger.db);
    onTestFinished(() => facilitator.close());
    const state = await openTestDatabase(SERVER_URL ? "postgres" : "pglite");
    onTestFinished(state.close);
    const config = testConfig();
    const clock = manualClock();
    // Every client here is on loopback, limited as SETTINGS say.
    const limit = new UnpaidLimit({ ...SETTINGS, burst: 2 }, clock.now);
    const host = await listenWithUrl(
      async (publicUrl) =>
        (
          await merchantApp(
            { name: "test", title: "Test", payTo: newMerchant(), publicUrl, endpoints: [echo] },
            {
              services: { db: state.db, config },
              facilitator: inProcessClient(facilitator),
              payments: { ...config.payments, rpcUrl: devnet.rpc },
              limit,
            },
          )
        ).fetch,
      "127.0.0.1",
      0,
    );
    onTestFinished(() => host.close());
    const url = (text: string) => `${host.url}/api/echo?text=${text}`;
    const signed = async (privateKey: `0x${string}`, text: string) => {
      const challenge = await fetch(url(text));
      expect(challenge.status).toBe(402);
      const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
      const client = new x402Client().register(NETWORK, new ExactEvmScheme(privateKeyToAccount(privateKey)));
      return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
    };
    const buyer = devnet.buyers[0]?.privateKey as `0x${string}`;

    // Two challenges spent the burst: the client is over its unpaid limit.
    const good = await signed(buyer, "paid");
    const broke = await signed(generatePrivateKey(), "broke");
    const refused = await fetch(url("again"));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");

    // A payment that verifies is answered and settled all the same, and gives its token back.
    const ran = runs.get("/api/echo") ?? 0;
    const paid = await fetch(url("paid"), { headers: { "PAYMENT-SIGNATURE": good } });
    expect(paid.status).toBe(200);
    expect(paid.headers.get("payment-response")).not.toBeNull();
    expect(runs.get("/api/echo")).toBe(ran + 1);
    expect(limit.buckets.tokens(clientKey("127.0.0.1"))).toBe(0);

    // One from a wallet without funds does not verify: it is a 402, and counts. After the burst's worth of
    // credit, no more are sent to the facilitator: 429 before any work.
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await fetch(url("broke"), { headers: { "PAYMENT-SIGNATURE": broke } })).status);
    }
    expect(statuses).toEqual([402, 402, 429, 429]);
    expect(runs.get("/api/echo")).toBe(ran + 1);
  }, 120_000);

  it("is on for every host `serve` starts (here loopback too, as set)", async () => {
    const facilitator = await listenSupportedOnly();
    onTestFinished(() => facilitator.close());
    const db = await isolatedDatabaseOptions(SERVER_URL ? "postgres" : "pglite");
    onTestFinished(db.cleanup);
    const config = loadConfig({
      env: {
        X402M_DATA: db.dataDir,
        DATABASE_URL: db.databaseUrl ?? "",
        PORT: "0",
        X402M_FACILITATOR_URL: facilitator.url,
        X402M_UTILITY_PAY_TO: newMerchant(),
        X402M_UTILITY_PORT: "0",
        X402M_UNPAID_RPS: "0.001",
        X402M_UNPAID_BURST: "3",
        X402M_UNPAID_LOOPBACK: "limited",
        X402M_METRICS_PORT: "0",
      },
    });
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    const services = await startServices({ config, lifecycle, merchants: ["utility"], reports: {} });
    const { utility, reports } = services.urls as Record<string, string>;
    // One process, one budget: the report service and the merchant host draw on the same bucket.
    const statuses = [];
    for (const target of [`${utility}/openapi.json`, `${reports}/healthz`, `${utility}/api/calc?expr=1`]) {
      statuses.push((await fetch(target)).status);
    }
    statuses.push((await fetch(`${reports}/v1/schema/report.json`)).status);
    statuses.push((await fetch(`${utility}/`)).status);
    expect(statuses).toEqual([200, 200, 402, 429, 429]);
  }, 60_000);
});
