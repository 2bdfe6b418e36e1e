/**
 * The language upstreams the merchants sell the work of (the utility API's /v1/messages, search answers and
 * translation; the inference API's hosted models): one interface, an adapter per wire format (Anthropic's
 * Messages, OpenAI's chat completions), read with the kit's upstream client's limits.
 */
export { countingTokens } from "./counting-tokens.ts";
export type {
  ChatMessage,
  ChatRequest,
  ChatResult,
  ChatStreamEvent,
  LanguageProvider,
  LanguageSettings,
  StopReason,
} from "./language.ts";
export { openaiProvider } from "./openai.ts";
export { languageProvider } from "./provider.ts";
