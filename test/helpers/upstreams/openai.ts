/**
 * A fake OpenAI-compatible API on 127.0.0.1: `POST /v1/chat/completions` (a `chat.completion`, or with
 * `stream: true` `chat.completion.chunk` events, a usage chunk when `stream_options.include_usage`, and
 * `data: [DONE]`) and `POST /v1/images/generations` (`{created, data: [{b64_json, revised_prompt}]}`).
 * Both check `Authorization: Bearer <key>` (401 `invalid_api_key` otherwise), as OpenAI does.
 */
import { startFixtureServer } from "../fixtures/index.ts";
import type { FakeUpstream } from "./anthropic.ts";
import { bodyOf, pieces, sendJson } from "./json.ts";
import { makePng } from "./png.ts";

export interface FakeOpenAI extends FakeUpstream {
  /** What the images route answers: a PNG of the requested size, other bytes, or an HTTP error. */
  image: { kind: "png" } | { kind: "bytes"; bytes: Buffer } | { kind: "status"; status: number };
}

const unauthorized = {
  error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" },
};

export async function startOpenAIUpstream(key: string, model = "gpt-test-mini"): Promise<FakeOpenAI> {
  const upstream = (await startFixtureServer()) as FakeOpenAI;
  upstream.base = `${upstream.url}v1`;
  upstream.behaviour = { kind: "reply", text: () => "Hello from OpenAI." };
  upstream.image = { kind: "png" };
  upstream.route("/v1/chat/completions", (request, res) => {
    if (request.headers.authorization !== `Bearer ${key}`) return sendJson(res, 401, unauthorized);
    const body = bodyOf(request);
    const b = upstream.behaviour;
    if (b.kind === "status")
      return sendJson(res, b.status, { error: { message: "The server had an error", type: "server_error" } });
    const text = b.kind === "reply" ? b.text(body) : "partial";
    const finish = b.kind === "reply" && b.stopReason === "max_tokens" ? "length" : "stop";
    const base = { id: "chatcmpl-FakeOpenAIId", created: 1_760_000_000, model };
    const usage = (b.kind === "reply" && b.usage) || {
      prompt_tokens: 21,
      completion_tokens: 9,
      total_tokens: 30,
    };
    if (!body.stream) {
      return sendJson(res, 200, {
        ...base,
        object: "chat.completion",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: text, refusal: null },
            logprobs: null,
            finish_reason: finish,
          },
        ],
        usage,
      });
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (choices: object[], extra: object = {}) =>
      res.write(
        `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, ...extra })}\n\n`,
      );
    const end = () => {
      send([{ index: 0, delta: {}, finish_reason: finish }]);
      if (body.stream_options?.include_usage) send([], { usage });
      res.end("data: [DONE]\n\n");
    };
    send([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
    if (b.kind === "drip") {
      const left = [...b.pieces];
      const timer = setInterval(() => {
        const piece = left.shift();
        if (piece !== undefined)
          return void send([{ index: 0, delta: { content: piece }, finish_reason: null }]);
        clearInterval(timer);
        if (!b.stall) end();
      }, b.everyMs);
      res.on("close", () => clearInterval(timer));
      return;
    }
    for (const piece of pieces(text)) send([{ index: 0, delta: { content: piece }, finish_reason: null }]);
    if (b.kind === "break-stream") return void res.end();
    end();
  });
  upstream.route("/v1/images/generations", (request, res) => {
    if (request.headers.authorization !== `Bearer ${key}`) return sendJson(res, 401, unauthorized);
    const body = bodyOf(request);
    const image = upstream.image;
    if (image.kind === "status")
      return sendJson(res, image.status, {
        error: {
          message: "Your request was rejected by the safety system.",
          type: "image_generation_user_error",
        },
      });
    const [w, h] = String(body.size ?? "1024x1024")
      .split("x")
      .map(Number);
    // A small image stands for the requested size: only the header's size matters to the adapter.
    const bytes =
      image.kind === "png"
        ? makePng(Math.max(1, (w ?? 1024) / 64), Math.max(1, (h ?? 1024) / 64))
        : image.bytes;
    sendJson(res, 200, {
      created: 1_760_000_000,
      data: [{ b64_json: bytes.toString("base64"), revised_prompt: `${body.prompt}, detailed` }],
    });
  });
  return upstream;
}
