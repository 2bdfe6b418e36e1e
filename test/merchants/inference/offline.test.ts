import { describe, expect, it } from "vitest";
import { type ChatEvent, type ChatRequest, collect } from "../../../src/merchants/inference/engine.ts";
import { offlineEngine } from "../../../src/merchants/inference/engines/offline.ts";
import { countPromptTokens, countTokens } from "../../../src/merchants/inference/tokens.ts";

const request = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "tier-model",
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Say hello to Zoë in 日本語, please." },
  ],
  maxTokens: 1_000,
  ...over,
});

async function events(r: ChatRequest, signal?: AbortSignal): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of offlineEngine().chat(r, signal)) out.push(event);
  return out;
}

describe("the offline engine", () => {
  it("says what it is, echoes the last user message, and counts tokens with a real tokenizer", async () => {
    const reply = await collect(offlineEngine().chat(request()));
    expect(reply.content).toMatch(/^This is the offline engine of x402-merchants: no language model ran\./);
    expect(reply.content).toContain("Say hello to Zoë in 日本語, please.");
    expect(reply.finishReason).toBe("stop");
    expect(reply.usage.completion_tokens).toBe(countTokens(reply.content));
    expect(reply.usage.prompt_tokens).toBe(countPromptTokens(request().messages));
    expect(reply.usage.total_tokens).toBe(reply.usage.prompt_tokens + reply.usage.completion_tokens);
    // o200k_base: "hello world" is 2 tokens; each message adds 3 and the reply's priming 3.
    expect(countTokens("hello world")).toBe(2);
    expect(countPromptTokens([{ role: "user", content: "hello world" }])).toBe(3 + 1 + 2 + 3);
  });

  it("streams token-sized chunks that never split a character, then one done with the usage", async () => {
    const out = await events(request());
    const deltas = out.filter((e) => e.type === "delta");
    expect(deltas.length).toBeGreaterThan(10);
    for (const d of deltas) expect(d.type === "delta" && d.content.includes("\uFFFD")).toBe(false);
    expect(out.at(-1)?.type).toBe("done");
    expect(out.filter((e) => e.type === "done")).toHaveLength(1);
  });

  it("stops at max_tokens exactly, with finish_reason length, never inside a character", async () => {
    // Hieroglyphs take several o200k tokens each: cut after some of them, a token would end mid-character.
    const glyphs = request({ messages: [{ role: "user", content: "𓀀𓀁𓀂" }] });
    const whole = await collect(offlineEngine().chat(glyphs));
    expect(whole.content.endsWith("𓀀𓀁𓀂")).toBe(true);
    for (let maxTokens = 1; maxTokens < whole.usage.completion_tokens; maxTokens++) {
      const reply = await collect(offlineEngine().chat({ ...glyphs, maxTokens }));
      expect(reply.finishReason).toBe("length");
      expect(reply.usage.completion_tokens).toBeLessThanOrEqual(maxTokens);
      expect(reply.usage.completion_tokens).toBeGreaterThanOrEqual(maxTokens - 3);
      expect(reply.usage.completion_tokens).toBe(countTokens(reply.content));
      expect(reply.content).not.toContain("\uFFFD");
      expect(whole.content.startsWith(reply.content)).toBe(true);
    }
    const streamed = await events(glyphs);
    for (const d of streamed) expect(d.type === "delta" && d.content.includes("\uFFFD")).toBe(false);
  });

  it("ends before the first stop sequence", async () => {
    const reply = await collect(offlineEngine().chat(request({ stop: ["x402", "ran"] })));
    expect(reply.content).toBe("This is the offline engine of ");
    expect(reply.finishReason).toBe("stop");
  });

  it("answers one JSON object when asked for json_object", async () => {
    const reply = await collect(offlineEngine().chat(request({ responseFormat: "json_object" })));
    expect(JSON.parse(reply.content)).toMatchObject({
      engine: "offline",
      echo: "Say hello to Zoë in 日本語, please.",
    });
  });

  it("stops without a done when the client leaves", async () => {
    const controller = new AbortController();
    const seen: ChatEvent[] = [];
    for await (const event of offlineEngine().chat(request(), controller.signal)) {
      seen.push(event);
      if (seen.length === 3) controller.abort();
    }
    expect(seen).toHaveLength(3);
    expect(seen.every((e) => e.type === "delta")).toBe(true);
  });
});
