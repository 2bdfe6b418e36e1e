/**
 * `POST /v1/messages`: a model reply in the Anthropic Messages dialect, paid per call (the payment is the
 * authentication, no API key: docs/platform.md). The configured language provider answers, Anthropic-compatible or
 * OpenAI-compatible (translated both ways).
 *
 * Streaming: the payment layer (`@x402/hono`) reads the whole answer before it settles and only then sends
 * it, so events cannot reach the caller before the reply is complete. The handler therefore reads the
 * upstream stream to its end first: a stream that breaks half-way is a 502 and is not charged, instead of a
 * charged 200 whose body ends in an error event.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { ChatRequest, ChatStreamEvent, LanguageProvider } from "../../../merchant-kit/index.ts";
import { defineEndpoint, notConfigured, providerErrors } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { chatMessages, MAX_OUTPUT_TOKENS, MessagesInput, textOf } from "./messages-input.ts";
import { anthropicEventStream } from "./messages-sse.ts";

const MessagesOutput = z.object({
  id: z.string(),
  type: z.literal("message"),
  role: z.literal("assistant"),
  content: z.array(z.object({ type: z.literal("text"), text: z.string() })),
  model: z.string().describe("The model that answered."),
  stop_reason: z.enum(["end_turn", "max_tokens", "stop_sequence", "refusal"]),
  stop_sequence: z.string().nullable(),
  usage: z.object({ input_tokens: z.number(), output_tokens: z.number() }),
});

/** Anthropic-style ids (`msg_...`); an OpenAI id (`chatcmpl-...`) is replaced by one of ours. */
const messageId = (id: string) => (id.startsWith("msg_") ? id : `msg_${randomUUID().replaceAll("-", "")}`);

export const LANGUAGE_SETTINGS = "X402M_LLM_URL, X402M_LLM_KEY, X402M_LLM_DIALECT, X402M_LLM_MODEL";

export function messagesEndpoint(language: LanguageProvider | undefined) {
  return defineEndpoint({
    method: "POST",
    path: "/v1/messages",
    price: PRICES["/v1/messages"],
    effects: ["upstream"],
    description: `Model reply in the Anthropic Messages dialect (model, max_tokens up to ${MAX_OUTPUT_TOKENS}, messages, system, temperature, stop_sequences, stream). The x402 payment is the authentication: no API key.`,
    input: MessagesInput,
    output: MessagesOutput,
    example: {
      input: {
        model: "claude-haiku-4-5",
        max_tokens: 256,
        messages: [{ role: "user", content: "Say hello." }],
      },
      output: {
        id: "msg_01XFDUDYJgAACzvnptvVoYEL",
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: "Hello!" }],
        model: "claude-haiku-4-5",
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 11, output_tokens: 4 },
      },
    },
    timeoutMs: 60_000,
    maxBodyBytes: 256 * 1024,
    // `stream: true`: Anthropic's event stream.
    outputMedia: ["application/json", "text/event-stream"],
    errors: providerErrors("language provider", language !== undefined, LANGUAGE_SETTINGS),
    handler: async (body, ctx) => {
      if (!language) throw notConfigured("language provider", LANGUAGE_SETTINGS);
      const request: ChatRequest = {
        messages: chatMessages(body),
        maxTokens: body.max_tokens,
        ...(body.system !== undefined && { system: textOf(body.system) }),
        ...(body.temperature !== undefined && { temperature: body.temperature }),
        ...(body.stop_sequences !== undefined && { stopSequences: body.stop_sequences }),
      };
      if (body.stream) {
        const events: ChatStreamEvent[] = [];
        for await (const e of language.stream(request, ctx.signal)) events.push(e);
        return new Response(anthropicEventStream(events, messageId), {
          headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
        });
      }
      const reply = await language.complete(request, ctx.signal);
      return {
        id: messageId(reply.id),
        type: "message" as const,
        role: "assistant" as const,
        content: [{ type: "text" as const, text: reply.text }],
        model: reply.model,
        stop_reason: reply.stopReason,
        stop_sequence: reply.stopSequence,
        usage: { input_tokens: reply.usage.inputTokens, output_tokens: reply.usage.outputTokens },
      };
    },
  });
}
