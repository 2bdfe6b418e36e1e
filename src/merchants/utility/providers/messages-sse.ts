/**
 * Writes a reply as Anthropic's server-sent events: `message_start`, `content_block_start`, `ping`,
 * `content_block_delta` (text_delta) per piece, `content_block_stop`, `message_delta` (stop reason,
 * output tokens), `message_stop`. Each event is `event: <type>` plus `data: <json>` whose `type` repeats
 * the name, as Anthropic's SDKs expect.
 */
import type { ChatStreamEvent } from "../../../merchant-kit/index.ts";

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** One complete stream from the provider's events (which start with `start` and end with `stop`). */
export function anthropicEventStream(
  events: readonly ChatStreamEvent[],
  messageId: (id: string) => string,
): string {
  let out = "";
  for (const e of events) {
    if (e.type === "start") {
      out += event("message_start", {
        message: {
          id: messageId(e.id),
          type: "message",
          role: "assistant",
          content: [],
          model: e.model,
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: e.inputTokens, output_tokens: 0 },
        },
      });
      out += event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      out += event("ping", {});
    } else if (e.type === "text") {
      out += event("content_block_delta", { index: 0, delta: { type: "text_delta", text: e.text } });
    } else {
      out += event("content_block_stop", { index: 0 });
      out += event("message_delta", {
        delta: { stop_reason: e.stopReason, stop_sequence: e.stopSequence },
        usage: {
          output_tokens: e.outputTokens,
          ...(e.inputTokens !== undefined && { input_tokens: e.inputTokens }),
        },
      });
      out += event("message_stop", {});
    }
  }
  return out;
}
