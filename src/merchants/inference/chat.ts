/**
 * The chat routes of the inference merchant: `POST /v1/chat/completions` (the default model), one per tier
 * (`/v1/chat/completions/_t/<alias>`) and the metered variants (`.../upto`), in OpenAI's chat-completions
 * dialect, refusals included (`errorDialect: "openai"`).
 *
 * A reply asked without `stream` is read from the engine to its end before anything is answered: the
 * payment middleware settles it (a metered call at what `ctx.meter` says: its input and output tokens at the
 * route's rates, never above the route's price, nothing without output: metering.ts) and sends it with its
 * receipt, and a reply that breaks half-way is a 502 that is not charged. With `stream: true` the reply is
 * sent as the engine produces it and settled for what was delivered (chat-stream.ts).
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { USDC_DECIMALS } from "../../chain/base.ts";
import { AppError, BadInputError } from "../../common/errors.ts";
import type { Streamed } from "../../merchant-kit/index.ts";
import { defineEndpoint, type Errors, type HandlerContext, priceToAtomic } from "../../merchant-kit/index.ts";
import { type ChatInput, chatInput, engineMessages, maxTokensOf, stopOf } from "./chat-input.ts";
import { streamReply } from "./chat-stream.ts";
import {
  type ChatEngine,
  type ChatMessage,
  type ChatRequest,
  type FinishReason,
  readEvent,
  type Usage,
} from "./engine.ts";
import { meteredAmount, meteredCoverage, outputTokensCovered, type TokenRates } from "./metering.ts";
import type { Tier } from "./tiers.ts";

/** Which engine serves a route: the offline one, an OpenAI-compatible upstream, or a local GGUF model. */
export type EngineKind = "offline" | "upstream" | "gguf";

/** What serves a route: its engine (null = none configured: 503), the model it answers as, its rates. */
export interface RouteEngine {
  engine: ChatEngine | null;
  /** Null exactly when `engine` is. */
  kind: EngineKind | null;
  model: string;
  rates: TokenRates;
  /** The settings that configure it, for the 503 of a route that has none. */
  settings: string;
  /** How a call to the engine can be refused or fail, for the route's `errors`; none by default. */
  errors?: Errors;
}

const UsageSchema = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

export const ChatCompletion = z.object({
  id: z.string().describe('"chatcmpl-" and a unique suffix.'),
  object: z.literal("chat.completion"),
  created: z.number().int().describe("Unix seconds."),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({
        role: z.literal("assistant"),
        content: z.string(),
        refusal: z.null(),
      }),
      finish_reason: z.enum(["stop", "length"]),
      logprobs: z.null(),
    }),
  ),
  usage: UsageSchema,
  system_fingerprint: z.null(),
});

export type ChatCompletion = z.output<typeof ChatCompletion>;

/** The routes' path: the default route's, a tier's, or a tier's metered variant. */
export function chatPath(route: Tier, metered = false): `/${string}` {
  if (route.number === null) return "/v1/chat/completions";
  return `/v1/chat/completions/_t/${route.alias}${metered ? "/upto" : ""}`;
}

function describe(route: Tier, served: RouteEngine, metered: boolean): string {
  const what = route.number === null ? "the default model" : `the model of tier ${route.number}`;
  const limits = route.stated === "none" ? "" : ` Tier ${route.number}: ${route.stated}.`;
  if (metered) {
    const covers = meteredCoverage(
      served.rates,
      priceToAtomic(route.uptoPrice ?? "0", USDC_DECIMALS),
      route.limits.maxTokens,
    );
    return `Metered chat, tier ${route.number} (upto, channels): the tier's token rates (GET /v1/models), at most ${route.uptoPrice}, which covers max_tokens ${covers.outputTokens}, or a ${covers.at.promptTokens}-token prompt at max_tokens ${covers.at.maxTokens}.${limits}`;
  }
  return `Chat completion from ${what}, in the OpenAI chat-completions dialect (messages, max_tokens, stream, tools, response_format; usage in the reply).${limits}`;
}

/** One chat endpoint: the route's per-call one, or with `metered` its /upto variant. */
export function chatEndpoint(route: Tier, served: RouteEngine, metered = false) {
  const price = metered ? route.uptoPrice : route.price;
  if (price === null) throw new Error(`${route.alias} has no /upto route`);
  const input = chatInput(route, served.model);
  return defineEndpoint({
    method: "POST",
    path: chatPath(route, metered),
    price,
    // A metered route is paid with upto, or through a payment channel, which charges what upto would.
    ...(metered && { scheme: ["upto", "batch-settlement"] as const }),
    errorDialect: "openai",
    // An upstream costs money outside, a GGUF model this host's CPU: the kit reserves the payer's funds
    // first, and counts a call that goes unpaid once the engine has worked against its payer.
    ...(served.kind === "upstream" && { effects: ["upstream" as const] }),
    ...(served.kind === "gguf" && { effects: ["compute" as const] }),
    ...(served.errors && { errors: served.errors }),
    // A route no engine serves answers only 503s: served and documented, but not advertised to buyers.
    ...(served.engine === null && { listed: false }),
    description: describe(route, served, metered),
    input,
    output: ChatCompletion,
    // `stream: true`: the reply as OpenAI's event stream.
    outputMedia: ["application/json", "text/event-stream"],
    example: {
      input: { messages: [{ role: "user", content: "Say hello." }], max_tokens: route.limits.maxTokens.min },
      output: {
        id: "chatcmpl-6f1c2b0e9d6c4f7a8b3e5d2c1a0f9e8d",
        object: "chat.completion",
        created: 1_767_225_600,
        model: served.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: "Hello!", refusal: null },
            finish_reason: "stop",
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
        system_fingerprint: null,
      },
    },
    timeoutMs: 120_000,
    maxBodyBytes: 1024 * 1024,
    streaming: metered ? STREAMING_METERED : STREAMING_EXACT,
    // No engine: refused before the 402, so no buyer signs for what cannot be served.
    ...(served.engine === null && { precheck: async () => notConfigured(served) }),
    handler: (body, ctx) => answer(body, ctx, route, served, metered ? price : null),
  });
}

const STREAMED =
  "With stream: true the events are sent as the engine produces them and the call is settled once the stream has ended: no PAYMENT-RESPONSE header (the headers precede the settlement); the last choice chunk (the one with finish_reason) carries `payment_response`, the header's value. A stream the engine ends early (a failure, the time limit) ends with an error event in OpenAI's shape saying what was charged.";
const STREAMING_EXACT = `${STREAMED} Charged its price when the stream completes, or when the client leaves after text was delivered; nothing when the engine fails or the client leaves before any text.`;
const STREAMING_METERED = `${STREAMED} Charged by the metering rule for what was delivered: when the stream completes, the engine's usage; when it is cut short (a failure, the time limit, the client leaving), the prompt and the text delivered (o200k_base); nothing when no text was delivered.`;

/** The 503 of a route no engine serves, naming what the operator can set. */
function notConfigured(served: RouteEngine): AppError {
  return new AppError(
    503,
    "engine_not_configured",
    `this route has no engine configured on this server: set ${served.settings}; nothing was charged`,
  );
}

/** The whole reply of the engine, or an error that is never charged. */
async function run(
  engine: ChatEngine,
  request: ChatRequest,
  signal: AbortSignal,
): Promise<{ pieces: string[]; finishReason: FinishReason; usage: Usage }> {
  const events = engine.chat(request, signal)[Symbol.asyncIterator]();
  const pieces: string[] = [];
  for (;;) {
    const event = await readEvent(engine, events, signal);
    if (event.type === "done") return { pieces, finishReason: event.finishReason, usage: event.usage };
    pieces.push(event.content);
  }
}

export async function answer(
  body: ChatInput,
  ctx: HandlerContext,
  route: Tier,
  served: RouteEngine,
  /** The /upto price: the call is metered, at most this. */
  meteredMax: Tier["price"] | null,
): Promise<ChatCompletion | Streamed> {
  if (!served.engine) throw notConfigured(served);
  const format = body.response_format?.type;
  const stop = stopOf(body);
  const messages = engineMessages(body.messages);
  const max =
    meteredMax === null ? null : priceToAtomic(meteredMax, ctx.services.config.payments.asset.decimals);
  // Metered: the reply is bounded by what the buyer's maximum covers, before any work.
  const maxTokens =
    max === null ? maxTokensOf(body, route) : await coveredMaxTokens(body, route, served, max, messages);
  const request: ChatRequest = {
    model: served.model,
    messages,
    maxTokens,
    ...(max !== null && {
      outputCovered: (prompt: number) => outputTokensCovered(prompt, served.rates, max),
    }),
    ...(route.limits.reasoningCountsAsOutput && { reasoningCountsAsOutput: true }),
    ...(body.temperature != null && { temperature: body.temperature }),
    ...(body.top_p != null && { topP: body.top_p }),
    ...(stop && { stop }),
    ...(format === "json_object" && { responseFormat: "json_object" as const }),
  };
  const id = `chatcmpl-${randomUUID().replaceAll("-", "")}`;
  const created = Math.floor(Date.now() / 1000);
  if (body.stream) {
    return streamReply(served.engine, request, ctx.signal, {
      id,
      created,
      model: served.model,
      includeUsage: body.stream_options?.include_usage === true,
      // The buyer chose how to pay: upto and channels are metered (the kit settles `exact` at its price).
      metering: max !== null && ctx.meter ? { rates: served.rates, max } : null,
    });
  }
  const reply = await run(served.engine, request, ctx.signal);
  if (max !== null) {
    if (!ctx.meter) throw new Error(`${chatPath(route, true)} was called without the kit's meter`);
    ctx.meter(
      meteredAmount(
        { promptTokens: reply.usage.prompt_tokens, completionTokens: reply.usage.completion_tokens },
        served.rates,
        max,
      ),
    );
  }
  return {
    id,
    object: "chat.completion",
    created,
    model: served.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: reply.pieces.join(""), refusal: null },
        finish_reason: reply.finishReason,
        logprobs: null,
      },
    ],
    usage: reply.usage,
    system_fingerprint: null,
  };
}

/**
 * The `max_tokens` a metered call runs with: what it asked, or the route's default, and never more than its
 * maximum covers at the route's rates after its prompt (counted as the engines count it, o200k_base). A call
 * that asked for more, or whose prompt leaves less than the route's least `max_tokens`, is refused here,
 * after the payment is verified and before any work: a 400 that says what the maximum covers, never charged.
 * Most calls are far inside the bound that takes no tokenizing (every token is at least a byte), and are
 * not counted here at all.
 */
async function coveredMaxTokens(
  body: ChatInput,
  route: Tier,
  served: RouteEngine,
  max: bigint,
  messages: readonly ChatMessage[],
): Promise<number> {
  const asked = body.max_tokens ?? body.max_completion_tokens ?? null;
  const wanted = asked ?? route.limits.maxTokens.default;
  const { countPromptTokens, promptTokensAtMost } = await import("./tokens.ts");
  if (outputTokensCovered(promptTokensAtMost(messages), served.rates, max) >= wanted) return wanted;
  const prompt = countPromptTokens(messages);
  const covered = Math.min(outputTokensCovered(prompt, served.rates, max), route.limits.maxTokens.max);
  if (covered >= wanted) return wanted;
  if (asked === null && covered >= route.limits.maxTokens.min) return covered;
  const least = route.limits.maxTokens.min;
  throw new BadInputError(
    `${coverageText(route, served, max)}; this prompt is ${prompt} tokens, after which it covers ${
      covered < least
        ? `less than this route's least max_tokens (${least}): send a shorter prompt`
        : `at most max_tokens ${covered}: ask for that many or fewer, or send a shorter prompt`
    } (nothing was charged)`,
    covered < least ? "prompt_not_covered" : "max_tokens_not_covered",
    covered < least ? "messages" : asked === body.max_tokens ? "max_tokens" : "max_completion_tokens",
  );
}

/** What a metered route's maximum buys, in words: its rates, and the largest call it takes. */
function coverageText(route: Tier, served: RouteEngine, max: bigint): string {
  const { outputTokens, at } = meteredCoverage(served.rates, max, route.limits.maxTokens);
  return `at most ${route.uptoPrice} a call at ${served.rates.inputPerMillion} and ${served.rates.outputPerMillion} USD per million input and output tokens covers max_tokens up to ${outputTokens} with the shortest prompt, and prompts up to ${at.promptTokens} tokens at max_tokens ${at.maxTokens}`;
}
