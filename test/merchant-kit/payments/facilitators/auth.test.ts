/**
 * What merchants send a facilitator besides the payment: static headers from configuration, and a CDP
 * API key JWT per request built by `@coinbase/x402`, checked by a stand-in on 127.0.0.1 the way Coinbase
 * documents its JWTs (test/helpers/cdp-facilitator.ts). No chain: the facilitator behind the stand-in
 * answers canned x402 responses; the paid flow on a devnet is facilitators.test.ts.
 */
import { generateKeyPairSync } from "node:crypto";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Listening, listen } from "../../../../src/common/listen.ts";
import {
  COINBASE_FACILITATOR_URL,
  cdpKeySecret,
  facilitatorAuthHeaders,
  parseHeaderLines,
} from "../../../../src/merchant-kit/payments/facilitators/auth.ts";
import { FacilitatorsUnavailableError } from "../../../../src/merchant-kit/payments/facilitators/list.ts";
import { loadConfig } from "../../../../src/services/config.ts";
import { configuredFacilitators } from "../../../../src/services/merchants.ts";
import {
  CDP_BASE_PATH,
  type StandIn,
  signTestJwt,
  startStandIn,
  type TestCdpKey,
  testCdpKey,
} from "../../../helpers/cdp-facilitator.ts";
import { EXACT_REQUIREMENTS, exactPayment } from "../../../helpers/fixtures/payment.ts";
import { refusingFacilitator } from "../../../helpers/merchant.ts";

/** The facilitator behind the stand-ins: lists Base's schemes, refuses every payment (well-formed answers). */
let upstream: Listening;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const app = new Hono()
    .get("/supported", async (c) => c.json(await refusingFacilitator.getSupported()))
    .post("/verify", (c) =>
      c.json({ isValid: false, invalidReason: "test_refuses", invalidMessage: "canned" }),
    )
    .post("/settle", (c) =>
      c.json({ success: false, errorReason: "test_refuses", transaction: "", network: "eip155:8453" }),
    );
  upstream = await listen(app.fetch, "127.0.0.1", 0);
  closers.push(() => upstream.close());
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

async function standIn(auth: Parameters<typeof startStandIn>[1]): Promise<StandIn> {
  const started = await startStandIn(upstream.url, auth);
  closers.push(() => started.close());
  return started;
}

const requirements = EXACT_REQUIREMENTS;
const payment = exactPayment();

/** The merchants' client as `serve` builds it from these settings. */
function clientFor(env: Record<string, string>) {
  return configuredFacilitators(
    loadConfig({ env: { X402M_RPC_URL: "http://127.0.0.1:1", ...env } }).payments,
  );
}

function claimsOf(authorization: string | undefined) {
  const [head, body] = (authorization ?? "").replace(/^Bearer /, "").split(".");
  return {
    header: JSON.parse(Buffer.from(head ?? "", "base64url").toString()) as Record<string, unknown>,
    claims: JSON.parse(Buffer.from(body ?? "", "base64url").toString()) as Record<string, unknown>,
  };
}

describe("static headers", () => {
  it("parses Name: value lines, separated by newlines or a literal \\n", () => {
    expect(parseHeaderLines("Authorization: Bearer a:b\\nX-Tenant: shop-1\n\n")).toEqual({
      Authorization: "Bearer a:b",
      "X-Tenant": "shop-1",
    });
  });

  it.each([
    ["Authorization Bearer s3cret", /line 1 is not "Name: value"/],
    ["Content-Type: text/plain", /set by the client itself/],
    ["Authorization: Bearer s3cret\\nauthorization: Bearer s3cret", /given twice/],
    ["X-Empty:", /empty or invalid value/],
  ])("refuses %j, naming the header, never the value", (text, message) => {
    let error: Error | undefined;
    try {
      parseHeaderLines(text);
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toMatch(/s3cret/);
  });

  it("reach the facilitator on every call, and a wrong key is named by its setting", async () => {
    const front = await standIn({ bearer: "k-1" });
    const client = clientFor({
      X402M_FACILITATOR_URL: front.url,
      X402M_FACILITATOR_HEADERS: "Authorization: Bearer k-1\\nX-Tenant: shop-1",
    });
    await client.getSupported();
    expect((await client.verify(payment, requirements)).invalidReason).toBe("test_refuses");
    expect(front.calls).toMatchObject({ supported: 1, verify: 1 });
    expect(front.seen.map((h) => [h.authorization, h["x-tenant"]])).toEqual([
      ["Bearer k-1", "shop-1"],
      ["Bearer k-1", "shop-1"],
    ]);

    const wrong = clientFor({
      X402M_FACILITATOR_URL: front.url,
      X402M_FACILITATOR_HEADERS: "Authorization: Bearer k-2",
    });
    const error = await wrong.verify(payment, requirements).then(
      () => new Error("no error"),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(FacilitatorsUnavailableError);
    expect(error.message).toMatch(
      /refused the merchant's credentials, check X402M_FACILITATOR_HEADERS \(401/,
    );
    expect(error.message).not.toMatch(/k-2/);
    expect(front.refusals).toEqual(["wrong bearer token"]);
  });
});

describe("the CDP key secret", () => {
  it("takes an Ed25519 key as it is and an EC key in SEC1 or PKCS#8 (escaped newlines too) as PKCS#8", async () => {
    const ed = testCdpKey("ed25519");
    expect(cdpKeySecret(ed.apiKeySecret)).toBe(ed.apiKeySecret);
    const ec = testCdpKey("ec");
    const pkcs8 = cdpKeySecret(ec.apiKeySecret.replace(/\n/g, "\\n"));
    expect(pkcs8).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    // Coinbase's signer refuses SEC1 itself; the converted key signs.
    const { createAuthHeader } = await import("@coinbase/x402");
    await expect(createAuthHeader("k", ec.apiKeySecret, "GET", "h", "/p")).rejects.toThrow();
    expect(await createAuthHeader("k", pkcs8, "GET", "h", "/p")).toMatch(/^Bearer ey/);
  });

  it("refuses other keys without quoting them", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({
      format: "pem",
      type: "pkcs8",
    });
    for (const secret of [rsa.toString(), "c2VjcmV0LXZhbHVl", "not a key at all"]) {
      expect(() => cdpKeySecret(secret)).toThrow(/EC|Ed25519/);
      try {
        cdpKeySecret(secret);
      } catch (error) {
        expect((error as Error).message).not.toContain(secret.slice(0, 20));
      }
    }
  });
});

describe("Coinbase's facilitator", () => {
  it("gets @coinbase/x402's own headers: a JWT per path naming api.cdp.coinbase.com, and the correlation header", async () => {
    const key = testCdpKey("ed25519");
    const make = facilitatorAuthHeaders(
      COINBASE_FACILITATOR_URL,
      { authorization: "Bearer replaced", "X-Tenant": "shop-1" },
      { apiKeyId: key.apiKeyId, apiKeySecret: key.apiKeySecret },
    );
    const headers = await make?.();
    for (const [path, method] of [
      ["verify", "POST"],
      ["settle", "POST"],
      ["supported", "GET"],
    ] as const) {
      const sent = headers?.[path] ?? {};
      expect(Object.keys(sent).filter((h) => h.toLowerCase() === "authorization")).toEqual(["Authorization"]);
      expect(sent["X-Tenant"]).toBe("shop-1");
      expect(sent["Correlation-Context"]).toMatch(/source=x402/);
      const { header, claims } = claimsOf(sent.Authorization);
      expect(header).toMatchObject({ alg: "EdDSA", kid: key.apiKeyId, typ: "JWT" });
      expect(claims).toMatchObject({
        iss: "cdp",
        sub: key.apiKeyId,
        uris: [`${method} api.cdp.coinbase.com/platform/v2/x402/${path}`],
      });
      expect((claims.exp as number) - (claims.nbf as number)).toBe(120);
    }
  });

  it("its URL signs with a CDP key by default, and one must be set", () => {
    const key = testCdpKey("ec");
    const config = loadConfig({
      env: { CDP_API_KEY_ID: key.apiKeyId, CDP_API_KEY_SECRET: key.apiKeySecret },
    });
    expect(config.payments.facilitators).toEqual([
      { url: COINBASE_FACILITATOR_URL, headers: {}, auth: "cdp" },
    ]);
    expect(config.payments.cdp?.apiKeySecret).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(() => loadConfig({ env: { X402M_FACILITATOR_URL: COINBASE_FACILITATOR_URL } })).toThrow(
      /invalid X402M_FACILITATOR_URL: .* set CDP_API_KEY_ID and CDP_API_KEY_SECRET \(or X402M_FACILITATOR_AUTH=none\)/,
    );
    expect(() => loadConfig({ env: { CDP_API_KEY_ID: key.apiKeyId } })).toThrow(/invalid CDP_API_KEY_SECRET/);
    expect(() => loadConfig({ env: { X402M_FACILITATOR_3_URL: "http://127.0.0.1:1" } })).toThrow(
      /invalid X402M_FACILITATOR_3_URL: set X402M_FACILITATOR_2_URL first/,
    );
  });
});

describe.each(["ec", "ed25519"] as const)("a stand-in checking CDP JWTs (%s key)", (kind) => {
  let key: TestCdpKey;
  let front: StandIn;
  let host: string;

  beforeAll(async () => {
    key = testCdpKey(kind);
    front = await standIn({ cdp: { apiKeyId: key.apiKeyId, publicKey: key.publicKey } });
    host = new URL(front.url).host;
  });

  const env = () => ({
    X402M_FACILITATOR_URL: front.url,
    X402M_FACILITATOR_AUTH: "cdp",
    CDP_API_KEY_ID: key.apiKeyId,
    CDP_API_KEY_SECRET: key.apiKeySecret,
  });

  it("answers the merchants' client, which signs each request for its method, host and path", async () => {
    const before = { ...front.calls };
    const client = clientFor(env());
    await Promise.all([
      client.getSupported(),
      client.verify(payment, requirements),
      client.settle(payment, requirements),
    ]);
    expect(front.calls.supported).toBe((before.supported ?? 0) + 1);
    expect(front.calls.verify).toBe((before.verify ?? 0) + 1);
    expect(front.calls.settle).toBe((before.settle ?? 0) + 1);
    expect(front.refusals).toEqual([]);
  });

  it("refuses a client with another key of the same id, and the merchant is told which settings to check", async () => {
    const other = testCdpKey(kind, key.apiKeyId);
    const client = clientFor({ ...env(), CDP_API_KEY_SECRET: other.apiKeySecret });
    const error = await client.getSupported().then(
      () => new Error("no error"),
      (e: unknown) => e as Error,
    );
    expect(error.message).toMatch(
      /refused the merchant's credentials, check CDP_API_KEY_ID and CDP_API_KEY_SECRET \(401.*bad signature/,
    );
    expect(front.refusals.pop()).toBe("bad signature");
  });

  const now = () => Math.floor(Date.now() / 1000);
  const good = (path: string, method = "POST") => ({
    iss: "cdp",
    sub: key.apiKeyId,
    nbf: now(),
    exp: now() + 120,
    uris: [`${method} ${host}${CDP_BASE_PATH}/${path}`],
  });
  const cases: [string, () => string, string, string][] = [
    ["a well-formed token", () => signTestJwt(key, good("verify")), "verify", "ok"],
    [
      "an expired token",
      () => signTestJwt(key, { ...good("verify"), nbf: now() - 300, exp: now() - 180 }),
      "verify",
      "exp is past",
    ],
    [
      "a token not valid yet",
      () => signTestJwt(key, { ...good("verify"), nbf: now() + 60, exp: now() + 180 }),
      "verify",
      "nbf is in the future",
    ],
    [
      "a token living longer than 2 minutes",
      () => signTestJwt(key, { ...good("verify"), exp: now() + 3600 }),
      "verify",
      "lives longer than 2 minutes",
    ],
    [
      "another issuer",
      () => signTestJwt(key, { ...good("verify"), iss: "coinbase" }),
      "verify",
      "iss is not cdp",
    ],
    [
      "another subject",
      () => signTestJwt(key, { ...good("verify"), sub: "someone" }),
      "verify",
      "sub is not the key's id",
    ],
    [
      "another kid",
      () => signTestJwt(key, good("verify"), { kid: "someone" }),
      "verify",
      "kid is not the key's id",
    ],
    ["no nonce", () => signTestJwt(key, good("verify"), { nonce: undefined }), "verify", "no nonce"],
    [
      "an audience",
      () => signTestJwt(key, { ...good("verify"), aud: ["elsewhere"] }),
      "verify",
      "aud is not this service",
    ],
    [
      "a token for /verify sent to /settle",
      () => signTestJwt(key, good("verify")),
      "settle",
      `uris is not ["POST ${"HOST"}${CDP_BASE_PATH}/settle"]`,
    ],
    [
      "a token for another host",
      () =>
        signTestJwt(key, { ...good("verify"), uris: [`POST api.cdp.coinbase.com${CDP_BASE_PATH}/verify`] }),
      "verify",
      "uris is not",
    ],
    [
      "a token for GET sent with POST",
      () => signTestJwt(key, good("verify", "GET")),
      "verify",
      "uris is not",
    ],
    [
      "a token signed by another key",
      () => signTestJwt(testCdpKey(kind, key.apiKeyId), good("verify")),
      "verify",
      "bad signature",
    ],
  ];

  it.each(cases)("%s: %s", async (_, token, path, expected) => {
    const response = await fetch(`${front.url}/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token()}`, "content-type": "application/json" },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: requirements }),
    });
    if (expected === "ok") {
      expect(response.status).toBe(200);
      return;
    }
    expect(response.status).toBe(401);
    const body = (await response.json()) as { errorMessage: string };
    expect(body.errorMessage).toContain(expected.replace("HOST", host));
  });

  it("refuses a token used twice", async () => {
    const token = signTestJwt(key, good("verify"));
    const send = () =>
      fetch(`${front.url}/verify`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: requirements }),
      });
    expect((await send()).status).toBe(200);
    const replay = await send();
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as { errorMessage: string }).errorMessage).toBe("nonce used before");
  });
});
