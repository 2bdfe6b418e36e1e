/**
 * What every chat engine of the inference merchant offers (the offline engine, an OpenAI-compatible
 * upstream, a local GGUF model): a request in the chat-completions dialect, answered as a stream of events.
 * Streaming is the one primitive: a non-streaming reply is the stream collected, so metering, `max_tokens`
 * and a client that leaves mid-reply work the same way for both.
 */
import { AppError, UpstreamError } from "../../common/errors.ts";

export type ChatRole = "system" | "developer" | "user" | "assistant" | "tool";

/** A message as the dialect sends it; content parts other than text are the handler's to refuse. */
export interface ChatMessage {
  role: ChatRole;
  content: string | null;
  name?: string;
}

export interface ChatRequest {
  /** The model the tier's configuration names. */
  model: string;
  messages: ChatMessage[];
  /** Already resolved from the request and the tier's limits: the engine never produces more. */
  maxTokens: number;
  /**
   * A metered call's bound by its payment: the most reply tokens its maximum covers after a prompt of so
   * many tokens. An engine that counts the prompt its own way (a GGUF model's tokenizer) gives the reply no
   * more than this for its own count; `maxTokens` is already within it for the o200k_base count.
   */
  outputCovered?: (promptTokens: number) => number;
  /** `maxTokens` bounds a reasoning model's reasoning too (tier 8): its reasoning tokens are reply tokens. */
  reasoningCountsAsOutput?: boolean;
  temperature?: number;
  topP?: number;
  /** Up to 4 sequences; the reply ends before the first one it would contain. */
  stop?: string[];
  /** `json_object` asks for a reply that parses as one JSON object. */
  responseFormat?: "text" | "json_object";
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type FinishReason = "stop" | "length";

export type ChatEvent =
  | { type: "delta"; content: string }
  | { type: "done"; finishReason: FinishReason; usage: Usage };

export interface ChatEngine {
  /** Shown to operators and, for the offline engine, in its replies. */
  readonly name: string;
  /**
   * The reply, in order, ending with one `done`. Stops early (without `done`) when `signal` aborts: the
   * caller then meters what it delivered.
   */
  chat(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent>;
}

/** A reply collected from its stream: what a non-streaming call returns. */
export async function collect(
  events: AsyncIterable<ChatEvent>,
): Promise<{ content: string; finishReason: FinishReason; usage: Usage }> {
  let content = "";
  for await (const event of events) {
    if (event.type === "delta") content += event.content;
    else return { content, finishReason: event.finishReason, usage: event.usage };
  }
  throw new Error("the engine's reply ended without its usage");
}

/**
 * The engine's next event, read for a paid call: a failure is an error that is never charged (an
 * `AppError` as it is, anything else a 502 `engine_failed`), and a reply that stops before its `done` is
 * one too (the signal's reason when the call was aborted).
 */
export async function readEvent(
  engine: ChatEngine,
  events: AsyncIterator<ChatEvent>,
  signal: AbortSignal,
): Promise<ChatEvent> {
  let result: IteratorResult<ChatEvent>;
  try {
    result = await events.next();
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (signal.aborted) throw signal.reason;
    throw new UpstreamError(`the ${engine.name} engine failed: ${(error as Error).message}`, "engine_failed");
  }
  if (!result.done) return result.value;
  if (signal.aborted) throw signal.reason;
  throw new UpstreamError(`the ${engine.name} engine's reply ended before it was complete`, "engine_failed");
}
