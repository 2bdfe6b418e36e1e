/** Builds the language provider the settings name (see README.md for the environment). */

import { anthropicProvider } from "./anthropic.ts";
import type { LanguageProvider, LanguageSettings } from "./language.ts";
import { openaiProvider } from "./openai.ts";

export function languageProvider(settings: LanguageSettings): LanguageProvider {
  return settings.dialect === "anthropic" ? anthropicProvider(settings) : openaiProvider(settings);
}
