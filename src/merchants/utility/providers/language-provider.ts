/** Builds the language provider the settings name (see README.md for the environment). */

import type { LanguageProvider, LanguageSettings } from "./language.ts";
import { anthropicProvider } from "./language-anthropic.ts";
import { openaiProvider } from "./language-openai.ts";

export function languageProvider(settings: LanguageSettings): LanguageProvider {
  return settings.dialect === "anthropic" ? anthropicProvider(settings) : openaiProvider(settings);
}
