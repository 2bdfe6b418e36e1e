/**
 * Every merchant host's MCP face at /mcp, unpaid, with the MCP SDK's own client on 127.0.0.1: the tools are
 * the catalogue's (one per listed paid endpoint and free route, the price in the description, the route's
 * input schema); a free tool answers what its route answers; a paid tool called without a payment answers
 * x402's PaymentRequired, the very one its route's 402 carries; refused input is the route's own refusal,
 * never a request for payment; a file travels as base64; an MCP tool call counts once against the unpaid
 * limit, as the route's request it is.
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Listening, listenWithUrl } from "../../../src/common/listen.ts";
import { UnpaidLimit } from "../../../src/common/rate-limit.ts";
import { DEMO_SHOPS, shopMerchant } from "../../../src/demo/shops/index.ts";
import { merchantApp } from "../../../src/merchant-kit/app.ts";
import type { Merchant } from "../../../src/merchant-kit/endpoint.ts";
import { jsonSchemaOf } from "../../../src/merchant-kit/json-schema.ts";
import { callTool, connectMcp } from "../../../src/merchant-kit/mcp/client.ts";
import { merchantTools, paymentRequiredOf } from "../../../src/merchant-kit/mcp/index.ts";
import { MERCHANTS } from "../../../src/merchants/index.ts";
import { loadConfig } from "../../../src/services/config.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { refusingFacilitator, startMerchant, testConfig } from "../../helpers/merchant.ts";
import { realPng } from "../../merchants/social/media-fixtures.ts";

const payTo = `0x${"1".repeat(40)}` as const;
const config = loadConfig({ env: { X402M_INFERENCE_ENGINE: "offline" } });
const hosts = new Map<string, { url: string; merchant: Merchant }>();
const clients = new Map<string, Client>();
const closers: (() => Promise<void>)[] = [];

const shop = DEMO_SHOPS.find((s) => s.slug === "dice");
const BUILDERS: [string, (url: string) => Merchant][] = [
  ...Object.entries(MERCHANTS).map(([name, build]): [string, (url: string) => Merchant] => [
    name,
    (url) => build({ payTo, publicUrl: url }, config),
  ]),
  ...(shop
    ? [
        ["demo shop dice", (url: string) => shopMerchant(shop, payTo, url)] as [
          string,
          (url: string) => Merchant,
        ],
      ]
    : []),
];

beforeAll(async () => {
  const opened = await openTestDatabase("pglite");
  closers.push(opened.close);
  for (const [name, build] of BUILDERS) {
    let merchant: Merchant | undefined;
    const host = await startMerchant(
      (url) => {
        merchant = build(url);
        return merchant;
      },
      opened.db,
      refusingFacilitator,
    );
    closers.push(() => host.close());
    hosts.set(name, { url: host.url, merchant: merchant as Merchant });
    const client = await connectMcp(`${host.url}/mcp`);
    closers.push(() => client.close());
    clients.set(name, client);
  }
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const client = (name: string) => clients.get(name) as Client;
const host = (name: string) => hosts.get(name) as { url: string; merchant: Merchant };

describe("tools/list", () => {
  it.each(BUILDERS.map(([name]) => name))(
    "%s: a tool per listed paid endpoint and free route, priced, the route's input schema",
    async (name) => {
      const { merchant } = host(name);
      const { tools } = await client(name).listTools();
      const listed = merchant.endpoints.filter((e) => e.listed !== false);
      expect(tools.length).toBe(listed.length + (merchant.free?.length ?? 0));
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.map((t) => t.name)).toEqual(merchantTools(merchant).map((t) => t.definition.name));
      for (const [i, endpoint] of listed.entries()) {
        const tool = tools[i] as (typeof tools)[number];
        expect(tool.name).toMatch(/^[a-z0-9_]{1,64}$/);
        expect(tool.description).toContain(endpoint.description);
        expect(tool.description).toContain(`$${endpoint.price}`);
        expect(tool.inputSchema.type).toBe("object");
        const route = jsonSchemaOf(endpoint.input, "input");
        const isFile = (p: unknown) => (p as { format?: string }).format === "binary";
        const streams = endpoint.outputMedia?.includes("text/event-stream");
        const properties = route.properties as Record<string, unknown>;
        if (!streams && !Object.values(properties).some(isFile)) expect(tool.inputSchema).toEqual(route);
        // A paid tool declares no output schema: the SDK's client would hold x402's PaymentRequired to it.
        expect(tool.outputSchema).toBeUndefined();
      }
      for (const route of merchant.free ?? []) {
        expect(tools.find((t) => t.description?.startsWith(route.description))?.description).toContain(
          "Free",
        );
      }
    },
  );

  it("names the three merchants' tools after their paths, and drops stream from a streaming route's input", async () => {
    const names = async (host: string) => (await client(host).listTools()).tools.map((t) => t.name);
    expect(await names("utility")).toEqual(
      expect.arrayContaining(["api_calc", "api_seo_alt_check", "v1_messages"]),
    );
    expect(await names("social")).toEqual(expect.arrayContaining(["tweets_search", "tweets_media_upload"]));
    expect(await names("social-proxy")).toEqual(["pay_agent_id"]);
    const inference = (await client("inference").listTools()).tools;
    const chat = inference.find((t) => t.name === "v1_chat_completions_t_t2_upto");
    expect(chat?.description).toMatch(/upto scheme: you authorise at most \$0\.015187/);
    expect(Object.keys(chat?.inputSchema.properties ?? {})).toContain("messages");
    expect(Object.keys(chat?.inputSchema.properties ?? {})).not.toContain("stream");
    expect(Object.keys(chat?.inputSchema.properties ?? {})).not.toContain("stream_options");
    expect(inference.map((t) => t.name)).toEqual(expect.arrayContaining(["v1_models", "v1_audio_voices"]));
    const transcription = inference.find((t) => t.name === "v1_audio_transcriptions");
    expect(transcription?.inputSchema.properties?.file).toMatchObject({
      type: "string",
      contentEncoding: "base64",
    });
  });
});

describe("tools/call without a payment", () => {
  it("a free tool answers what its route answers, as text and as structured content", async () => {
    const { url } = host("inference");
    const result = await callTool(client("inference"), "v1_models");
    const http = await (await fetch(`${url}/v1/models`)).json();
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(http);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(http);
  });

  it("a paid tool answers isError with the PaymentRequired its route's 402 carries, as structuredContent and content[0].text", async () => {
    const { url } = host("utility");
    const result = await callTool(client("utility"), "api_calc", { expr: "2+2" });
    const http = await fetch(`${url}/api/calc?expr=2%2B2`);
    expect(http.status).toBe(402);
    const required = decodePaymentRequiredHeader(http.headers.get("payment-required") as string);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual(required);
    expect((result.content[0] as { text: string }).text).toBe(JSON.stringify(result.structuredContent));
    // The PaymentRequired alone: the route's 402 body is x402 v1's form of it (payments/v1/), no refusal of its own.
    expect(result.content).toHaveLength(1);
    expect(paymentRequiredOf(result)).toMatchObject({
      x402Version: 2,
      resource: { url: `${url}/api/calc?expr=2%2B2` },
      accepts: [{ scheme: "exact", amount: "1000", payTo }],
    });
  });

  it("answers a payment that is not one with the PaymentRequired and the reason", async () => {
    const call = (payment: unknown) =>
      callTool(client("utility"), "api_calc", { expr: "2+2" }, payment as PaymentPayload);
    expect(paymentRequiredOf(await call("not an object"))?.error).toBe(
      '_meta["x402/payment"] is not a PaymentPayload object',
    );
    // An object that is no valid payment: the route's x402 middleware refuses it, as over HTTP.
    const refused = paymentRequiredOf(await call({ x402Version: 2, payload: {} }));
    expect(refused?.accepts).toEqual([expect.objectContaining({ scheme: "exact", amount: "1000" })]);
    expect(refused?.error).toBeTruthy();
  });

  it("fills a path parameter from the arguments, and an upto tool asks for its maximum", async () => {
    const { url } = host("social-proxy");
    const proxied = paymentRequiredOf(
      await callTool(client("social-proxy"), "pay_agent_id", { agent_id: "alice" }),
    );
    expect(proxied?.resource.url).toBe(`${url}/pay/alice`);
    const chat = paymentRequiredOf(
      await callTool(client("inference"), "v1_chat_completions_t_t2_upto", {
        messages: [{ role: "user", content: "Hello" }],
        max_tokens: 16,
      }),
    );
    expect(chat?.accepts).toEqual([expect.objectContaining({ scheme: "upto", amount: "15187" })]);
  });

  it("refuses bad input with the route's own refusal, never a request for payment", async () => {
    const { url } = host("utility");
    const result = await callTool(client("utility"), "api_calc", { expr: "" });
    const http = await fetch(`${url}/api/calc?expr=`);
    expect(http.status).toBe(400);
    expect(result.isError).toBe(true);
    expect(paymentRequiredOf(result)).toBeUndefined();
    expect(result.structuredContent).toEqual(await http.json());
    // In the route's dialect: the chat routes speak OpenAI's.
    const chat = await callTool(client("inference"), "v1_chat_completions_t_t2_upto", { messages: [] });
    expect(chat.structuredContent).toMatchObject({
      error: { type: "invalid_request_error", param: "messages" },
    });
    // A path parameter missing.
    const proxied = await callTool(client("social-proxy"), "pay_agent_id", {});
    expect(proxied).toMatchObject({ isError: true, structuredContent: { error: { code: "invalid_input" } } });
  });

  it("sends a file as the form's file: an image asks for payment, bytes that are not one are refused", async () => {
    const cookies = { auth_token: "token", ct0: "ct0value" };
    const png = Buffer.from(await realPng()).toString("base64");
    const image = await callTool(client("social"), "tweets_media_upload", { file: png, ...cookies });
    expect(paymentRequiredOf(image)?.accepts[0]?.amount).toBe("6000");
    const dataUrl = await callTool(client("social"), "tweets_media_upload", {
      file: `data:image/png;base64,${png}`,
      ...cookies,
    });
    expect(paymentRequiredOf(dataUrl)).toBeDefined();
    const text = await callTool(client("social"), "tweets_media_upload", {
      file: Buffer.from("not an image").toString("base64"),
      ...cookies,
    });
    expect(text).toMatchObject({
      isError: true,
      structuredContent: { error: { code: "unsupported_media_type" } },
    });
    const mislabelled = await callTool(client("social"), "tweets_media_upload", {
      file: `data:image/gif;base64,${png}`,
      ...cookies,
    });
    expect(mislabelled.structuredContent).toMatchObject({ error: { code: "media_type_mismatch" } });
  });

  it("answers an unknown tool with a JSON-RPC error, and GET /mcp with 405", async () => {
    await expect(callTool(client("utility"), "no_such_tool")).rejects.toThrow(/Unknown tool: no_such_tool/);
    const get = await fetch(`${host("utility").url}/mcp`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toContain("POST");
  });
});

describe("the unpaid limit", () => {
  it("counts an MCP tool call once, as the route's request it is dispatched as", async () => {
    const opened = await openTestDatabase("pglite");
    const limit = new UnpaidLimit(
      {
        perSecond: 0.001,
        burst: 8,
        clients: 100,
        loopback: "limited",
        trustedProxies: [],
        forwardedHeader: "x-forwarded-for",
      },
      () => 0,
    );
    const config = testConfig();
    const served: Listening = await listenWithUrl(
      async (url) =>
        (
          await merchantApp(MERCHANTS.utility({ payTo, publicUrl: url }, config), {
            services: { db: opened.db, config },
            facilitator: refusingFacilitator,
            payments: config.payments,
            limit,
          })
        ).fetch,
      "127.0.0.1",
      0,
    );
    try {
      // The client opens its stream (a GET, refused) once connected, on its own: awaited before counting.
      let streamAsked = false;
      let inFlight = 0;
      const counting: typeof fetch = async (input, init) => {
        inFlight++;
        if (init?.method === "GET") streamAsked = true;
        try {
          return await fetch(input, init);
        } finally {
          inFlight--;
        }
      };
      const limited = await connectMcp(`${served.url}/mcp`, { fetch: counting });
      while (!streamAsked || inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const tokens = () => limit.buckets.tokens("127.0.0.1");
      // The protocol's own requests are unpaid requests.
      let before = tokens();
      await limited.listTools();
      expect(before - tokens()).toBe(1);
      // A tool call takes one token, the one its route's request takes; the clock stands still.
      before = tokens();
      expect(paymentRequiredOf(await callTool(limited, "api_calc", { expr: "1+1" }))?.x402Version).toBe(2);
      expect(before - tokens()).toBe(1);
      while (tokens() >= 1) await callTool(limited, "api_calc", { expr: "1+1" });
      // Past the limit: the route's own 429, in its shape.
      expect(await callTool(limited, "api_calc", { expr: "1+1" })).toMatchObject({
        isError: true,
        structuredContent: { error: { code: "too_many_requests" } },
      });
      await limited.close();
    } finally {
      await served.close();
      await opened.close();
    }
  });
});
