/**
 * The inference merchant's part of the configuration (`inference`): its engines and, per route, the model
 * it answers as and its per-token rates.
 */
import { z } from "zod";
import type { Section } from "../../config/section.ts";
import { BaseUrl } from "../../config/values.ts";
import { parseRate } from "./metering.ts";
import { ROUTES, settingInfix } from "./tiers.ts";

/** "in,out": a route's per-token rates, dollars per million tokens, e.g. "0.05,0.08". */
const Rates = z.string().transform((value, ctx) => {
  const [input, output, ...rest] = value.split(",").map((r) => r.trim());
  try {
    if (input === undefined || output === undefined || rest.length > 0) throw new Error("");
    parseRate(input);
    parseRate(output);
    return { inputPerMillion: input, outputPerMillion: output };
  } catch {
    ctx.addIssue({
      code: "custom",
      message: `"${value}" is not two rates "input,output" in dollars per million tokens (e.g. "0.05,0.08")`,
    });
    return z.NEVER;
  }
});

/** An OpenAI-compatible upstream: its `/v1` base URL, key and time limit. */
const Upstream = z.object({
  url: BaseUrl,
  key: z.string(),
  timeoutMs: z.coerce.number().int().min(1_000).max(300_000).optional(),
});

/**
 * The inference merchant's engines and, per route (`default`, `t1` .. `t15`, src/merchants/inference/tiers.ts),
 * the model it answers as and its per-token rates. A route with a GGUF model file (X402M_INFERENCE_DEFAULT_GGUF,
 * X402M_INFERENCE_TIER_<n>_GGUF) runs it on this host (node-llama-cpp, one thread), answering as its model
 * name or the file's. Else, with `upstream` (X402M_INFERENCE_LLM_URL, any OpenAI-compatible `/v1` base URL,
 * and X402M_INFERENCE_LLM_KEY), a route is served by it when its model is set (X402M_INFERENCE_DEFAULT_MODEL,
 * X402M_INFERENCE_TIER_<n>_MODEL), and then needs its rates ("in,out" in dollars per million tokens:
 * X402M_INFERENCE_DEFAULT_RATES, X402M_INFERENCE_TIER_<n>_RATES), which meter the /upto routes. Else, with
 * `engine: "offline"` (X402M_INFERENCE_ENGINE=offline: the demo, the tests), the route runs the offline engine
 * (no model), answering as `offline-<alias>` at rates derived from its price. Else it has no engine and
 * answers 503 before any payment: selling an echo at a model's price is a choice, never a default.
 */
const InferenceSchema = z
  .object({
    /** The engine of the routes no model serves: `offline`, or none. */
    engine: z.enum(["offline"], { error: 'the only value is "offline" (unset: no engine)' }).nullable(),
    upstream: Upstream.nullable(),
    routes: z.record(
      z.string(),
      z.object({
        model: z.string().min(1).nullable(),
        rates: Rates.nullable(),
        /** A GGUF model file this route runs locally (node-llama-cpp), before any upstream. */
        gguf: z.string().min(1).nullable().default(null),
      }),
    ),
    /**
     * The audio routes' OpenAI-compatible upstream (X402M_INFERENCE_AUDIO_URL, `.../v1`, and
     * X402M_INFERENCE_AUDIO_KEY), used beside the offline engines (Debian's flite, espeak-ng and
     * pocketsphinx, when installed), and the models it is asked for.
     */
    audio: z
      .object({
        upstream: Upstream.nullable(),
        speechModel: z.string().min(1),
        transcriptionModel: z.string().min(1),
      })
      .default({ upstream: null, speechModel: "tts-1", transcriptionModel: "whisper-1" }),
  })
  .superRefine((inference, ctx) => {
    if (!inference.upstream) return;
    for (const [alias, route] of Object.entries(inference.routes))
      if (route.model !== null && route.rates === null)
        ctx.addIssue({
          code: "custom",
          path: ["routes", alias, "rates"],
          message: 'an upstream model needs its rates, "input,output" in dollars per million tokens',
        });
  });

const InferenceSection = z.object({ inference: InferenceSchema });

export type InferenceSettings = z.infer<typeof InferenceSchema>;
export type AudioSettings = InferenceSettings["audio"];

export const inferenceSection: Section<typeof InferenceSection> = {
  schema: InferenceSection,
  read: ({ env }) => ({
    inference: {
      engine: env.X402M_INFERENCE_ENGINE || null,
      upstream: env.X402M_INFERENCE_LLM_URL
        ? {
            url: env.X402M_INFERENCE_LLM_URL,
            key: env.X402M_INFERENCE_LLM_KEY ?? "",
            timeoutMs: env.X402M_INFERENCE_LLM_TIMEOUT_MS,
          }
        : null,
      audio: {
        upstream: env.X402M_INFERENCE_AUDIO_URL
          ? {
              url: env.X402M_INFERENCE_AUDIO_URL,
              key: env.X402M_INFERENCE_AUDIO_KEY ?? "",
              timeoutMs: env.X402M_INFERENCE_AUDIO_TIMEOUT_MS,
            }
          : null,
        speechModel: env.X402M_INFERENCE_SPEECH_MODEL || "tts-1",
        transcriptionModel: env.X402M_INFERENCE_TRANSCRIPTION_MODEL || "whisper-1",
      },
      routes: Object.fromEntries(
        ROUTES.map((route) => {
          const prefix = `X402M_INFERENCE_${settingInfix(route)}_`;
          return [
            route.alias,
            {
              model: env[`${prefix}MODEL`] || null,
              rates: env[`${prefix}RATES`] || null,
              gguf: env[`${prefix}GGUF`] || null,
            },
          ];
        }),
      ),
    },
  }),
  settingOf: ([, second, third, fourth]) => {
    const upstreamField = (field: string | undefined) =>
      field === "timeoutMs" ? "TIMEOUT_MS" : (field ?? "url").toUpperCase();
    if (second === "audio") {
      if (third === "upstream") return `X402M_INFERENCE_AUDIO_${upstreamField(fourth)}`;
      return third === "speechModel" ? "X402M_INFERENCE_SPEECH_MODEL" : "X402M_INFERENCE_TRANSCRIPTION_MODEL";
    }
    if (second === "engine") return "X402M_INFERENCE_ENGINE";
    if (second === "upstream") return `X402M_INFERENCE_LLM_${upstreamField(third)}`;
    const route = second === "routes" ? ROUTES.find((r) => r.alias === third) : undefined;
    if (route) return `X402M_INFERENCE_${settingInfix(route)}_${(fourth ?? "rates").toUpperCase()}`;
    return undefined;
  },
};
