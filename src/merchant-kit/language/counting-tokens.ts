import { upstreamTokens } from "../../common/metrics.ts";
import type { ChatStreamEvent, LanguageProvider } from "./language.ts";

/**
 * `inner`, its answers' token counts added to the metrics as the upstream reports them: a whole answer's,
 * a stream's at its end (a stream its caller leaves is not counted).
 */
export function countingTokens(provider: string, inner: LanguageProvider): LanguageProvider {
  const count = (input: number, output: number) => {
    upstreamTokens.inc({ provider, kind: "input" }, input);
    upstreamTokens.inc({ provider, kind: "output" }, output);
  };
  return {
    dialect: inner.dialect,
    async complete(request, signal) {
      const result = await inner.complete(request, signal);
      count(result.usage.inputTokens, result.usage.outputTokens);
      return result;
    },
    async *stream(request, signal): AsyncGenerator<ChatStreamEvent> {
      let input = 0;
      for await (const event of inner.stream(request, signal)) {
        if (event.type === "start") input = event.inputTokens;
        if (event.type === "stop") count(event.inputTokens ?? input, event.outputTokens);
        yield event;
      }
    },
  };
}
