/**
 * MCP over Streamable HTTP, stateless: every POST gets a server and a transport of its own and a JSON
 * answer (no session, no SSE stream), so any process of a service can answer any request and nothing is
 * held between calls. GET (a server-to-client stream) and DELETE (ending a session) answer 405: there is no
 * session to stream to or end. The service mounts it with its own routes (`/mcp`); the same servers run
 * over stdio for `x402-merchants mcp`.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

/** The path every service answers MCP on. */
export const MCP_PATH = "/mcp";

/** Answers one Streamable HTTP request with a fresh server from `makeServer`, closed once it answered. */
export async function answerMcp(request: Request, makeServer: () => McpServer): Promise<Response> {
  if (request.method !== "POST") {
    // The transport would open a stream for GET and hold it on a server that is about to close.
    return Response.json(
      {
        jsonrpc: "2.0",
        error: { code: -32000, message: "Method not allowed: this server is stateless, POST only" },
        id: null,
      },
      { status: 405, headers: { allow: "POST" } },
    );
  }
  const server = makeServer();
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    await server.close();
  }
}
