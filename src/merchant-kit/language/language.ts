/**
 * The one interface every language provider adapter implements (Anthropic-compatible or OpenAI-compatible
 * upstreams). It speaks in the Anthropic Messages vocabulary, the dialect `/v1/messages` sells, so the
 * Anthropic adapter is a near pass-through and the OpenAI adapter translates both ways.
 */

export interface ChatMessage {
  role: "user" | "assistant";
  content: string;
}

export interface ChatRequest {
  system?: string;
  messages: ChatMessage[];
  maxTokens: number;
  /**
   * The limit covers a reasoning model's reasoning as well as its reply: OpenAI-compatible upstreams are sent
   * it as `max_completion_tokens` (the field that includes reasoning; `max_tokens`, which older servers know,
   * otherwise). Anthropic's `max_tokens` always includes thinking.
   */
  maxTokensIncludeReasoning?: boolean;
  temperature?: number;
  /** Passed on by the adapters whose wire format has it (OpenAI's `top_p`, Anthropic's `top_p`). */
  topP?: number;
  stopSequences?: string[];
  /** OpenAI's `response_format` type; Anthropic has none, and its adapter ignores it. */
  responseFormat?: "text" | "json_object";
}

/** Why the model stopped, in Anthropic's words. */
export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "refusal";

export interface ChatResult {
  /** The upstream's message id. */
  id: string;
  /** The model that answered, as the upstream names it. */
  model: string;
  text: string;
  stopReason: StopReason;
  stopSequence: string | null;
  usage: { inputTokens: number; outputTokens: number };
}

/** A streamed answer, reduced to what Anthropic's event stream carries for a text reply. */
export type ChatStreamEvent =
  | { type: "start"; id: string; model: string; inputTokens: number }
  | { type: "text"; text: string }
  | {
      type: "stop";
      stopReason: StopReason;
      stopSequence: string | null;
      outputTokens: number;
      /** Known only at the end with OpenAI-compatible upstreams (their usage comes last). */
      inputTokens?: number;
    };

export interface LanguageProvider {
  /** "anthropic" or "openai": which wire format the upstream speaks. */
  readonly dialect: string;
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult>;
  /** The reply as it is generated; the sequence starts with one `start` and ends with one `stop`. */
  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatStreamEvent>;
}

/** How the operator configures the language provider (environment, see README.md). */
export interface LanguageSettings {
  dialect: "anthropic" | "openai";
  /**
   * Base URL as the provider's SDK takes it: Anthropic `https://api.anthropic.com` (we add
   * `/v1/messages`), OpenAI-compatible `https://api.openai.com/v1` (we add `/chat/completions`).
   */
  url: string;
  key: string;
  /** The model every call uses, whatever model a caller names: the flat price is set for it. */
  model: string;
  timeoutMs?: number;
}
