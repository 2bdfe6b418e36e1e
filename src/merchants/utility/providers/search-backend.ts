/**
 * The one interface every search backend adapter implements (SearXNG, Brave, Tavily), and the settings
 * that choose one.
 */

export interface SearchQuery {
  query: string;
  /** 1 to 10. */
  maxResults: number;
  topic: "general" | "news";
  /** Ask the backend for its own answer when it can give one (Tavily), for when no language model is set. */
  includeAnswer: boolean;
}

export interface SearchHit {
  title: string;
  url: string;
  /** A plain-text snippet (HTML tags removed). */
  content: string;
  /** Relevance from 0 to 1, best first (how each backend's is derived: in its adapter). */
  score: number;
}

export interface SearchAnswerSource {
  results: SearchHit[];
  /** An answer the backend itself gave (Tavily `answer`, SearXNG `answers`), if any. */
  answer?: string;
}

export interface SearchBackend {
  readonly name: "searxng" | "brave" | "tavily";
  search(query: SearchQuery, signal?: AbortSignal): Promise<SearchAnswerSource>;
}

export interface SearchSettings {
  backend: "searxng" | "brave" | "tavily";
  /**
   * Base URL: a SearXNG instance (`https://searx.example.org`), Brave `https://api.search.brave.com`,
   * Tavily `https://api.tavily.com`.
   */
  url: string;
  /** Brave's subscription token or Tavily's API key; SearXNG needs none. */
  key?: string;
  timeoutMs?: number;
}

/** Text of a snippet as a person reads it: tags removed, common entities decoded, spaces collapsed. */
export function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x?[0-9a-f]+|amp|lt|gt|quot|apos|nbsp|#39);/gi, (_, entity: string) => {
      const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
      const lower = entity.toLowerCase();
      if (lower in named) return named[lower] as string;
      const code = lower.startsWith("#x") ? Number.parseInt(lower.slice(2), 16) : Number(lower.slice(1));
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "";
    })
    .replace(/\s+/g, " ")
    .trim();
}

/** Rounds a score to 4 decimals, within 0..1. */
export const clampScore = (x: number) => Math.round(Math.min(1, Math.max(0, x)) * 10_000) / 10_000;
