import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { listen } from "../../../src/common/listen.ts";
import { answerMcp, MCP_PATH } from "../../../src/common/mcp/http.ts";

let made = 0;
function echoServer(): McpServer {
  made++;
  const server = new McpServer({ name: "echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Says it back", inputSchema: { text: z.string() }, outputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }], structuredContent: { text } }),
  );
  return server;
}

describe("MCP over Streamable HTTP", () => {
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const app = new Hono().all(MCP_PATH, (c) => answerMcp(c.req.raw, echoServer));
    const server = await listen(app.fetch, "127.0.0.1", 0);
    url = `${server.url}${MCP_PATH}`;
    close = server.close;
  });
  afterAll(() => close());

  it("answers the SDK's own client: initialize, list and call, each request on a server of its own", async () => {
    const before = made;
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["echo"]);
    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(result.structuredContent).toEqual({ text: "hi" });
    await client.close();
    expect(made - before).toBeGreaterThanOrEqual(3);
  });

  it("refuses a server-to-client stream: there is no session to hold one", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(url, { method, headers: { accept: "text/event-stream" } });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    }
  });
});
