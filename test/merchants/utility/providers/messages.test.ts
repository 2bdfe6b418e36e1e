/**
 * `/v1/messages` and the language adapters against fake Anthropic and OpenAI upstreams on 127.0.0.1: what
 * the adapters send (headers, body fields), the Messages-dialect answer and event stream, upstream
 * failures as 502/504, and the input checks (roles, empty content, the max_tokens cap).
 */
import { createParser } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../../src/common/errors.ts";
import { languageProvider } from "../../../../src/merchants/utility/providers/index.ts";
import { messagesEndpoint } from "../../../../src/merchants/utility/providers/messages.ts";
import {
  MAX_OUTPUT_TOKENS,
  MessagesInput,
} from "../../../../src/merchants/utility/providers/messages-input.ts";
import { type FakeUpstream, startAnthropicUpstream } from "../../../helpers/upstreams/anthropic.ts";
import { bodyOf } from "../../../helpers/upstreams/json.ts";
import { type FakeOpenAI, startOpenAIUpstream } from "../../../helpers/upstreams/openai.ts";
import { handlerContext } from "./context.ts";

let anthropic: FakeUpstream;
let openai: FakeOpenAI;
beforeAll(async () => {
  anthropic = await startAnthropicUpstream("sk-ant-test");
  openai = await startOpenAIUpstream("sk-openai-test");
});
afterAll(async () => {
  await anthropic?.close();
  await openai?.close();
});

const providers = () => ({
  anthropic: languageProvider({
    dialect: "anthropic",
    url: anthropic.base,
    key: "sk-ant-test",
    model: "claude-test-1",
  }),
  openai: languageProvider({
    dialect: "openai",
    url: openai.base,
    key: "sk-openai-test",
    model: "gpt-test-mini",
  }),
});

const request = {
  model: "claude-whatever",
  max_tokens: 100,
  system: "Be brief.",
  temperature: 0.2,
  stop_sequences: ["STOP"],
  messages: [
    { role: "user", content: "Hi" },
    { role: "assistant", content: [{ type: "text", text: "Hello." }] },
    { role: "user", content: "How are you?" },
  ],
};

/** Events of an SSE body, as a client reads them. */
function events(text: string): { event: string | undefined; data: Record<string, unknown> }[] {
  const out: { event: string | undefined; data: Record<string, unknown> }[] = [];
  const parser = createParser({ onEvent: (e) => out.push({ event: e.event, data: JSON.parse(e.data) }) });
  parser.feed(text);
  return out;
}

const call = async (dialect: "anthropic" | "openai", body: object) =>
  messagesEndpoint(providers()[dialect]).handler(MessagesInput.parse(body), handlerContext());

describe("the Anthropic adapter", () => {
  it("forwards the request with x-api-key and anthropic-version, and answers the message", async () => {
    anthropic.behaviour = { kind: "reply", text: () => "Fine, thanks." };
    const answer = await call("anthropic", request);
    const sent = anthropic.requests.at(-1);
    expect(sent?.url).toBe("/v1/messages");
    expect(sent?.headers["x-api-key"]).toBe("sk-ant-test");
    expect(sent?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(bodyOf(sent as never)).toEqual({
      model: "claude-test-1",
      max_tokens: 100,
      system: "Be brief.",
      temperature: 0.2,
      stop_sequences: ["STOP"],
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello." },
        { role: "user", content: "How are you?" },
      ],
    });
    expect(answer).toEqual({
      id: "msg_01FakeAnthropicId",
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "Fine, thanks." }],
      model: "claude-test-1",
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 7 },
    });
  });

  it("streams Anthropic's events from the upstream's stream", async () => {
    anthropic.behaviour = { kind: "reply", text: () => "Streaming works well." };
    const response = (await call("anthropic", { ...request, stream: true })) as Response;
    expect(bodyOf(anthropic.requests.at(-1) as never).stream).toBe(true);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const list = events(await response.text());
    expect(list.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      ...Array(6).fill("content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    for (const e of list) expect(e.data.type).toBe(e.event);
    const text = list.flatMap((e) =>
      e.event === "content_block_delta" ? [(e.data.delta as { text: string }).text] : [],
    );
    expect(text.join("")).toBe("Streaming works well.");
    expect(list.at(-2)?.data).toMatchObject({
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: 7 },
    });
  });

  it("turns upstream failures into 502s: an error status, a wrong key, an error event mid-stream", async () => {
    anthropic.behaviour = { kind: "status", status: 529 };
    await expect(call("anthropic", request)).rejects.toMatchObject({ status: 502, code: "upstream_failed" });
    anthropic.behaviour = { kind: "break-stream" };
    await expect(call("anthropic", { ...request, stream: true })).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/Overloaded/),
    });
    const wrongKey = languageProvider({ dialect: "anthropic", url: anthropic.base, key: "nope", model: "m" });
    await expect(
      messagesEndpoint(wrongKey).handler(MessagesInput.parse(request), handlerContext()),
    ).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/401: invalid x-api-key/),
    });
  });
});

describe("the OpenAI-compatible adapter", () => {
  it("translates the request to chat completions with a Bearer key, and the answer back", async () => {
    openai.behaviour = { kind: "reply", text: () => "Fine.", stopReason: "max_tokens" };
    const answer = await call("openai", request);
    const sent = openai.requests.at(-1);
    expect(sent?.url).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe("Bearer sk-openai-test");
    expect(bodyOf(sent as never)).toEqual({
      model: "gpt-test-mini",
      max_tokens: 100,
      temperature: 0.2,
      stop: ["STOP"],
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello." },
        { role: "user", content: "How are you?" },
      ],
    });
    expect(answer).toMatchObject({
      type: "message",
      content: [{ type: "text", text: "Fine." }],
      model: "gpt-test-mini",
      stop_reason: "max_tokens",
      usage: { input_tokens: 21, output_tokens: 9 },
    });
    expect((answer as { id: string }).id).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it("translates OpenAI stream chunks into Anthropic's events, usage from the last chunk", async () => {
    openai.behaviour = { kind: "reply", text: () => "Chunks become deltas." };
    const response = (await call("openai", { ...request, stream: true })) as Response;
    const sent = bodyOf(openai.requests.at(-1) as never);
    expect(sent).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const list = events(await response.text());
    expect(list[0]).toMatchObject({
      event: "message_start",
      data: { message: { model: "gpt-test-mini", role: "assistant" } },
    });
    const text = list.flatMap((e) =>
      e.event === "content_block_delta" ? [(e.data.delta as { text: string }).text] : [],
    );
    expect(text.join("")).toBe("Chunks become deltas.");
    expect(list.slice(-3).map((e) => e.event)).toEqual([
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(list.at(-2)?.data).toMatchObject({
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 9, input_tokens: 21 },
    });
  });

  it("refuses a stream that ends without [DONE], and an error status", async () => {
    openai.behaviour = { kind: "break-stream" };
    await expect(call("openai", { ...request, stream: true })).rejects.toMatchObject({
      status: 502,
      code: "upstream_invalid",
    });
    openai.behaviour = { kind: "status", status: 500 };
    await expect(call("openai", request)).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/HTTP 500/),
    });
  });

  it("answers 504 when the upstream is too slow", async () => {
    openai.route("/slow/chat/completions", () => {});
    const slow = languageProvider({
      dialect: "openai",
      url: `${openai.url}slow`,
      key: "k",
      model: "m",
      timeoutMs: 200,
    });
    await expect(
      slow.complete({ messages: [{ role: "user", content: "hi" }], maxTokens: 5 }),
    ).rejects.toMatchObject({
      status: 504,
    });
  });
});

describe("the /v1/messages input", () => {
  const ok = { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };
  it.each([
    ["max_tokens above the cap", { ...ok, max_tokens: MAX_OUTPUT_TOKENS + 1 }],
    ["no messages", { ...ok, messages: [] }],
    ["starting with assistant", { ...ok, messages: [{ role: "assistant", content: "hi" }] }],
    [
      "two user messages in a row",
      {
        ...ok,
        messages: [
          { role: "user", content: "a" },
          { role: "user", content: "b" },
        ],
      },
    ],
    ["empty content", { ...ok, messages: [{ role: "user", content: "  " }] }],
    ["an image block", { ...ok, messages: [{ role: "user", content: [{ type: "image", source: {} }] }] }],
    ["tools", { ...ok, tools: [{ name: "x" }] }],
    ["too much text", { ...ok, messages: [{ role: "user", content: "x".repeat(40_000) }] }],
    ["no model", { max_tokens: 10, messages: ok.messages }],
  ])("refuses %s", (_, body) => {
    expect(MessagesInput.safeParse(body).success).toBe(false);
  });

  it("answers 503 provider_not_configured without a language provider", async () => {
    const error = await messagesEndpoint(undefined)
      .handler(MessagesInput.parse(ok), handlerContext())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 503, code: "provider_not_configured" });
  });
});
