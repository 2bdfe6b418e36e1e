/**
 * Adapter for an OpenAI-compatible chat completions upstream (OpenAI, OpenRouter, vLLM, llama.cpp...):
 * `POST {url}/chat/completions` with `Authorization: Bearer`. Translates the Messages-dialect request
 * (system prompt → a `system` message, `stop_sequences` → `stop`) and the answer back (`finish_reason`
 * "length" → `max_tokens`, usage fields renamed). Streaming asks for `stream_options.include_usage` so the
 * last chunk carries the token counts; the stream ends with `data: [DONE]`.
 */
import { z } from "zod";
import { UpstreamError } from "../../common/errors.ts";
import { failure, upstreamFetch, upstreamJson } from "../upstream.ts";
import { countingTokens } from "./counting-tokens.ts";
import type {
  ChatRequest,
  ChatResult,
  ChatStreamEvent,
  LanguageProvider,
  LanguageSettings,
  StopReason,
} from "./language.ts";
import { parseData, readSse } from "./sse.ts";

const Completion = z.object({
  id: z.string().default(""),
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().default(null) }),
        finish_reason: z.string().nullable().default(null),
      }),
    )
    .min(1),
  usage: z
    .object({
      prompt_tokens: z.number(),
      completion_tokens: z.number(),
      total_tokens: z.number().optional(),
      completion_tokens_details: z.object({ reasoning_tokens: z.number().optional() }).nullish(),
    })
    .optional(),
});

/** An OpenAI-compatible usage, as servers send it (some leave fields out). */
interface OpenAiUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/**
 * The tokens the model wrote, its reasoning included. OpenAI counts reasoning in `completion_tokens` (and
 * breaks it out in `completion_tokens_details.reasoning_tokens`); a server that counts it apart shows it as
 * `total_tokens` beyond the prompt and the completion, or as more reasoning tokens than completion tokens.
 */
export function outputTokensOf(usage: OpenAiUsage | undefined): number {
  const completion = usage?.completion_tokens ?? 0;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens ?? 0;
  const beyondPrompt = (usage?.total_tokens ?? 0) - (usage?.prompt_tokens ?? 0);
  return Math.max(completion, beyondPrompt, reasoning > completion ? completion + reasoning : 0);
}

/**
 * OpenAI does not say which stop sequence matched, so "stop" is reported as `end_turn`
 * (stop_sequence null); "content_filter" is Anthropic's `refusal`.
 */
export function stopReasonOfFinish(reason: string | null | undefined): StopReason {
  if (reason === "length") return "max_tokens";
  if (reason === "content_filter") return "refusal";
  return "end_turn";
}

export function openaiProvider(settings: LanguageSettings): LanguageProvider {
  const provider = "language provider (openai)";
  const call = (request: ChatRequest, stream: boolean, signal?: AbortSignal) => ({
    provider,
    url: `${settings.url.replace(/\/+$/, "")}/chat/completions`,
    headers: { authorization: `Bearer ${settings.key}` },
    json: {
      model: settings.model,
      messages: [
        ...(request.system !== undefined ? [{ role: "system", content: request.system }] : []),
        ...request.messages,
      ],
      [request.maxTokensIncludeReasoning ? "max_completion_tokens" : "max_tokens"]: request.maxTokens,
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      ...(request.topP !== undefined && { top_p: request.topP }),
      ...(request.stopSequences !== undefined && { stop: request.stopSequences }),
      ...(request.responseFormat !== undefined && { response_format: { type: request.responseFormat } }),
      ...(stream && { stream: true, stream_options: { include_usage: true } }),
    },
    timeoutMs: settings.timeoutMs,
    signal,
  });

  return countingTokens(provider, {
    dialect: "openai",
    async complete(request, signal): Promise<ChatResult> {
      const parsed = Completion.safeParse(await upstreamJson(call(request, false, signal)));
      if (!parsed.success)
        throw new UpstreamError(`the ${provider} answered an unexpected completion`, "upstream_invalid");
      const c = parsed.data;
      const choice = c.choices[0] as (typeof c.choices)[0];
      return {
        id: c.id,
        model: c.model ?? settings.model,
        text: choice.message.content ?? "",
        stopReason: stopReasonOfFinish(choice.finish_reason),
        stopSequence: null,
        usage: { inputTokens: c.usage?.prompt_tokens ?? 0, outputTokens: outputTokensOf(c.usage) },
      };
    },
    async *stream(request, signal): AsyncGenerator<ChatStreamEvent> {
      const c = call(request, true, signal);
      const { response, signal: combined } = await upstreamFetch(c);
      if (!response.body)
        throw new UpstreamError(`the ${provider} answered without a body`, "upstream_invalid");
      let started = false;
      let finish: string | null = null;
      let usage: OpenAiUsage | undefined;
      try {
        for await (const item of readSse(response.body, provider)) {
          if (item.data.trim() === "[DONE]") {
            if (!started) break;
            yield {
              type: "stop",
              stopReason: stopReasonOfFinish(finish),
              stopSequence: null,
              outputTokens: outputTokensOf(usage),
              inputTokens: usage?.prompt_tokens ?? 0,
            };
            return;
          }
          // biome-ignore lint/suspicious/noExplicitAny: checked field by field below.
          const chunk = parseData(item, provider) as any;
          if (chunk?.error)
            throw new UpstreamError(
              `the ${provider} failed while streaming: ${String(chunk.error.message ?? "error")}`,
              "upstream_failed",
            );
          if (!started) {
            started = true;
            yield {
              type: "start",
              id: String(chunk?.id ?? ""),
              model: String(chunk?.model ?? settings.model),
              inputTokens: 0,
            };
          }
          if (chunk?.usage) usage = chunk.usage;
          for (const choice of Array.isArray(chunk?.choices) ? chunk.choices : []) {
            if (typeof choice?.delta?.content === "string" && choice.delta.content !== "")
              yield { type: "text", text: choice.delta.content };
            if (choice?.finish_reason) finish = choice.finish_reason;
          }
        }
      } catch (error) {
        throw failure(c, error, combined, settings.timeoutMs);
      }
      throw new UpstreamError(`the ${provider} ended its stream before [DONE]`, "upstream_invalid");
    },
  });
}
