import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
/**
 * The chat handler on the offline engine, called directly with a fake HandlerContext: the JSON and SSE
 * answers, the metering of /upto routes, and the errors of an engine that is missing or fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../src/common/errors.ts";
import type { AnyEndpoint, HandlerContext } from "../../../src/merchant-kit/endpoint.ts";
import { Streamed } from "../../../src/merchant-kit/payments/streamed.ts";
import { chatEndpoints } from "../../../src/merchants/inference/catalogue.ts";
import {
  type ChatCompletion,
  chatEndpoint,
  type RouteEngine,
} from "../../../src/merchants/inference/chat.ts";
import type { ChatEngine } from "../../../src/merchants/inference/engine.ts";
import { ggufEngineInstalled } from "../../../src/merchants/inference/engines/gguf.ts";
import { meteredAmount } from "../../../src/merchants/inference/metering.ts";
import { DEFAULT_ROUTE, defaultRates, TIERS } from "../../../src/merchants/inference/tiers.ts";
import { countTokens } from "../../../src/merchants/inference/tokens.ts";
import { loadConfig } from "../../../src/services/config.ts";
import { writeTinyGguf } from "../../helpers/gguf.ts";
import { bodyOf } from "../../helpers/upstreams/json.ts";
import { type FakeOpenAI, startOpenAIUpstream } from "../../helpers/upstreams/openai.ts";

const config = loadConfig({ env: {} });

function context(signal = new AbortController().signal) {
  const metered: bigint[] = [];
  const ctx: HandlerContext = {
    payer: "0x2222222222222222222222222222222222222222",
    signal,
    services: { db: undefined as never, config },
    request: new Request("http://127.0.0.1:8407/v1/chat/completions", { method: "POST" }),
    meter: (atomic) => {
      metered.push(atomic);
    },
  };
  return { ctx, metered };
}

const endpoints = chatEndpoints();
const endpoint = (path: string): AnyEndpoint => {
  const e = endpoints.find((x) => x.path === path);
  if (!e) throw new Error(`no endpoint ${path}`);
  return e;
};

/** Validates `body` as the kit does, then calls the handler. */
async function call(path: string, body: unknown, ctx = context()) {
  const e = endpoint(path);
  const input = e.input.parse(body);
  const answer = await e.handler(input, ctx.ctx);
  return { answer, metered: ctx.metered, endpoint: e };
}

interface Chunk {
  id: string;
  object: string;
  model: string;
  choices: { index: number; delta: { role?: string; content?: string }; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

/** A streamed answer read as a caller receives it whole: its head, every part, its end (nothing charged). */
async function events(answer: unknown): Promise<{ chunks: Chunk[]; raw: string; parts: number }> {
  expect(answer).toBeInstanceOf(Streamed);
  const { init } = answer as Streamed;
  expect(init.headers["content-type"]).toMatch(/^text\/event-stream/);
  let raw = init.head;
  let parts = 0;
  for await (const part of init.parts) {
    raw += part;
    parts++;
  }
  raw += init.end({ charged: 0n });
  const data = raw
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      expect(block.startsWith("data: ")).toBe(true);
      return block.slice(6);
    });
  expect(data.at(-1)).toBe("[DONE]");
  return { chunks: data.slice(0, -1).map((d) => JSON.parse(d) as Chunk), raw, parts };
}

describe("the chat handler on the offline engine", () => {
  it("answers a chat.completion object with the usage", async () => {
    const {
      answer,
      metered,
      endpoint: e,
    } = await call("/v1/chat/completions", {
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "Hello " },
            { type: "text", text: "there" },
          ],
        },
      ],
    });
    const reply = answer as ChatCompletion;
    expect(e.output.safeParse(reply).success).toBe(true);
    expect(reply.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(reply.object).toBe("chat.completion");
    expect(reply.model).toBe("offline-default");
    expect(Math.abs(reply.created - Date.now() / 1000)).toBeLessThan(10);
    const [choice] = reply.choices;
    expect(choice?.message.role).toBe("assistant");
    expect(choice?.message.content).toContain("offline engine");
    expect(choice?.message.content).toContain("Hello there");
    expect(choice?.finish_reason).toBe("stop");
    expect(choice?.logprobs).toBeNull();
    expect(reply.usage.completion_tokens).toBe(countTokens(choice?.message.content ?? ""));
    expect(reply.usage.total_tokens).toBe(reply.usage.prompt_tokens + reply.usage.completion_tokens);
    expect(metered).toEqual([]); // exact routes do not meter
  });

  it("applies max_tokens (or the tier's default) and stop sequences", async () => {
    const cut = (
      await call("/v1/chat/completions/_t/t1", { messages: [{ role: "user", content: "x" }], max_tokens: 3 })
    ).answer as ChatCompletion;
    expect(cut.usage.completion_tokens).toBe(3);
    expect(cut.choices[0]?.finish_reason).toBe("length");
    const long = "word ".repeat(3000);
    // Tier 12's output is 1024 tokens whatever is asked.
    const t12 = (await call("/v1/chat/completions/_t/t12", { messages: [{ role: "user", content: long }] }))
      .answer as ChatCompletion;
    expect(t12.usage.completion_tokens).toBe(1024);
    const stopped = (
      await call("/v1/chat/completions/_t/t2", {
        messages: [{ role: "user", content: "hi" }],
        stop: "engine",
      })
    ).answer as ChatCompletion;
    expect(stopped.choices[0]?.message.content).toBe("This is the offline ");
  });

  it("answers json_object as one JSON object", async () => {
    const reply = (
      await call("/v1/chat/completions", {
        messages: [{ role: "user", content: "as JSON" }],
        response_format: { type: "json_object" },
      })
    ).answer as ChatCompletion;
    expect(JSON.parse(reply.choices[0]?.message.content ?? "")).toMatchObject({
      engine: "offline",
      echo: "as JSON",
    });
  });

  it("streams chat.completion.chunk events ending with [DONE], the usage last when asked", async () => {
    const messages = [{ role: "user", content: "Stream me, please." }];
    const plain = (await call("/v1/chat/completions/_t/t3", { messages })).answer as ChatCompletion;
    const { answer } = await call("/v1/chat/completions/_t/t3", {
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks } = await events(answer);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    for (const c of chunks) {
      expect(c.object).toBe("chat.completion.chunk");
      expect(c.model).toBe("offline-t3");
    }
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    const text = chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? "")).join("");
    expect(text).toBe(plain.choices[0]?.message.content);
    const last = chunks.at(-1) as Chunk;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(plain.usage);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("stop");
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();

    const quiet = await events((await call("/v1/chat/completions/_t/t3", { messages, stream: true })).answer);
    for (const c of quiet.chunks) expect("usage" in c).toBe(false);
    expect(quiet.chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
  });
});

describe("metering on the /upto routes", () => {
  it("meters once, at the tier's rates, before answering", async () => {
    const { answer, metered } = await call("/v1/chat/completions/_t/t2/upto", {
      messages: [{ role: "user", content: "Meter me." }],
    });
    const reply = answer as ChatCompletion;
    expect(metered).toHaveLength(1);
    // Tier 2's default rates: 0.4474 and 1.7896 dollars per million tokens.
    const expected = meteredAmount(
      { promptTokens: reply.usage.prompt_tokens, completionTokens: reply.usage.completion_tokens },
      { inputPerMillion: "0.4474", outputPerMillion: "1.7896" },
      15_187n,
    );
    expect(metered[0]).toBe(expected);
    expect(metered[0]).toBeGreaterThan(0n);
  });

  it("keeps a call's work within its maximum: a prompt it does not cover is refused before any work, a call with no max_tokens is given what it covers", async () => {
    // Tier 3's /upto maximum (0.004049) at its rates (0.6278, 2.5112) covers 1,612 output tokens at most.
    const tooMuch = call("/v1/chat/completions/_t/t3/upto", {
      messages: [{ role: "user", content: "word ".repeat(30_000) }],
      max_tokens: 4096,
    });
    await expect(tooMuch).rejects.toMatchObject({ status: 400, code: "prompt_not_covered" });
    await expect(
      call("/v1/chat/completions/_t/t3/upto", {
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 4096,
      }),
    ).rejects.toMatchObject({
      status: 400,
      code: "max_tokens_not_covered",
      message: expect.stringMatching(/at most max_tokens 16\d\d: ask for that many or fewer/),
    });
    // 3,008 prompt tokens leave 860 output tokens covered, fewer than the default 1,024: the call gets 860,
    // and its reply (an echo of the prompt) runs to them.
    const { answer, metered } = await call("/v1/chat/completions/_t/t3/upto", {
      messages: [{ role: "user", content: `a${" a".repeat(3_000)}` }],
    });
    const { usage } = answer as ChatCompletion;
    expect(usage.completion_tokens).toBe(860);
    expect(metered[0]).toBeLessThanOrEqual(4_049n);
    expect(metered[0]).toBe(
      meteredAmount(
        { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens },
        defaultRates(TIERS[2] as (typeof TIERS)[number]),
        10n ** 30n,
      ),
    );
  });

  it("meters 0 for a reply with no output, and meters streamed replies too", async () => {
    const empty = await call("/v1/chat/completions/_t/t4/upto", {
      messages: [{ role: "user", content: "hi" }],
      stop: "This",
    });
    expect((empty.answer as ChatCompletion).usage.completion_tokens).toBe(0);
    expect(empty.metered).toEqual([0n]);
    const plain = (
      await call("/v1/chat/completions/_t/t10/upto", { messages: [{ role: "user", content: "hi" }] })
    ).metered[0] as bigint;
    const streamed = await call("/v1/chat/completions/_t/t10/upto", {
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    // A stream is metered by the kit, for what it delivered: all of it, the same as the reply whole.
    expect(streamed.metered).toEqual([]);
    const { parts } = await events(streamed.answer);
    const { meter } = (streamed.answer as Streamed).init;
    expect(meter(parts, true)).toBe(plain);
    // Cut short: the prompt and the pieces delivered, by the tokenizer; none delivered, no output.
    expect(meter(2, false)).toBeGreaterThan(0n);
    expect(meter(2, false)).toBeLessThan(plain);
    expect(meter(0, false)).toBe(0n);
  });

  it("meters with the configured rates", async () => {
    const configured = loadConfig({
      env: { X402M_INFERENCE_ENGINE: "offline", X402M_INFERENCE_TIER_6_RATES: "1000,1000" },
    });
    const e = chatEndpoints(configured.inference).find((x) => x.path === "/v1/chat/completions/_t/t6/upto");
    const ctx = context();
    const reply = (await e?.handler(
      e.input.parse({ messages: [{ role: "user", content: "hi" }] }),
      ctx.ctx,
    )) as ChatCompletion;
    // 1,000 dollars per million tokens is 1,000 atomic units a token.
    expect(ctx.metered).toEqual([BigInt(reply.usage.total_tokens * 1000)]);
  });
});

describe("an engine that is missing or fails is never charged", () => {
  const served = (engine: ChatEngine | null): RouteEngine => ({
    engine,
    model: "m",
    rates: { inputPerMillion: "1", outputPerMillion: "1" },
    kind: engine === null ? null : "upstream",
    settings: "X402M_INFERENCE_LLM_URL",
  });
  const tier2 = TIERS[1] as (typeof TIERS)[1];
  const body = { messages: [{ role: "user", content: "hi" }] };
  const failure = async (engine: ChatEngine | null, metered = true) => {
    const e = chatEndpoint(tier2, served(engine), metered);
    const ctx = context();
    const error = await e.handler(e.input.parse(body), ctx.ctx).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(ctx.metered).toEqual([]);
    return error as AppError;
  };

  it("answers 503 when the route has no engine", async () => {
    const error = await failure(null);
    expect(error.status).toBe(503);
    expect(error.code).toBe("engine_not_configured");
    expect(error.message).toMatch(/X402M_INFERENCE_LLM_URL/);
  });

  it("answers 502 when the engine throws, or ends before its usage", async () => {
    const throwing: ChatEngine = {
      name: "broken",
      // biome-ignore lint/correctness/useYield: it fails before its first event
      async *chat() {
        throw new Error("socket hang up");
      },
    };
    const cut: ChatEngine = {
      name: "cut",
      async *chat() {
        yield { type: "delta" as const, content: "half" };
      },
    };
    expect((await failure(throwing)).status).toBe(502);
    expect((await failure(cut)).status).toBe(502);
  });

  it("passes an upstream's own refusal on unchanged (a 429 is its 503)", async () => {
    const limited: ChatEngine = {
      name: "limited",
      // biome-ignore lint/correctness/useYield: it fails before its first event
      async *chat() {
        throw new AppError(503, "upstream_rate_limited", "slow down", { headers: { "retry-after": "30" } });
      },
    };
    const error = await failure(limited, false);
    expect(error.code).toBe("upstream_rate_limited");
    expect(error.headers["retry-after"]).toBe("30");
  });

  it("routes no engine serves answer 503 before payment, naming the settings to set", async () => {
    for (const env of [{}, { X402M_INFERENCE_LLM_URL: "http://127.0.0.1:9/v1" }]) {
      const e = chatEndpoints(loadConfig({ env }).inference).find((x) => x.path === "/v1/chat/completions");
      if (!e?.precheck) throw new Error("a route without an engine must refuse before payment");
      const refusal = await e.precheck(e.input.parse(body), { services: context().ctx.services });
      expect(refusal).toMatchObject({ status: 503, code: "engine_not_configured" });
      expect(refusal?.message).toMatch(/X402M_INFERENCE_DEFAULT_MODEL and X402M_INFERENCE_DEFAULT_RATES/);
      expect(refusal?.message).toMatch(/X402M_INFERENCE_DEFAULT_GGUF/);
      expect(refusal?.message).toMatch(/X402M_INFERENCE_ENGINE=offline/);
      // Called anyway, the handler refuses the same way.
      await expect(e.handler(e.input.parse(body), context().ctx)).rejects.toMatchObject({ status: 503 });
      // Served and documented, but not advertised: no listing, no Bazaar extension, not in /.well-known.
      expect(e.listed).toBe(false);
    }
    const served = chatEndpoints(loadConfig({ env: { X402M_INFERENCE_ENGINE: "offline" } }).inference);
    expect(served.every((x) => x.listed !== false)).toBe(true);
    expect(DEFAULT_ROUTE.alias).toBe("default");
  });
});

describe("a route served by an OpenAI-compatible upstream (on 127.0.0.1)", () => {
  const KEY = "sk-test-routes";
  let upstream: FakeOpenAI;
  beforeAll(async () => {
    upstream = await startOpenAIUpstream(KEY, "small-8b");
  });
  afterAll(() => upstream.close());
  const routes = () =>
    chatEndpoints(
      loadConfig({
        env: {
          X402M_INFERENCE_LLM_URL: upstream.base,
          X402M_INFERENCE_LLM_KEY: KEY,
          X402M_INFERENCE_TIER_2_MODEL: "small-8b",
          X402M_INFERENCE_TIER_2_RATES: "100,200",
          X402M_INFERENCE_TIER_5_MODEL: "small-8b",
          // Within what tier 5's maximum (0.043205) covers at its default max_tokens.
          X402M_INFERENCE_TIER_5_RATES: "10,20",
          X402M_INFERENCE_TIER_8_MODEL: "small-8b",
          X402M_INFERENCE_TIER_8_RATES: "100,200",
        },
      }).inference,
    );

  it("asks the tier's default limit when the call names none: tier 5 1,024 tokens, tier 8 4,096 with its reasoning", async () => {
    upstream.behaviour = { kind: "reply", text: () => "Hi." };
    const sent = async (path: string) => {
      const e = routes().find((x) => x.path === path) as AnyEndpoint;
      await e.handler(e.input.parse({ messages: [{ role: "user", content: "hi" }] }), context().ctx);
      return bodyOf(upstream.requests.at(-1) as Parameters<typeof bodyOf>[0]);
    };
    const t5 = await sent("/v1/chat/completions/_t/t5/upto");
    expect(t5.max_tokens).toBe(1024);
    expect(t5).not.toHaveProperty("max_completion_tokens");
    const t8 = await sent("/v1/chat/completions/_t/t8");
    expect(t8.max_completion_tokens).toBe(4096);
    expect(t8).not.toHaveProperty("max_tokens");
  });

  it("asks the tier's model, answers its reply, and meters its usage at the tier's rates", async () => {
    upstream.behaviour = { kind: "reply", text: () => "Hello from upstream." };
    const e = routes().find((x) => x.path === "/v1/chat/completions/_t/t2/upto") as AnyEndpoint;
    expect(e.effects).toEqual(["upstream"]);
    const ctx = context();
    const reply = (await e.handler(
      e.input.parse({ model: "small-8b", messages: [{ role: "user", content: "hi" }], max_tokens: 64 }),
      ctx.ctx,
    )) as ChatCompletion;
    expect(reply.model).toBe("small-8b");
    expect(reply.choices[0]?.message.content).toBe("Hello from upstream.");
    expect(reply.usage).toEqual({ prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 });
    // 21 x 100 + 9 x 200 atomic units.
    expect(ctx.metered).toEqual([3_900n]);
    expect(bodyOf(upstream.requests.at(-1) as Parameters<typeof bodyOf>[0])).toMatchObject({
      model: "small-8b",
      max_tokens: 64,
    });
  });

  it("is a 502, not metered, when the upstream fails", async () => {
    upstream.behaviour = { kind: "status", status: 500 };
    const e = routes().find((x) => x.path === "/v1/chat/completions/_t/t2/upto") as AnyEndpoint;
    const ctx = context();
    await expect(
      e.handler(e.input.parse({ messages: [{ role: "user", content: "hi" }] }), ctx.ctx),
    ).rejects.toMatchObject({ status: 502 });
    expect(ctx.metered).toEqual([]);
  });
});

// node-llama-cpp is not in the default install (docs/inference.md); CI installs it and requires these to run.
const ggufRuns = ggufEngineInstalled() || process.env.X402M_TEST_REQUIRE_GGUF === "1";
describe.skipIf(!ggufRuns)("a route on the local GGUF engine (X402M_INFERENCE_<route>_GGUF)", () => {
  it("answers from the model file, as the file's model, and meters its /upto variant at the route's rates", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "x402m-gguf-route-"));
    try {
      const file = path.join(dir, "tiny-chat.gguf");
      writeTinyGguf(file);
      const { inference } = loadConfig({
        env: {
          X402M_INFERENCE_TIER_3_GGUF: file,
          X402M_INFERENCE_TIER_3_RATES: "1,2",
          X402M_INFERENCE_ENGINE: "offline",
        },
      });
      const local = chatEndpoints(inference);
      const byPath = (p: string) => local.find((e) => e.path === p) as AnyEndpoint;
      const body = { messages: [{ role: "user", content: "Hi" }], max_tokens: 4, temperature: 0 };
      const { ctx, metered } = context();
      const upto = byPath("/v1/chat/completions/_t/t3/upto");
      const reply = (await upto.handler(upto.input.parse(body), ctx)) as {
        model: string;
        choices: { message: { content: string }; finish_reason: string }[];
        usage: { prompt_tokens: number; completion_tokens: number };
      };
      expect(reply.model).toBe("tiny-chat");
      expect(reply.choices[0]?.message.content).toMatch(/^hello( hello)*$/);
      expect(reply.choices[0]?.finish_reason).toBe("length");
      expect(reply.usage.completion_tokens).toBe(4);
      expect(metered).toEqual([
        meteredAmount(
          { promptTokens: reply.usage.prompt_tokens, completionTokens: 4 },
          { inputPerMillion: "1", outputPerMillion: "2" },
          4049n,
        ),
      ]);
      // Other routes run the offline engine, as chosen.
      const other = byPath("/v1/chat/completions/_t/t4");
      const offline = (await other.handler(other.input.parse(body), context().ctx)) as { model: string };
      expect(offline.model).toBe("offline-t4");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
