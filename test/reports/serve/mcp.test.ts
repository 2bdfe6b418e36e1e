/**
 * The report tools over Streamable HTTP, asked with the MCP SDK's own client of the report service as
 * `serve` starts it (on 127.0.0.1, port 0): each tool's answer is the HTTP API's JSON for the same
 * question, and its errors are the API's error bodies.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Lifecycle } from "../../../src/common/lifecycle.ts";
import { MCP_PATH } from "../../../src/common/mcp/http.ts";
import { loadConfig } from "../../../src/services/config.ts";
import { startReportService } from "../../../src/services/reports.ts";
import { addr, analyticsWith, END, payment, repeat } from "../../helpers/data.ts";

const shop = addr("mcp-shop");
const farmed = addr("mcp-farmed");
const tiny = addr("mcp-tiny");
const listedOnly = addr("mcp-listed-only");

let url: string;
let lifecycle: Lifecycle;
let client: Client;

beforeAll(async () => {
  // A synthetic week: a merchant with genuine buyers and a listing, one with a farm beside its buyers (a
  // flag, so evidence), one paid by a farm alone, and a wallet that only lists an endpoint (both unranked).
  const analytics = await analyticsWith([
    { type: "merchant", address: shop, name: "weathershop.example", claimed: true },
    {
      type: "listing",
      pay_to: shop,
      resource: "https://api.weather.example/v1/forecast",
      price_usd: 0.01,
      description: "A  forecast,\n by the hour",
    },
    {
      type: "listing",
      pay_to: listedOnly,
      resource: "https://weather-two.example/now",
      price_usd: 0.002,
      description: "Current weather",
    },
    ...[1, 2, 3].map((i) => payment({ payer: addr(`mcp-buyer${i}`), payTo: shop, amount: 1_500_000 * i })),
    ...[1, 2].map((i) => payment({ payer: addr(`mcp-buyer${i}`), payTo: farmed, amount: 800_000 })),
    ...repeat(12, { payer: addr("mcp-farm"), payTo: farmed, amount: 100 }, END - 5_000, END - 100),
    ...repeat(10, { payer: addr("mcp-farm2"), payTo: tiny, amount: 100 }, END - 5_000, END - 100),
  ]);
  const dataDir = analytics.dataDir;
  analytics.close();
  lifecycle = new Lifecycle();
  const service = await startReportService(
    loadConfig({ env: { X402M_DATA: dataDir, PORT: "0", X402M_HOST: "127.0.0.1" } }),
    undefined,
    lifecycle,
  );
  url = service.url;
  client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}${MCP_PATH}`)));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await lifecycle?.close();
});

/** What the HTTP API answers for a path: its status and JSON. */
async function api(path: string): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${url}${path}`);
  return { status: response.status, json: await response.json() };
}

/** A tool's answer: its document, or its error body (with `isError`). */
async function tool(name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const [text] = result.content as { type: string; text: string }[];
  expect(text?.type).toBe("text");
  return {
    isError: result.isError === true,
    structured: result.structuredContent,
    text: JSON.parse(text?.text ?? ""),
  };
}

/** The tool answers what the API answers: the same document, structured and as text. */
async function expectSameAnswer(name: string, args: Record<string, unknown>, path: string) {
  const http = await api(path);
  expect(http.status, path).toBe(200);
  const answer = await tool(name, args);
  expect(answer.isError).toBe(false);
  expect(answer.structured).toEqual(http.json);
  expect(answer.text).toEqual(http.json);
  return http.json as Record<string, unknown>;
}

/** The tool's error is the API's error body, for the API's 4xx. */
async function expectSameError(name: string, args: Record<string, unknown>, path: string, code: string) {
  const http = await api(path);
  expect(http.status, path).toBeGreaterThanOrEqual(400);
  expect(http.status, path).toBeLessThan(500);
  expect(http.json).toMatchObject({ error: { code } });
  const answer = await tool(name, args);
  expect(answer).toEqual({ isError: true, structured: undefined, text: http.json });
}

describe("the report tools over Streamable HTTP", () => {
  it("lists seven free, read-only tools, the report's declared with the served report schema", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "flagged_wallets",
      "get_evidence",
      "get_leaderboard",
      "get_report",
      "sealed_weeks",
      "search_merchants",
      "wallet_history",
    ]);
    for (const t of tools) {
      expect(t.annotations, t.name).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(t.outputSchema, t.name).toMatchObject({ type: "object", additionalProperties: false });
    }
    const served = (await api("/v1/schema/report.json")).json as Record<string, unknown>;
    const { $schema, $id, title, description, ...schema } = served;
    const { $schema: _, ...declared } = (tools.find((t) => t.name === "get_report")?.outputSchema ??
      {}) as Record<string, unknown>;
    expect(declared).toEqual(schema);
    // The evidence and the leaderboard state the window as the report's schema has it.
    const window = (schema.properties as Record<string, unknown>).window;
    for (const name of ["get_evidence", "get_leaderboard", "search_merchants", "flagged_wallets"]) {
      const output = tools.find((t) => t.name === name)?.outputSchema as {
        properties: Record<string, unknown>;
      };
      expect(output.properties.window, name).toEqual(window);
    }
  });

  it("answers a merchant's report as the API does, for an address in any case and an older window", async () => {
    const report = await expectSameAnswer(
      "get_report",
      { address: shop.toUpperCase().replace("0X", "0x") },
      `/v1/reports/base/${shop}`,
    );
    expect(report).toMatchObject({ address: shop, name: "weathershop.example", real_tx: 3 });
    await expectSameAnswer(
      "get_report",
      { address: farmed, end_block: END - 10 },
      `/v1/reports/base/${farmed}?end_block=${END - 10}`,
    );
  });

  it("answers a merchant's evidence as the API does", async () => {
    const evidence = await expectSameAnswer(
      "get_evidence",
      { address: farmed },
      `/v1/reports/base/${farmed}/evidence`,
    );
    expect((evidence.flags as { kind: string }[]).map((f) => f.kind)).toEqual(["tiny_repeat"]);
    await expectSameAnswer("get_evidence", { address: shop }, `/v1/reports/base/${shop}/evidence`);
  });

  it("answers the leaderboard page by page as the API does", async () => {
    const board = await expectSameAnswer("get_leaderboard", {}, "/v1/leaderboard/base");
    expect((board.merchants as { address: string }[]).map((m) => m.address)).toEqual([shop, farmed]);
    expect(board.unranked).toEqual([
      expect.objectContaining({ address: tiny, reason: "no_passing_payment", tx: 10 }),
      expect.objectContaining({ address: listedOnly, reason: "no_passing_payment", tx: 0 }),
    ]);
    await expectSameAnswer(
      "get_leaderboard",
      { page: 1, end_block: END - 10 },
      `/v1/leaderboard/base/pages/1?end_block=${END - 10}`,
    );
    await expectSameError("get_leaderboard", { page: 2 }, "/v1/leaderboard/base/pages/2", "no_such_page");
  });

  it("searches merchants and listings by name, host or resource as the API does", async () => {
    const found = await expectSameAnswer(
      "search_merchants",
      { query: "WEATHER" },
      "/v1/search/base?q=WEATHER",
    );
    expect(found.merchants).toEqual([expect.objectContaining({ address: shop, rank: 1 })]);
    expect(found.unranked).toEqual([
      expect.objectContaining({ address: listedOnly, name: "weather-two.example" }),
    ]);
    expect(found.totals).toEqual({ merchants: 2, listings: 2 });
    expect(found.listings).toEqual([
      expect.objectContaining({ pay_to: shop, description: "A forecast, by the hour" }),
      expect.objectContaining({ pay_to: listedOnly, resource: "https://weather-two.example/now" }),
    ]);
    await expectSameAnswer("search_merchants", { query: "forecast" }, "/v1/search/base?q=forecast");
    await expectSameError("search_merchants", { query: " x " }, "/v1/search/base?q=%20x%20", "bad_query");
  });

  it("answers the flagged wallets page by page, and a wallet's weeks, as the API does", async () => {
    const feed = await expectSameAnswer("flagged_wallets", {}, "/v1/flags/base");
    expect((feed.wallets as { wallet: string }[]).map((w) => w.wallet).sort()).toEqual(
      [addr("mcp-farm"), addr("mcp-farm2")].sort(),
    );
    const mine = await expectSameAnswer(
      "flagged_wallets",
      { merchant: farmed, page: 1, end_block: END - 10 },
      `/v1/flags/base?merchant=${farmed}&end_block=${END - 10}`,
    );
    expect(mine.totals).toEqual({ wallets: 1, tx: 12, usd: 0 });
    await expectSameError("flagged_wallets", { page: 2 }, "/v1/flags/base/pages/2", "no_such_page");
    await expectSameError(
      "flagged_wallets",
      { merchant: addr("mcp-nobody") },
      `/v1/flags/base?merchant=${addr("mcp-nobody")}`,
      "unknown_merchant",
    );

    const history = await expectSameAnswer(
      "wallet_history",
      { address: addr("mcp-farm") },
      `/v1/wallets/base/${addr("mcp-farm")}`,
    );
    expect((history.weeks as { merchants: { address: string; kind: string }[] }[])[0]?.merchants).toEqual([
      expect.objectContaining({ address: farmed, kind: "tiny_repeat" }),
    ]);
    await expectSameAnswer(
      "wallet_history",
      { address: addr("mcp-buyer1") },
      `/v1/wallets/base/${addr("mcp-buyer1")}`,
    );
    await expectSameError("wallet_history", { address: "0x1234" }, "/v1/wallets/base/0x1234", "bad_address");
    // The sealed weeks (none sealed in this store): the API's document, as the tool answers it.
    expect(await expectSameAnswer("sealed_weeks", {}, "/v1/weeks/base")).toEqual({
      chain: "base",
      weeks: [],
    });
  });

  it("answers an unknown merchant, a bad address and a window past the data with the API's errors", async () => {
    const nobody = addr("mcp-nobody");
    await expectSameError(
      "get_report",
      { address: nobody },
      `/v1/reports/base/${nobody}`,
      "unknown_merchant",
    );
    await expectSameError(
      "get_evidence",
      { address: nobody },
      `/v1/reports/base/${nobody}/evidence`,
      "unknown_merchant",
    );
    await expectSameError("get_report", { address: "0x1234" }, "/v1/reports/base/0x1234", "bad_address");
    await expectSameError(
      "get_report",
      { address: shop, end_block: END + 1 },
      `/v1/reports/base/${shop}?end_block=${END + 1}`,
      "not_found",
    );
  });

  it("refuses a stream and an oversized body, as a stateless POST-only endpoint", async () => {
    const stream = await fetch(`${url}${MCP_PATH}`, { headers: { accept: "text/event-stream" } });
    expect(stream.status).toBe(405);
    const big = await fetch(`${url}${MCP_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(100_000) } }),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: { code: "payload_too_large" } });
  });
});
