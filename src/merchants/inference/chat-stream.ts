/**
 * A chat reply streamed as the engine produces it (`stream: true`), in OpenAI's server-sent events: a first
 * chunk with the role, one chunk a piece of text, a last choice chunk with the finish reason, then (asked
 * with `include_usage`) a chunk with no choices and the usage, earlier chunks then carrying `usage: null`;
 * then `data: [DONE]`.
 *
 * The kit sends it and settles it once it has ended (src/merchant-kit/payments/streamed.ts): its receipt,
 * the `PAYMENT-RESPONSE` header's value, is the last choice chunk's `payment_response`, as the headers were
 * sent with the first event. The engine's first event is awaited before anything is sent, so an engine
 * that fails at once is an error answer with its own status (never charged), not a stream. A failure
 * after that ends the stream with an error event (`data: {"error": {...}}`, no `[DONE]`) saying what was
 * charged. A metered call costs, when the stream completes, the engine's own usage; when it is cut short,
 * the prompt and the text delivered, counted with o200k_base (the engine's count covers what it generated,
 * not what reached the caller).
 */
import type { AppError } from "../../common/errors.ts";
import { openAiErrorBody, type StreamEnding, Streamed } from "../../merchant-kit/index.ts";
import {
  type ChatEngine,
  type ChatEvent,
  type ChatRequest,
  type FinishReason,
  readEvent,
  type Usage,
} from "./engine.ts";
import { meteredAmount, type TokenRates } from "./metering.ts";

export interface StreamReply {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
  /** A metered call's rates and authorization; null for a per-call price. */
  metering: { rates: TokenRates; max: bigint } | null;
}

export async function streamReply(
  engine: ChatEngine,
  request: ChatRequest,
  signal: AbortSignal,
  reply: StreamReply,
): Promise<Streamed> {
  const events = engine.chat(request, signal)[Symbol.asyncIterator]();
  const next = () => readEvent(engine, events, signal);
  const first = await next();
  // Loaded here, not with the catalogue: a process that serves no chat call never builds the tokenizer.
  const { countPromptTokens, countTokens } = await import("./tokens.ts");
  const pieces: string[] = [];
  let done: Extract<ChatEvent, { type: "done" }> | undefined;
  const chunk = chunkOf(reply);

  async function* parts(): AsyncGenerator<string> {
    for (let event = first; ; event = await next()) {
      if (event.type === "done") {
        done = event;
        return;
      }
      pieces.push(event.content);
      yield chunk([choice({ content: event.content })]);
    }
  }

  return new Streamed({
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    head: chunk([choice({ role: "assistant", content: "" })]),
    parts: parts(),
    meter: (delivered, complete) => {
      if (!reply.metering) return 0n;
      const { rates, max } = reply.metering;
      if (complete && done)
        return meteredAmount(
          { promptTokens: done.usage.prompt_tokens, completionTokens: done.usage.completion_tokens },
          rates,
          max,
        );
      const text = pieces.slice(0, delivered).join("");
      return meteredAmount(
        { promptTokens: countPromptTokens(request.messages), completionTokens: text ? countTokens(text) : 0 },
        rates,
        max,
      );
    },
    end: (ending) =>
      ending.error ? errorEvent(ending.error, ending) : finalEvents(chunk, done, ending, reply),
  });
}

type Chunk = (choices: unknown[], extra?: { usage?: Usage; payment_response?: string }) => string;

function chunkOf(reply: StreamReply): Chunk {
  return (choices, extra = {}) =>
    `data: ${JSON.stringify({
      id: reply.id,
      object: "chat.completion.chunk",
      created: reply.created,
      model: reply.model,
      system_fingerprint: null,
      choices,
      ...(reply.includeUsage && { usage: extra.usage ?? null }),
      ...(extra.payment_response !== undefined && { payment_response: extra.payment_response }),
    })}\n\n`;
}

const choice = (delta: Record<string, string>, finishReason: FinishReason | null = null) => ({
  index: 0,
  delta,
  logprobs: null,
  finish_reason: finishReason,
});

/** The last choice chunk (the finish reason, the receipt), the usage when asked, `[DONE]`. */
function finalEvents(
  chunk: Chunk,
  done: Extract<ChatEvent, { type: "done" }> | undefined,
  ending: StreamEnding,
  reply: StreamReply,
): string {
  if (!done) throw new Error("a chat stream completed without the engine's usage");
  const receipt = ending.paymentResponse === undefined ? {} : { payment_response: ending.paymentResponse };
  let out = chunk([choice({}, done.finishReason)], receipt);
  if (reply.includeUsage) out += chunk([], { usage: done.usage });
  return `${out}data: [DONE]\n\n`;
}

/** What ended the stream early, in OpenAI's error shape, saying what was charged. */
function errorEvent(error: AppError, ending: StreamEnding): string {
  const charged =
    ending.charged > 0n
      ? `${ending.charged} atomic units of the token were charged for the part delivered`
      : "nothing was charged";
  const body = openAiErrorBody(
    error.status,
    error.code,
    `${error.publicMessage ?? error.message}; ${charged}`,
  );
  const receipt = ending.paymentResponse === undefined ? {} : { payment_response: ending.paymentResponse };
  return `data: ${JSON.stringify({ ...body, ...receipt })}\n\n`;
}
