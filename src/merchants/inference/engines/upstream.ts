/**
 * An OpenAI-compatible upstream as a chat engine (OpenRouter, a vLLM or llama.cpp server, any
 * `/v1/chat/completions`): the utility merchant's OpenAI adapter (src/merchants/utility/providers), which
 * already streams, bounds time and size, and turns every upstream failure into an error that is never
 * charged. A tier's engine is one adapter with that tier's model.
 *
 * System and developer messages become the one system prompt the adapter sends first, in their order. An
 * upstream that reports no usage (some local servers stream none) is metered with the tokenizer instead, so
 * that a reply is never free because its server kept quiet about its size.
 */

import { type LanguageSettings, openaiProvider } from "../../../merchant-kit/index.ts";
import type { ChatEngine, ChatEvent, ChatRequest } from "../engine.ts";
import { countPromptTokens, countTokens } from "../tokens.ts";

export type UpstreamEngineSettings = Omit<LanguageSettings, "dialect">;

export function upstreamEngine(settings: UpstreamEngineSettings): ChatEngine {
  const provider = openaiProvider({ ...settings, dialect: "openai" });
  return {
    name: `upstream ${settings.model} at ${new URL(settings.url).host}`,
    async *chat(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
      const system = request.messages
        .filter((m) => m.role === "system" || m.role === "developer")
        .map((m) => m.content ?? "");
      const messages = request.messages.flatMap((m) =>
        m.role === "user" || m.role === "assistant" ? [{ role: m.role, content: m.content ?? "" }] : [],
      );
      let text = "";
      for await (const event of provider.stream(
        {
          ...(system.length > 0 && { system: system.join("\n\n") }),
          messages,
          maxTokens: request.maxTokens,
          ...(request.reasoningCountsAsOutput && { maxTokensIncludeReasoning: true }),
          temperature: request.temperature,
          topP: request.topP,
          stopSequences: request.stop,
          responseFormat: request.responseFormat,
        },
        signal,
      )) {
        if (event.type === "text") {
          text += event.text;
          yield { type: "delta", content: event.text };
        } else if (event.type === "stop") {
          const prompt = event.inputTokens || countPromptTokens(request.messages);
          const completion = event.outputTokens || (text === "" ? 0 : countTokens(text));
          yield {
            type: "done",
            finishReason: event.stopReason === "max_tokens" ? "length" : "stop",
            usage: {
              prompt_tokens: prompt,
              completion_tokens: completion,
              total_tokens: prompt + completion,
            },
          };
        }
      }
    },
  };
}
