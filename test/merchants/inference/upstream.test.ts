import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "../../../src/common/errors.ts";
import { retryAfterSeconds } from "../../../src/merchant-kit/upstream.ts";
import { type ChatEvent, type ChatRequest, collect } from "../../../src/merchants/inference/engine.ts";
import { upstreamEngine } from "../../../src/merchants/inference/engines/upstream.ts";
import { countPromptTokens, countTokens } from "../../../src/merchants/inference/tokens.ts";
import { startFixtureServer } from "../../helpers/fixtures/index.ts";
import { bodyOf } from "../../helpers/upstreams/json.ts";
import { type FakeOpenAI, startOpenAIUpstream } from "../../helpers/upstreams/openai.ts";

const KEY = "sk-test-inference";
let upstream: FakeOpenAI;
beforeAll(async () => {
  upstream = await startOpenAIUpstream(KEY);
  // Built now, as a host warms it at start: built mid-file, it blocks this process (the fake upstream's too)
  // for seconds under load, and the adapter's idle keep-alive connection may then be reused just as the
  // server closes it (a 502 "could not be reached" where a test expects the upstream's own answer).
  countTokens("");
});
afterAll(() => upstream.close());

// A generous time limit: a loaded machine (the whole suite, two workers, several chains) must not turn a
// refusal under test into a time-out (a 504 where a 503 is expected).
const engine = () =>
  upstreamEngine({ url: upstream.base, key: KEY, model: "tier-2-model", timeoutMs: 30_000 });
const request: ChatRequest = {
  model: "tier-2-model",
  messages: [
    { role: "system", content: "Be brief." },
    { role: "developer", content: "Answer in English." },
    { role: "user", content: "Hi" },
    { role: "assistant", content: "Hello." },
    { role: "user", content: "And now?" },
  ],
  maxTokens: 256,
  temperature: 0.2,
  topP: 0.9,
  stop: ["END"],
  responseFormat: "json_object",
};

describe("an OpenAI-compatible upstream as a chat engine", () => {
  it("streams the upstream's reply and its usage, and sends the dialect's fields as OpenAI takes them", async () => {
    upstream.behaviour = { kind: "reply", text: () => "Hello from the upstream model." };
    const out: ChatEvent[] = [];
    for await (const event of engine().chat(request)) out.push(event);
    expect(
      out
        .filter((e) => e.type === "delta")
        .map((e) => (e.type === "delta" ? e.content : ""))
        .join(""),
    ).toBe("Hello from the upstream model.");
    expect(out.at(-1)).toEqual({
      type: "done",
      finishReason: "stop",
      usage: { prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 },
    });
    const sent = bodyOf(upstream.requests.at(-1) as Parameters<typeof bodyOf>[0]);
    expect(sent).toMatchObject({
      model: "tier-2-model",
      max_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      stop: ["END"],
      response_format: { type: "json_object" },
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(sent.messages).toEqual([
      { role: "system", content: "Be brief.\n\nAnswer in English." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello." },
      { role: "user", content: "And now?" },
    ]);
  });

  it("bounds a reasoning model with max_completion_tokens, and meters its reasoning as output", async () => {
    const reasoning = { ...request, maxTokens: 4096, reasoningCountsAsOutput: true };
    // OpenAI's way: completion_tokens includes the reasoning, which the details break out.
    upstream.behaviour = {
      kind: "reply",
      text: () => "42.",
      usage: {
        prompt_tokens: 21,
        completion_tokens: 49,
        total_tokens: 70,
        completion_tokens_details: { reasoning_tokens: 40 },
      },
    };
    expect((await collect(engine().chat(reasoning))).usage).toEqual({
      prompt_tokens: 21,
      completion_tokens: 49,
      total_tokens: 70,
    });
    const sent = bodyOf(upstream.requests.at(-1) as Parameters<typeof bodyOf>[0]);
    expect(sent.max_completion_tokens).toBe(4096);
    expect(sent).not.toHaveProperty("max_tokens");
    // A server that counts the reasoning apart, in total_tokens only: still part of the reply's tokens.
    upstream.behaviour = {
      kind: "reply",
      text: () => "42.",
      usage: {
        prompt_tokens: 21,
        completion_tokens: 9,
        total_tokens: 70,
        completion_tokens_details: { reasoning_tokens: 40 },
      },
    };
    expect((await collect(engine().chat(reasoning))).usage.completion_tokens).toBe(49);
    // Without the flag, the limit goes as max_tokens (what older servers know).
    await collect(engine().chat(request));
    expect(bodyOf(upstream.requests.at(-1) as Parameters<typeof bodyOf>[0])).toMatchObject({
      max_tokens: 256,
    });
  });

  it("says length when the upstream stopped at max_tokens", async () => {
    upstream.behaviour = { kind: "reply", text: () => "cut", stopReason: "max_tokens" };
    expect((await collect(engine().chat(request))).finishReason).toBe("length");
  });

  it("counts the tokens itself when the upstream streams no usage, so a reply is never metered as empty", async () => {
    // A server that ignores stream_options (some local servers do): chunks, then [DONE], no usage.
    const quiet = await startFixtureServer({
      routes: {
        "/v1/chat/completions": (_request, res) => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          for (const content of ["A reply whose ", "size its server ", "did not say."])
            res.write(
              `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { content } }] })}\n\n`,
            );
          res.write(
            `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`,
          );
          res.end("data: [DONE]\n\n");
        },
      },
    });
    try {
      const messages = [{ role: "user" as const, content: "count me" }];
      const reply = await collect(
        upstreamEngine({ url: `${quiet.url}v1`, key: KEY, model: "m", timeoutMs: 30_000 }).chat({
          ...request,
          messages,
        }),
      );
      expect(reply.content).toBe("A reply whose size its server did not say.");
      expect(reply.usage.completion_tokens).toBe(countTokens(reply.content));
      expect(reply.usage.prompt_tokens).toBe(countPromptTokens(messages));
      expect(reply.usage.total_tokens).toBe(reply.usage.prompt_tokens + reply.usage.completion_tokens);
    } finally {
      await quiet.close();
    }
  });

  it("turns the upstream's rate limit into a 503 with Retry-After: its own wait, or 30 s", async () => {
    upstream.behaviour = { kind: "status", status: 429 };
    await expect(collect(engine().chat(request))).rejects.toMatchObject({
      status: 503,
      code: "upstream_rate_limited",
      headers: { "retry-after": "30" },
    });
    const limited = await startFixtureServer({
      routes: {
        "/v1/chat/completions": (_request, res) => {
          res.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
          res.end(JSON.stringify({ error: { message: "Rate limit reached", type: "requests" } }));
        },
      },
    });
    try {
      const error = await collect(
        upstreamEngine({ url: `${limited.url}v1`, key: KEY, model: "m", timeoutMs: 30_000 }).chat(request),
      ).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 503, headers: { "retry-after": "7" } });
      expect((error as Error).message).toMatch(
        /rate limiting this server: Rate limit reached; try again in 7 s$/,
      );
    } finally {
      await limited.close();
    }
    expect(retryAfterSeconds(null)).toBe(30);
    expect(retryAfterSeconds("0")).toBe(1);
    expect(retryAfterSeconds("86400")).toBe(3_600);
    expect(retryAfterSeconds(new Date(Date.now() + 12_500).toUTCString())).toBeGreaterThanOrEqual(11);
    expect(retryAfterSeconds("soon")).toBe(30);
  });

  it("fails with an upstream error, never a reply, when the upstream fails or breaks its stream", async () => {
    upstream.behaviour = { kind: "status", status: 500 };
    await expect(collect(engine().chat(request))).rejects.toBeInstanceOf(UpstreamError);
    upstream.behaviour = { kind: "break-stream" };
    await expect(collect(engine().chat(request))).rejects.toThrow(/before \[DONE\]/);
    const wrongKey = upstreamEngine({ url: upstream.base, key: "sk-wrong", model: "m", timeoutMs: 30_000 });
    await expect(collect(wrongKey.chat(request))).rejects.toThrow(/HTTP 401/);
  });
});
