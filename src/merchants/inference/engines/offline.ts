/**
 * The offline engine: no model, a deterministic reply that says it is the offline engine and echoes the
 * last user message. It serves where it is chosen (X402M_INFERENCE_ENGINE=offline: the demo, the tests),
 * never by default: a route no engine serves answers 503 before any payment. Its tokens are real (o200k_base), so `max_tokens`, stop sequences, streaming, usage and
 * the /upto metering behave as they do with a model: a long message gets a long reply, cut at `max_tokens`.
 */
import type { ChatEngine, ChatEvent, ChatRequest } from "../engine.ts";
import { countPromptTokens, tokenize, tokenPieces } from "../tokens.ts";

export const OFFLINE_ENGINE_NAME = "offline";

export function offlineEngine(): ChatEngine {
  return {
    name: OFFLINE_ENGINE_NAME,
    async *chat(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
      const promptTokens = countPromptTokens(request.messages);
      const { tokens, finishReason } = cut(reply(request), request);
      for (const piece of tokenPieces(tokens)) {
        if (signal?.aborted) return;
        yield { type: "delta", content: piece };
        // One chunk per turn of the event loop, as a network stream arrives: a client that leaves is seen.
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (signal?.aborted) return;
      yield {
        type: "done",
        finishReason,
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: tokens.length,
          total_tokens: promptTokens + tokens.length,
        },
      };
    },
  };
}

/** The whole reply before `max_tokens` and stop sequences. */
function reply(request: ChatRequest): string {
  const last = [...request.messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const note = "This is the offline engine of x402-merchants: no language model ran.";
  if (request.responseFormat === "json_object") {
    return JSON.stringify({ engine: OFFLINE_ENGINE_NAME, note, model: request.model, echo: last });
  }
  return `${note} Model ${request.model} was asked; your last message was:\n\n${last}`;
}

/**
 * The reply's tokens as sent: up to the first stop sequence, then at most `maxTokens` of them, less a last
 * token that would end mid-character (the usage counts exactly what is sent).
 */
function cut(text: string, request: ChatRequest): { tokens: number[]; finishReason: "stop" | "length" } {
  let end = text.length;
  for (const stop of request.stop ?? []) {
    const at = stop === "" ? -1 : text.indexOf(stop);
    if (at !== -1 && at < end) end = at;
  }
  const tokens = tokenize(text.slice(0, end));
  if (tokens.length <= request.maxTokens) return { tokens, finishReason: "stop" };
  const kept = tokens.slice(0, request.maxTokens);
  while (kept.length > 0 && tokenPieces(kept).at(-1)?.endsWith("\uFFFD")) kept.pop();
  return { tokens: kept, finishReason: "length" };
}
