/**
 * The request of `/v1/messages` in the Anthropic Messages dialect, checked before any payment is asked
 * for. Text only: content is a string or a list of `{type: "text", text}` blocks; images, documents and
 * tools are refused with a 400 rather than silently dropped. Fields clients send that change nothing for
 * us (`metadata`, `top_k`, `top_p`...) are accepted and ignored.
 */
import { z } from "zod";
import type { ChatMessage } from "../../../merchant-kit/index.ts";

/**
 * Output tokens one call may ask for. The flat $0.01 pays for at most this many output tokens plus
 * `MAX_INPUT_CHARACTERS` of input on the operator's model (e.g. about $0.004 + $0.006 on a $4/$0.8 per
 * million-token model); a larger `max_tokens` is a 400, not a silent clamp.
 */
export const MAX_OUTPUT_TOKENS = 1024;
/** Characters of system prompt plus messages (about 8,000 tokens of English). */
export const MAX_INPUT_CHARACTERS = 32_000;
export const MAX_MESSAGES = 100;

const TextBlock = z.object({ type: z.literal("text"), text: z.string() });
const Content = z.union([
  z.string(),
  z.array(TextBlock).min(1, "a content list needs at least one text block"),
]);

/** A content's text: blocks are joined as Anthropic reads them, one after the other. */
export function textOf(content: z.output<typeof Content>): string {
  return typeof content === "string" ? content : content.map((b) => b.text).join("");
}

export const MessagesInput = z
  .object({
    model: z
      .string()
      .min(1)
      .max(200)
      .describe(
        "Required by the dialect; the server's configured model answers whatever is named here, and `model` in the reply says which.",
      ),
    max_tokens: z
      .number()
      .int()
      .min(1)
      .max(MAX_OUTPUT_TOKENS, `max_tokens is at most ${MAX_OUTPUT_TOKENS}: the flat price pays for that many`)
      .describe(`Output tokens, 1 to ${MAX_OUTPUT_TOKENS} (what the flat price pays for).`),
    messages: z
      .array(
        z.object({
          role: z.enum(["user", "assistant"]),
          content: Content.describe('A string, or a list of `{type: "text", text}` blocks.'),
        }),
      )
      .min(1)
      .max(MAX_MESSAGES)
      .describe(
        "The conversation: starts with `user`, roles alternate; a final `assistant` message is a prefill the reply continues.",
      ),
    system: z
      .union([z.string(), z.array(TextBlock)])
      .optional()
      .describe("System prompt: a string or a list of text blocks."),
    temperature: z.number().min(0).max(1).optional(),
    stop_sequences: z.array(z.string().min(1).max(200)).max(4).optional().describe("Up to 4."),
    stream: z
      .boolean()
      .default(false)
      .describe(
        "Answer as server-sent events in the dialect's format (message_start, content_block_start/delta/stop, message_delta, message_stop).",
      ),
    tools: z.unknown().optional(),
    tool_choice: z.unknown().optional(),
  })
  .superRefine((body, ctx) => {
    if (body.tools !== undefined || body.tool_choice !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["tools"],
        message: "tools are not supported: text messages only",
      });
    body.messages.forEach((m, i) => {
      if (textOf(m.content).trim() === "")
        ctx.addIssue({
          code: "custom",
          path: ["messages", i, "content"],
          message: "content must not be empty",
        });
      const expected = i % 2 === 0 ? "user" : "assistant";
      if (m.role !== expected)
        ctx.addIssue({
          code: "custom",
          path: ["messages", i, "role"],
          message: `roles must alternate starting with user: message ${i} should be ${expected}`,
        });
    });
    const size =
      (body.system === undefined ? 0 : textOf(body.system).length) +
      body.messages.reduce((n, m) => n + textOf(m.content).length, 0);
    if (size > MAX_INPUT_CHARACTERS)
      ctx.addIssue({
        code: "custom",
        path: ["messages"],
        message: `system and messages hold ${size} characters; at most ${MAX_INPUT_CHARACTERS}`,
      });
  });

export type MessagesRequest = z.output<typeof MessagesInput>;

/** The provider-neutral messages of a checked request. */
export function chatMessages(body: MessagesRequest): ChatMessage[] {
  return body.messages.map((m) => ({ role: m.role, content: textOf(m.content) }));
}
