import { describe, expect, it } from "vitest";
import { sizedChat } from "../../src/demo/chat-work.ts";

describe("sizedChat", () => {
  it("varies the prompt and the reply's length with u, above the example's max_tokens", () => {
    const example = { messages: [{ role: "user", content: "Say hello." }], max_tokens: 512, temperature: 0 };
    const sized = sizedChat(example);
    const inputs = Array.from({ length: 50 }, (_, i) => sized(i / 50));
    for (const input of inputs) {
      const words = (input.messages as { content: string }[])[0]?.content.split(" ").length ?? 0;
      expect(words).toBeGreaterThanOrEqual(20);
      expect(words).toBeLessThanOrEqual(400);
      expect(input.max_tokens).toBeGreaterThanOrEqual(512 + 16);
      expect(input.max_tokens).toBeLessThanOrEqual(512 + 256);
      expect(input.temperature).toBe(0);
    }
    expect(new Set(inputs.map((i) => i.max_tokens)).size).toBeGreaterThan(25);
    expect(new Set(inputs.map((i) => JSON.stringify(i.messages))).size).toBe(50);
    expect(sized(0.3)).toEqual(sized(0.3));
  });
});
