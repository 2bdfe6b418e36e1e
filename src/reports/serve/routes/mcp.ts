/**
 * Agents' face: the report service's answers as MCP tools (src/reports/serve/mcp.ts), over stateless
 * Streamable HTTP, a server per request.
 */
import type { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errorBody } from "../../../common/errors.ts";
import { corsAnswers } from "../../../common/http.ts";
import { answerMcp, MCP_PATH } from "../../../common/mcp/http.ts";
import { REQUEST_ID_HEADER } from "../../../common/request-log.ts";
import { chainServiceAnswers, reportMcpServer } from "../mcp.ts";
import type { ReportService } from "../service.ts";

/** A tool call's arguments are an address, a block and a page: a few hundred bytes. */
const MCP_MAX_BODY_BYTES = 64 * 1024;

export function mcpRoutes(app: Hono, services: readonly ReportService[]): void {
  // Its 405s for GET and DELETE are the transport's JSON-RPC errors, not the routes'.
  app.use(
    MCP_PATH,
    corsAnswers({ allowMethods: ["POST", "OPTIONS"], exposeHeaders: [REQUEST_ID_HEADER] }),
    bodyLimit({
      maxSize: MCP_MAX_BODY_BYTES,
      onError: (c) =>
        c.json(errorBody("payload_too_large", `the body exceeds ${MCP_MAX_BODY_BYTES} bytes`), 413),
    }),
  );
  const answers = chainServiceAnswers(services);
  app.all(MCP_PATH, (c) => answerMcp(c.req.raw, () => reportMcpServer(answers)));
}
