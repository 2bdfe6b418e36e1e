/**
 * The request of the chat routes, in OpenAI's chat-completions dialect, checked before any payment is asked
 * for: one schema per route, since a route's model and limits (src/merchants/inference/tiers.ts) are part of
 * what is valid. Every tier constraint is refused here (a 400 in OpenAI's error shape, never charged).
 *
 * Supported: `messages` (roles system, developer, user, assistant, tool; content a string or a list of
 * `{type: "text", text}` parts), `model` (the route's, or absent), `max_tokens` / `max_completion_tokens`,
 * `temperature` (0-2), `top_p` (0-1), `stop` (a string or up to 4), `stream`, `stream_options.include_usage`,
 * `response_format` (`text`, `json_object`), `n` (1 only), `tools` and `tool_choice` (below). Fields that
 * change nothing here (`user`, `seed`, `metadata`, `store`, penalties, `logit_bias`, `parallel_tool_calls`,
 * `reasoning_effort`...) are accepted and ignored; a request that asks for what cannot be given (images,
 * audio, `n` > 1, `logprobs`, `json_schema`, a required tool call) is a 400 rather than a silent change.
 *
 * Tools: no engine of this merchant calls tools. `tools` is accepted and not passed to the model (the reply
 * is text, `finish_reason` never `tool_calls`); `tool_choice` `none` or `auto` is accepted; `required` or a
 * named function is a 400, since the reply could not honour it. Earlier turns' `tool_calls` and `tool`
 * messages are accepted: the offline engine reads their text, an upstream engine gets the user and assistant
 * turns and the system prompt only.
 */
import { z } from "zod";
import type { ChatMessage } from "./engine.ts";
import type { Tier } from "./tiers.ts";

const ROLES = ["system", "developer", "user", "assistant", "tool"] as const;

const Part = z
  .object({ type: z.string(), text: z.string().optional() })
  .loose()
  .describe('A content part: only `{type: "text", text}` is supported.');

const Message = z
  .object({
    role: z.enum(ROLES),
    content: z
      .union([z.string(), z.array(Part)])
      .nullish()
      .describe('A string, or a list of `{type: "text", text}` parts; null only for an assistant turn.'),
    name: z.string().max(256).optional(),
    tool_calls: z.array(z.unknown()).optional(),
    tool_call_id: z.string().optional(),
  })
  .loose();

type MessageInput = z.output<typeof Message>;

/** A message's text: its string, or its text parts joined. */
export function messageText(message: Pick<MessageInput, "content">): string {
  const { content } = message;
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((p) => p.text ?? "").join("");
}

/** The messages as the engines take them. */
export function engineMessages(messages: readonly MessageInput[]): ChatMessage[] {
  return messages.map((m) => ({
    role: m.role,
    content: m.content === null || m.content === undefined ? null : messageText(m),
    ...(m.name !== undefined && { name: m.name }),
  }));
}

const Tool = z
  .object({ type: z.string(), function: z.object({ name: z.string() }).loose().optional() })
  .loose();

const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.string(), function: z.object({ name: z.string() }).loose().optional() }).loose(),
]);

/** Most messages one call sends. */
const MAX_MESSAGES = 1000;

/**
 * What `messages` may hold, in the schema's words: the character caps are enforced below (a sum over the
 * messages, which JSON Schema cannot state), so the document says them in the description.
 */
function charactersStated(limits: Tier["limits"]): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const one =
    limits.messageCharacters === undefined
      ? ""
      : `, and at most ${n(limits.messageCharacters)} characters in any one message`;
  return `The conversation, oldest first: 1 to ${n(MAX_MESSAGES)} messages, at most ${n(limits.inputCharacters)} characters of text together${one} (more is a 400, never charged).`;
}

/** The input schema of a route that answers as `model`. */
export function chatInput(route: Tier, model: string) {
  const { limits } = route;
  const tokens = limits.maxTokens;
  const tokenRange = `${tokens.min} to ${tokens.max}`;
  return z
    .object({
      messages: z
        .array(Message)
        .min(1, "messages needs at least one message")
        .max(MAX_MESSAGES)
        .describe(charactersStated(limits)),
      model: z
        .string()
        .nullish()
        .describe(`Optional; when given, it must be this route's model, \`${model}\`.`),
      max_tokens: z
        .number()
        .int()
        .nullish()
        .describe(
          `Output tokens, ${tokenRange}; ${tokens.default} when absent.${limits.reasoningCountsAsOutput ? " Reasoning tokens count toward it." : ""}`,
        ),
      max_completion_tokens: z.number().int().nullish().describe("Same as max_tokens; give one or the same."),
      temperature: z.number().min(0).max(2).nullish(),
      top_p: z.number().min(0).max(1).nullish(),
      stop: z
        .union([z.string(), z.array(z.string()).max(4, "stop holds at most 4 sequences")])
        .nullish()
        .describe("A sequence, or up to 4: the reply ends before the first one it would contain."),
      stream: z
        .boolean()
        .nullish()
        .describe(
          "Answer as server-sent `chat.completion.chunk` events ending with `data: [DONE]`. The reply is complete before the first event is sent (the payment settles first).",
        ),
      stream_options: z
        .object({ include_usage: z.boolean().optional() })
        .loose()
        .nullish()
        .describe("`include_usage: true`: a last chunk, with no choices, carries the usage."),
      n: z.literal(1, "n must be 1: one choice per call").nullish(),
      logprobs: z.literal(false, "logprobs are not available").nullish(),
      response_format: z
        .object({ type: z.string() })
        .loose()
        .nullish()
        .describe("`text` (the default) or `json_object`."),
      tools: z
        .array(Tool)
        .nullish()
        .describe("Accepted, not passed to the model: no engine here calls tools."),
      tool_choice: ToolChoice.nullish().describe(
        "`none` or `auto`; `required` or a named function is a 400.",
      ),
    })
    .loose()
    .superRefine((body, ctx) => {
      const issue = (path: (string | number)[], message: string) =>
        ctx.addIssue({ code: "custom", path, message });
      if (body.model && body.model !== model)
        issue(
          ["model"],
          `this route serves the model "${model}", not "${body.model}"; name it or leave model out`,
        );
      const { max_tokens: a, max_completion_tokens: b } = body;
      if (a != null && b != null && a !== b)
        issue(["max_completion_tokens"], "max_tokens and max_completion_tokens differ: give one");
      const asked = a ?? b;
      if (asked != null && (asked < tokens.min || asked > tokens.max))
        issue(
          [a != null ? "max_tokens" : "max_completion_tokens"],
          `max_tokens is ${tokenRange} on this route`,
        );
      let characters = 0;
      body.messages.forEach((m, i) => {
        if (Array.isArray(m.content))
          m.content.forEach((part, j) => {
            if (part.type !== "text" || typeof part.text !== "string")
              issue(
                ["messages", i, "content", j],
                `content parts of type "${part.type}" are not supported: text only`,
              );
          });
        if ((m.content === null || m.content === undefined) && m.role !== "assistant")
          issue(["messages", i, "content"], `a ${m.role} message needs content`);
        const length = messageText(m).length;
        characters += length;
        if (limits.messageCharacters !== undefined && length > limits.messageCharacters)
          issue(
            ["messages", i, "content"],
            `a message is at most ${limits.messageCharacters} characters on this route (this one has ${length})`,
          );
      });
      if (characters > limits.inputCharacters)
        issue(
          ["messages"],
          `the messages are at most ${limits.inputCharacters} characters together on this route (these have ${characters})`,
        );
      const format = body.response_format?.type;
      if (format !== undefined && format !== "text" && format !== "json_object")
        issue(
          ["response_format", "type"],
          `response_format "${format}" is not supported: text or json_object`,
        );
      const choice = body.tool_choice;
      if (choice === "required" || (typeof choice === "object" && choice !== null))
        issue(
          ["tool_choice"],
          "tool calls are not supported by this route's engine: tool_choice must be none or auto",
        );
    });
}

export type ChatInput = z.output<ReturnType<typeof chatInput>>;

/** The `max_tokens` a call runs with: what it asked, else the route's default. */
export function maxTokensOf(body: ChatInput, route: Tier): number {
  return body.max_tokens ?? body.max_completion_tokens ?? route.limits.maxTokens.default;
}

/** `stop` as a list. */
export function stopOf(body: ChatInput): string[] | undefined {
  if (body.stop == null) return undefined;
  return typeof body.stop === "string" ? [body.stop] : body.stop;
}
