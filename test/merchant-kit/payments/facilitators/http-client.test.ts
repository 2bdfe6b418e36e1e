/**
 * The kit's facilitator client (http-client.ts) against the SDK's `HTTPFacilitatorClient`, each case run
 * through both against one small facilitator on 127.0.0.1 that records what it was sent and answers as the
 * case says: the same request on the wire (method, path, headers in their order, body byte for byte), and the
 * same outcome (the answer as the SDK's schemas leave it, or the same error: class, message, status, reasons,
 * the network error's code). Each case also says what that request and outcome are, so that the two clients
 * cannot agree on a wrong one.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { type FacilitatorClient, HTTPFacilitatorClient } from "@x402/core/server";
import {
  FacilitatorResponseError,
  FacilitatorTimeoutError,
  type PaymentRequirements,
  SettleError,
  VerifyError,
} from "@x402/core/types";
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { facilitatorAuthHeaders } from "../../../../src/merchant-kit/payments/facilitators/auth.ts";
import { httpFacilitator } from "../../../../src/merchant-kit/payments/facilitators/failover.ts";
import {
  FacilitatorHttpClient,
  type FacilitatorHttpConfig,
} from "../../../../src/merchant-kit/payments/facilitators/http-client.ts";
import { EXACT_REQUIREMENTS, exactPayment } from "../../../helpers/fixtures/payment.ts";

/** What the facilitator was sent. */
interface Seen {
  method: string;
  url: string;
  rawHeaders: string[];
  body: string;
}

/** How the facilitator answers a request: a status, headers and body, after `delayMs`; or never. */
type Reply =
  | { status: number; headers?: Record<string, string>; body?: string | Buffer; delayMs?: number }
  | "hang";

let server: http.Server;
let base: string;
let seen: Seen[] = [];
let reply: (request: Seen) => Reply = () => ({ status: 404 });

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const got: Seen = {
        method: request.method ?? "",
        url: request.url ?? "",
        rawHeaders: request.rawHeaders,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(got);
      const answer = reply(got);
      if (answer === "hang") return;
      setTimeout(() => {
        response.writeHead(answer.status, answer.headers ?? { "content-type": "application/json" });
        response.end(answer.body ?? "");
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen = [];
});

const json = (
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Exclude<Reply, "hang"> => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

const requirements = EXACT_REQUIREMENTS;
/** Unicode and all: the body must be the SDK's byte for byte. */
const payload = exactPayment(
  { url: "http://shop.test/api/echo?text=h%C3%A9", description: "écho ✓ \u2028", mimeType: "" },
  { "builder-code": { info: { code: "x402m" }, n: [1, 2.5, -0, 1e21] } },
);

type Config = FacilitatorHttpConfig;
const CLIENTS: Record<string, (config: Config) => FacilitatorClient> = {
  sdk: (config) => new HTTPFacilitatorClient(config),
  kit: (config) => new FacilitatorHttpClient(config),
};

/** A call's outcome in comparable form: its answer, or its error's class, message and fields. */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    return { answer: await call };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string } };
    const kind = [
      VerifyError,
      SettleError,
      FacilitatorTimeoutError,
      FacilitatorResponseError,
      TypeError,
    ].find((k) => e instanceof k);
    return {
      error: {
        kind: kind?.name ?? e.constructor.name,
        message: e.message,
        fields: { ...e },
        cause: e.cause?.code,
      },
    };
  }
}

/** Runs `call` through each client against the facilitator: what each sent, and what came of it. */
async function both(
  config: Omit<Config, "url"> & { path?: string },
  call: (c: FacilitatorClient) => Promise<unknown>,
) {
  const runs: Record<string, { sent: Seen[]; outcome: unknown }> = {};
  for (const [name, make] of Object.entries(CLIENTS)) {
    seen = [];
    const result = await outcome(call(make({ ...config, url: `${base}${config.path ?? ""}` })));
    runs[name] = { sent: seen, outcome: result };
  }
  const { sdk, kit } = runs as Record<"sdk" | "kit", { sent: Seen[]; outcome: unknown }>;
  expect(kit.sent).toStrictEqual(sdk.sent);
  expect(kit.outcome).toStrictEqual(sdk.outcome);
  return sdk;
}

const headerOf = (sent: Seen, name: string) => {
  const i = sent.rawHeaders.findIndex((h, n) => n % 2 === 0 && h.toLowerCase() === name);
  return i < 0 ? undefined : sent.rawHeaders[i + 1];
};

describe("the kit's facilitator client, beside the SDK's", () => {
  it("verifies: the same POST, headers and body, the answer as the SDK's schema leaves it", async () => {
    reply = () =>
      json(200, {
        isValid: true,
        payer: "0x1111111111111111111111111111111111111111",
        invalidReason: null,
        x: 1,
      });
    const { sent, outcome: got } = await both({}, (c) => c.verify(payload, requirements));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.method).toBe("POST");
    expect(sent[0]?.url).toBe("/verify");
    expect(sent[0]?.body).toBe(
      JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements }),
    );
    expect(headerOf(sent[0] as Seen, "content-type")).toBe("application/json");
    expect(got).toStrictEqual({
      answer: {
        isValid: true,
        payer: "0x1111111111111111111111111111111111111111",
        invalidReason: undefined,
      },
    });
  });

  it("settles with each path's auth headers, under a base path, and reads the extension responses' header", async () => {
    const extensions = { bazaar: { status: "recorded" } };
    reply = (r) =>
      r.url === "/base/settle"
        ? json(
            200,
            { success: true, transaction: "0xabc", network: "eip155:8453", amount: "1000", payer: null },
            { "EXTENSION-RESPONSES": Buffer.from(JSON.stringify(extensions)).toString("base64") },
          )
        : json(404, {});
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    onTestFinished(() => log.mockRestore());
    const createAuthHeaders = async () => ({
      verify: { Authorization: "Bearer v" },
      settle: { Authorization: "Bearer s", "X-Tenant": "shop-1" },
      supported: {},
    });
    const { sent, outcome: got } = await both({ path: "/base/", createAuthHeaders }, (c) =>
      c.settle(payload, requirements),
    );
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /base/settle"]);
    expect(headerOf(sent[0] as Seen, "authorization")).toBe("Bearer s");
    expect(headerOf(sent[0] as Seen, "x-tenant")).toBe("shop-1");
    expect(got).toStrictEqual({
      answer: {
        success: true,
        transaction: "0xabc",
        network: "eip155:8453",
        amount: "1000",
        payer: undefined,
        extensionResponses: extensions,
      },
    });
  });

  it("asks /supported with a GET, its lists defaulted, and asks again after a 429", async () => {
    const supported = {
      kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:8453", extra: null, y: 2 }],
    };
    let calls = 0;
    reply = () =>
      ++calls % 2 === 1 ? json(429, { error: "slow down" }, { "retry-after": "0" }) : json(200, supported);
    const { sent, outcome: got } = await both({}, (c) => c.getSupported());
    expect(sent.map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual(["GET /supported ", "GET /supported "]);
    expect(got).toStrictEqual({
      answer: {
        kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:8453", extra: undefined }],
        extensions: [],
        signers: {},
      },
    });
  });

  it.each([
    [
      "a refusal in verify's shape",
      "verify",
      json(401, { isValid: false, invalidReason: "api_key_invalid", invalidMessage: "no key" }),
      "VerifyError",
      "api_key_invalid: no key",
    ],
    [
      "a failure in settle's shape",
      "settle",
      json(500, {
        success: false,
        errorReason: "unexpected_settle_error",
        transaction: "",
        network: "eip155:8453",
      }),
      "SettleError",
      "unexpected_settle_error",
    ],
    [
      "an error of another shape",
      "verify",
      json(502, { error: { code: "bad_gateway" } }),
      "Error",
      'Facilitator verify failed (502): {"error":{"code":"bad_gateway"}}',
    ],
    [
      "a body that is not JSON",
      "settle",
      { status: 503, headers: { "content-type": "text/plain" }, body: "  starting\n up " },
      "Error",
      "Facilitator settle failed (503): starting up",
    ],
    [
      "a 200 that is not JSON",
      "verify",
      { status: 200, body: "" },
      "FacilitatorResponseError",
      "Facilitator verify returned invalid JSON: <empty response>",
    ],
    [
      "a 200 that is not a settlement",
      "settle",
      json(200, { success: "yes", transaction: "", network: "eip155:8453" }),
      "FacilitatorResponseError",
      'Facilitator settle returned invalid data: {"success":"yes","transaction":"","network":"eip155:8453"}',
    ],
    [
      "a /supported refused",
      "supported",
      json(404, { error: "no" }),
      "Error",
      'Facilitator getSupported failed (404): {"error":"no"}',
    ],
  ] as const)("throws the same for %s", async (_, call, answer, kind, message) => {
    reply = () => answer;
    const { outcome: got } = await both({}, (c) =>
      call === "supported"
        ? c.getSupported()
        : call === "verify"
          ? c.verify(payload, requirements)
          : c.settle(payload, requirements),
    );
    expect(got).toMatchObject({ error: { kind, message } });
    if (typeof answer !== "string" && (kind === "VerifyError" || kind === "SettleError"))
      expect(got).toMatchObject({ error: { fields: { statusCode: answer.status } } });
  });

  it("times out a call whose answer does not come, as FacilitatorTimeoutError", async () => {
    reply = () => "hang";
    // Not `both`: the timer runs from the call, and a client the machine's load held past it gives up before its
    // request reaches the server, so what the server saw differs by chance. What each client throws does not.
    const [sdk, kit] = await Promise.all(
      Object.values(CLIENTS).map((make) =>
        outcome(make({ url: base, timeoutMs: 150 }).verify(payload, requirements)),
      ),
    );
    expect(kit).toStrictEqual(sdk);
    expect(sdk).toMatchObject({
      error: { kind: "FacilitatorTimeoutError", message: "Facilitator verify request timed out after 150ms" },
    });
  });

  it("fails as fetch fails where nothing listens: a TypeError whose cause is ECONNREFUSED", async () => {
    const gone = http.createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    const port = (gone.address() as AddressInfo).port;
    await new Promise((resolve) => gone.close(resolve));
    const got = await Promise.all(
      Object.values(CLIENTS).map((make) => outcome(make({ url: `http://127.0.0.1:${port}` }).getSupported())),
    );
    expect(got[1]).toStrictEqual(got[0]);
    expect(got[0]).toMatchObject({
      error: { kind: "TypeError", message: "fetch failed", cause: "ECONNREFUSED" },
    });
  });

  it("decodes a gzip answer, follows a redirect with the body, and writes a bigint as the SDK does", async () => {
    const settled = { success: true, transaction: "0xdef", network: "eip155:8453" };
    reply = (r) =>
      r.url === "/old/settle"
        ? { status: 307, headers: { location: "/new/settle" } }
        : r.url === "/new/settle" && headerOf(r, "accept-encoding")?.includes("gzip")
          ? {
              status: 200,
              headers: { "content-type": "application/json", "content-encoding": "gzip" },
              body: zlib.gzipSync(JSON.stringify(settled)),
            }
          : json(400, {});
    // A settlement a hook enriched with a bigint: the SDK writes it as a string.
    const enriched = { ...requirements, extra: { ...requirements.extra, deadline: 12345678901234567890n } };
    const { sent, outcome: got } = await both({ path: "/old" }, (c) =>
      c.settle(payload, enriched as unknown as PaymentRequirements),
    );
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /old/settle", "POST /new/settle"]);
    expect(sent[1]?.body).toBe(sent[0]?.body);
    expect(JSON.parse(sent[0]?.body ?? "").paymentRequirements.extra.deadline).toBe("12345678901234567890");
    expect(got).toStrictEqual({ answer: settled });
  });
});

describe("httpFacilitator, the failover's member", () => {
  it("sends its headers on every path, and gives a settlement its own time-out, longer than an answer's", async () => {
    // A settlement that takes longer than an answer may: settled, where the verify that never comes times out.
    reply = (r) =>
      r.url === "/verify"
        ? "hang"
        : r.url === "/settle"
          ? { ...json(200, { success: true, transaction: "0x1", network: "eip155:8453" }), delayMs: 300 }
          : json(200, { kinds: [] });
    const client = httpFacilitator(base, facilitatorAuthHeaders(base, { Authorization: "Bearer k" }, null), {
      answerMs: 100,
      settleMs: 60_000,
    });
    await expect(client.verify(payload, requirements)).rejects.toThrow(
      new FacilitatorTimeoutError("verify", 100),
    );
    expect(await client.settle(payload, requirements)).toMatchObject({ success: true, transaction: "0x1" });
    expect(await client.getSupported()).toEqual({ kinds: [], extensions: [], signers: {} });
    expect(seen.map((s) => [s.url, headerOf(s, "authorization")])).toEqual([
      ["/verify", "Bearer k"],
      ["/settle", "Bearer k"],
      ["/supported", "Bearer k"],
    ]);
  });
});
