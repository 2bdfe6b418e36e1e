/**
 * Reading a provider's server-sent events stream (Anthropic and OpenAI both stream SSE) with
 * eventsource-parser, under a size cap: each yielded item is one event's name and parsed JSON data.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { UpstreamError } from "../../common/errors.ts";

/** Cap of one streamed answer in bytes: far above what the token cap of any call can produce. */
export const MAX_STREAM_BYTES = 4 * 1024 * 1024;

export interface SseItem {
  event: string | undefined;
  /** The raw `data` field (OpenAI ends with `[DONE]`, which is not JSON). */
  data: string;
}

export async function* readSse(body: ReadableStream<Uint8Array>, provider: string): AsyncGenerator<SseItem> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => queue.push(message) });
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_STREAM_BYTES)
        throw new UpstreamError(
          `the ${provider} streamed more than ${MAX_STREAM_BYTES} bytes`,
          "upstream_too_large",
        );
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length > 0) {
        const message = queue.shift() as EventSourceMessage;
        yield { event: message.event, data: message.data };
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The JSON of an event's data, or a 502 naming the provider. */
export function parseData(item: SseItem, provider: string): unknown {
  try {
    return JSON.parse(item.data);
  } catch {
    throw new UpstreamError(`the ${provider} streamed an event that is not JSON`, "upstream_invalid");
  }
}
