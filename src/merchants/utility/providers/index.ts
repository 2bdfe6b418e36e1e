/**
 * The provider-backed endpoints of the utility API (docs/platform.md, "The utility API's endpoints"): `/v1/messages`, `/api/search`,
 * `/api/translate-text` and `/api/generate-image`. Each calls an upstream the operator configures (a
 * language model, a search backend, an image model) through one adapter interface; without its provider an
 * endpoint answers 503 `provider_not_configured` and charges nothing. See README.md for the environment.
 */
import type { AnyEndpoint, LanguageProvider, LanguageSettings } from "../../../merchant-kit/index.ts";
import { languageProvider } from "../../../merchant-kit/index.ts";
import { generateImageEndpoint } from "./generate-image.ts";
import type { ImageProvider, ImageSettings } from "./image.ts";
import { openaiImageProvider } from "./image-openai.ts";
import { messagesEndpoint } from "./messages.ts";
import { searchEndpoint } from "./search.ts";
import type { SearchBackend, SearchSettings } from "./search-backend.ts";
import { searchBackend } from "./search-provider.ts";
import { translateEndpoint } from "./translate.ts";

export type { LanguageProvider, LanguageSettings } from "../../../merchant-kit/index.ts";
export { languageProvider } from "../../../merchant-kit/index.ts";
export type { ImageProvider, ImageSettings } from "./image.ts";
export { openaiImageProvider } from "./image-openai.ts";
export type { SearchBackend, SearchSettings } from "./search-backend.ts";
export { searchBackend } from "./search-provider.ts";

/** The adapters behind the endpoints; each one left out makes its endpoints answer 503. */
export interface ProviderOptions {
  /** `/v1/messages`, `/api/translate-text`, and the answer of `/api/search`. */
  language?: LanguageProvider;
  search?: SearchBackend;
  image?: ImageProvider;
}

/** The settings read from the environment (config); null = not configured. */
export interface ProviderSettings {
  language: LanguageSettings | null;
  search: SearchSettings | null;
  image: ImageSettings | null;
}

/** The adapters the settings describe, for `providerEndpoints`. */
export function providersFromSettings(settings: ProviderSettings): ProviderOptions {
  return {
    ...(settings.language && { language: languageProvider(settings.language) }),
    ...(settings.search && { search: searchBackend(settings.search) }),
    ...(settings.image && { image: openaiImageProvider(settings.image) }),
  };
}

/** The endpoints in the price list's order: /v1/messages, /api/search, /api/translate-text, /api/generate-image. */
export function providerEndpoints(options: ProviderOptions = {}): readonly AnyEndpoint[] {
  return [
    messagesEndpoint(options.language),
    searchEndpoint(options.search, options.language),
    translateEndpoint(options.language),
    generateImageEndpoint(options.image),
  ];
}

/** With no provider configured: every endpoint answers 503 `provider_not_configured` and charges nothing. */
export const PROVIDER_ENDPOINTS: readonly AnyEndpoint[] = providerEndpoints();
