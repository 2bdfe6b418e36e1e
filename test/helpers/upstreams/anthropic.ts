/**
 * A fake Anthropic Messages API on 127.0.0.1: `POST /v1/messages` checks `x-api-key` and
 * `anthropic-version` as Anthropic does (401 / 400 with `{"type": "error", "error": {type, message}}`), and
 * answers a message object or, with `stream: true`, the event stream (message_start, content_block_start,
 * ping, content_block_delta..., content_block_stop, message_delta, message_stop).
 */
import { type FixtureServer, startFixtureServer } from "../fixtures/index.ts";
import { type Behaviour, bodyOf, pieces, sendJson } from "./json.ts";

export interface FakeUpstream extends FixtureServer {
  /** Base URL without a trailing slash. */
  base: string;
  behaviour: Behaviour;
}

const error = (type: string, message: string) => ({ type: "error", error: { type, message } });

export async function startAnthropicUpstream(key: string, model = "claude-test-1"): Promise<FakeUpstream> {
  const upstream = (await startFixtureServer()) as FakeUpstream;
  upstream.base = upstream.url.replace(/\/$/, "");
  upstream.behaviour = { kind: "reply", text: () => "Hello from Anthropic." };
  upstream.route("/v1/messages", (request, res) => {
    if (request.headers["x-api-key"] !== key)
      return sendJson(res, 401, error("authentication_error", "invalid x-api-key"));
    if (!request.headers["anthropic-version"])
      return sendJson(res, 400, error("invalid_request_error", "anthropic-version: header is required"));
    const body = bodyOf(request);
    if (typeof body.max_tokens !== "number" || !Array.isArray(body.messages))
      return sendJson(res, 400, error("invalid_request_error", "max_tokens: Field required"));
    const b = upstream.behaviour;
    if (b.kind === "status") return sendJson(res, b.status, error("api_error", "Internal server error"));
    const text = b.kind === "reply" ? b.text(body) : "partial";
    const stopReason = b.kind === "reply" ? (b.stopReason ?? "end_turn") : "end_turn";
    const id = "msg_01FakeAnthropicId";
    if (!body.stream) {
      return sendJson(res, 200, {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [{ type: "text", text }],
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 7 },
      });
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (type: string, data: object) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send("message_start", {
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1 },
      },
    });
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("ping", {});
    for (const piece of pieces(text))
      send("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } });
    if (b.kind === "break-stream") {
      send("error", { error: { type: "overloaded_error", message: "Overloaded" } });
      return void res.end();
    }
    send("content_block_stop", { index: 0 });
    send("message_delta", {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 7 },
    });
    send("message_stop", {});
    res.end();
  });
  return upstream;
}
