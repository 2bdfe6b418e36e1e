/**
 * The direct answer of `/api/search`, always drawn from the live results just fetched:
 * 1. "model": with a language provider configured, the model answers from the numbered snippets only,
 *    citing them as [n]; if that call fails the search is still worth its price, so we fall back.
 * 2. "backend": the backend's own answer (Tavily `answer`, SearXNG `answers`), when it gave one.
 * 3. "extractive": no model: the one or two snippet sentences sharing the most words with the query (ties
 *    go to the better-ranked result). It quotes the sources; it does not reason over them.
 */
import type { LanguageProvider } from "../../../merchant-kit/index.ts";
import type { SearchHit } from "./search-backend.ts";

export type AnswerMethod = "model" | "backend" | "extractive";

const ANSWER_TOKENS = 300;
const EXTRACT_MAX_CHARS = 400;

export async function answerFrom(
  query: string,
  results: readonly SearchHit[],
  backendAnswer: string | undefined,
  language: LanguageProvider | undefined,
  signal?: AbortSignal,
): Promise<{ answer: string | null; method: AnswerMethod }> {
  if (results.length === 0)
    return { answer: backendAnswer ?? null, method: backendAnswer ? "backend" : "extractive" };
  if (language) {
    try {
      const sources = results.map((r, i) => `[${i + 1}] ${r.title}\n${r.url}\n${r.content}`).join("\n\n");
      const reply = await language.complete(
        {
          system:
            "You answer a web search query in at most three sentences, using only the numbered search results given. Cite results as [n]. If they do not answer the query, say so briefly. Plain text, no preamble.",
          messages: [{ role: "user", content: `Query: ${query}\n\nSearch results:\n\n${sources}` }],
          maxTokens: ANSWER_TOKENS,
          temperature: 0,
        },
        signal,
      );
      if (reply.text.trim()) return { answer: reply.text.trim(), method: "model" };
    } catch (error) {
      if (signal?.aborted) throw error;
      // Fall through: the results themselves are still good.
    }
  }
  if (backendAnswer) return { answer: backendAnswer, method: "backend" };
  return { answer: extractiveAnswer(query, results), method: "extractive" };
}

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []);

/** The best one or two snippet sentences by words shared with the query; null when no snippet has text. */
export function extractiveAnswer(query: string, results: readonly SearchHit[]): string | null {
  const terms = words(query);
  const candidates = results.slice(0, 5).flatMap((r, rank) =>
    (r.content.match(/[^.!?]+[.!?]*/g) ?? [])
      .map((s) => s.trim())
      .filter((s) => s.length >= 20)
      .map((sentence, position) => {
        const shared = [...words(sentence)].filter((w) => terms.has(w)).length;
        return { sentence, shared, rank, position };
      }),
  );
  if (candidates.length === 0) return null;
  candidates.sort((a, b) => b.shared - a.shared || a.rank - b.rank || a.position - b.position);
  const chosen = candidates.slice(0, 2).filter((c, i) => i === 0 || c.shared > 0);
  let answer = "";
  for (const c of chosen) {
    const next = answer ? `${answer} ${c.sentence}` : c.sentence;
    if (next.length > EXTRACT_MAX_CHARS && answer) break;
    answer = next;
  }
  return answer.length > EXTRACT_MAX_CHARS ? `${answer.slice(0, EXTRACT_MAX_CHARS - 1)}…` : answer;
}
