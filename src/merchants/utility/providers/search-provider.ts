/** Builds the search backend the settings name. */
import type { SearchBackend, SearchSettings } from "./search-backend.ts";
import { braveBackend } from "./search-brave.ts";
import { searxngBackend } from "./search-searxng.ts";
import { tavilyBackend } from "./search-tavily.ts";

export function searchBackend(settings: SearchSettings): SearchBackend {
  if (settings.backend === "brave") return braveBackend(settings);
  if (settings.backend === "tavily") return tavilyBackend(settings);
  return searxngBackend(settings);
}
