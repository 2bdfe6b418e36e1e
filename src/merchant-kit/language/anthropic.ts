/**
 * Adapter for an Anthropic-compatible upstream: `POST {url}/v1/messages` with `x-api-key` and
 * `anthropic-version: 2023-06-01`. The request and the answer are already in the dialect we sell; only
 * text content is kept (other block types, e.g. thinking, are skipped).
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

export const ANTHROPIC_VERSION = "2023-06-01";

const Usage = z.object({ input_tokens: z.number().default(0), output_tokens: z.number().default(0) });
const Message = z.object({
  id: z.string(),
  model: z.string(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  stop_reason: z.string().nullable(),
  stop_sequence: z.string().nullable().default(null),
  usage: Usage,
});

/** Anthropic's stop reasons we pass on; anything else (tool_use, pause_turn) reads as end_turn. */
export function stopReasonOf(reason: string | null | undefined): StopReason {
  return reason === "max_tokens" || reason === "stop_sequence" || reason === "refusal" ? reason : "end_turn";
}

export function anthropicProvider(settings: LanguageSettings): LanguageProvider {
  const provider = "language provider (anthropic)";
  const call = (request: ChatRequest, stream: boolean, signal?: AbortSignal) => ({
    provider,
    url: `${settings.url.replace(/\/+$/, "")}/v1/messages`,
    headers: { "x-api-key": settings.key, "anthropic-version": ANTHROPIC_VERSION },
    json: {
      model: settings.model,
      max_tokens: request.maxTokens,
      messages: request.messages,
      ...(request.system !== undefined && { system: request.system }),
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      ...(request.topP !== undefined && { top_p: request.topP }),
      ...(request.stopSequences !== undefined && { stop_sequences: request.stopSequences }),
      ...(stream && { stream: true }),
    },
    timeoutMs: settings.timeoutMs,
    signal,
  });

  return countingTokens(provider, {
    dialect: "anthropic",
    async complete(request, signal): Promise<ChatResult> {
      const parsed = Message.safeParse(await upstreamJson(call(request, false, signal)));
      if (!parsed.success)
        throw new UpstreamError(`the ${provider} answered an unexpected message`, "upstream_invalid");
      const m = parsed.data;
      return {
        id: m.id,
        model: m.model,
        text: m.content.map((b) => (b.type === "text" ? (b.text ?? "") : "")).join(""),
        stopReason: stopReasonOf(m.stop_reason),
        stopSequence: m.stop_sequence,
        usage: { inputTokens: m.usage.input_tokens, outputTokens: m.usage.output_tokens },
      };
    },
    async *stream(request, signal): AsyncGenerator<ChatStreamEvent> {
      const c = call(request, true, signal);
      const { response, signal: combined } = await upstreamFetch(c);
      if (!response.body)
        throw new UpstreamError(`the ${provider} answered without a body`, "upstream_invalid");
      let stop: ChatStreamEvent | undefined;
      let started = false;
      try {
        for await (const item of readSse(response.body, provider)) {
          // biome-ignore lint/suspicious/noExplicitAny: checked field by field below.
          const data = parseData(item, provider) as any;
          switch (data?.type) {
            case "message_start": {
              started = true;
              const m = data.message ?? {};
              yield {
                type: "start",
                id: String(m.id ?? ""),
                model: String(m.model ?? settings.model),
                inputTokens: Number(m.usage?.input_tokens ?? 0),
              };
              break;
            }
            case "content_block_delta":
              if (data.delta?.type === "text_delta" && typeof data.delta.text === "string")
                yield { type: "text", text: data.delta.text };
              break;
            case "message_delta":
              stop = {
                type: "stop",
                stopReason: stopReasonOf(data.delta?.stop_reason),
                stopSequence: data.delta?.stop_sequence ?? null,
                outputTokens: Number(data.usage?.output_tokens ?? 0),
              };
              break;
            case "message_stop":
              if (!started || !stop) break;
              yield stop;
              return;
            case "error":
              throw new UpstreamError(
                `the ${provider} failed while streaming: ${String(data.error?.message ?? "error")}`,
                "upstream_failed",
              );
          }
        }
      } catch (error) {
        throw failure(c, error, combined, settings.timeoutMs);
      }
      throw new UpstreamError(`the ${provider} ended its stream before message_stop`, "upstream_invalid");
    },
  });
}
