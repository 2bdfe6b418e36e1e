/**
 * The inference API (docs/inference.md). Chat: the default route, the 15 tiers and the /upto variants of tiers
 * 2, 3, 4, 5, 6, 8 and 10, all built from the one price list (tiers.ts) and the operator's configuration of
 * engines, models and rates (`config.inference`); audio: speech, transcription and voices
 * (audio/catalogue.ts). The platform builds the routes, the OpenAPI document,
 * the reference page, `/.well-known/x402` and the listings from the result; `GET /v1/models` (free) lists
 * what each route serves and at what rates.
 */
import path from "node:path";
import { USDC_DECIMALS } from "../../chain/base.ts";
import type { AnyEndpoint, FreeRoute, Merchant, PriceUsd } from "../../merchant-kit/index.ts";
import { priceToAtomic, providerErrors } from "../../merchant-kit/index.ts";
import { audioEndpoints, audioFreeRoutes, audioServices } from "./audio/catalogue.ts";
import type { AudioServices } from "./audio/services.ts";
import { chatEndpoint, chatPath, type RouteEngine } from "./chat.ts";
import type { ChatEngine, ChatEvent, ChatRequest } from "./engine.ts";
import { INFERENCE_GUIDANCE } from "./guidance.ts";
import { meteredCoverage } from "./metering.ts";
import type { InferenceSettings } from "./settings.ts";
import { defaultModel, defaultRates, ROUTES, settingInfix, type Tier } from "./tiers.ts";

export const INFERENCE_TITLE = "Inference API";

/** No upstream, no models named, the offline engine chosen: every route on the offline engines (demo, tests). */
export const OFFLINE_SETTINGS: InferenceSettings = {
  engine: "offline",
  upstream: null,
  audio: { upstream: null, speechModel: "tts-1", transcriptionModel: "whisper-1" },
  routes: Object.fromEntries(ROUTES.map((r) => [r.alias, { model: null, rates: null, gguf: null }])),
};

/**
 * An engine loaded on its first call: the engines need the tokenizer (140 MB of memory built), which a
 * process serving other merchants (which imports every catalogue) should never load.
 */
function lazyEngine(name: string, load: () => Promise<ChatEngine>): ChatEngine {
  let loaded: Promise<ChatEngine> | undefined;
  return {
    name,
    async *chat(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
      loaded ??= load();
      yield* (await loaded).chat(request, signal);
    },
  };
}

const offlineEngine = () =>
  lazyEngine("offline", async () => (await import("./engines/offline.ts")).offlineEngine());

/**
 * What serves `route` under `settings`: its GGUF model file, else the upstream when the route names its
 * model, else the offline engine when the operator chose it, else nothing (a 503 before any payment).
 */
export function routeEngine(
  route: Tier,
  settings: InferenceSettings,
  offline: ChatEngine,
  local: (file: string) => ChatEngine = localEngines(),
): RouteEngine {
  const configured = settings.routes[route.alias] ?? { model: null, rates: null, gguf: null };
  const prefix = `X402M_INFERENCE_${settingInfix(route)}_`;
  const rates = configured.rates ?? defaultRates(route);
  const { upstream } = settings;
  if (configured.gguf) {
    return {
      engine: local(configured.gguf),
      kind: "gguf",
      model: configured.model ?? path.basename(configured.gguf).replace(/\.gguf$/i, ""),
      rates,
      settings: `${prefix}GGUF`,
      errors: {
        400: "A prompt longer than the local model's context (context_length_exceeded).",
        502: "The local model failed mid-reply (engine_failed).",
        503: "The local model file is missing or cannot be loaded on this server (model_unavailable), or node-llama-cpp is not installed here (engine_unavailable: the message names the command that installs it).",
      },
    };
  }
  if (upstream && configured.model !== null) {
    const model = configured.model;
    const settingNames = `X402M_INFERENCE_LLM_URL, ${prefix}MODEL, ${prefix}RATES`;
    return {
      engine: lazyEngine(`upstream ${model} at ${new URL(upstream.url).host}`, async () =>
        (await import("./engines/upstream.ts")).upstreamEngine({
          url: upstream.url,
          key: upstream.key,
          model,
          ...(upstream.timeoutMs !== undefined && { timeoutMs: upstream.timeoutMs }),
        }),
      ),
      kind: "upstream",
      model,
      rates,
      settings: settingNames,
      errors: {
        ...providerErrors("upstream model", true, settingNames),
        502: "The upstream model failed, answered something unusable or broke off its reply (upstream_failed, upstream_invalid, engine_failed).",
      },
    };
  }
  if (settings.engine === "offline")
    return {
      engine: offline,
      kind: "offline",
      model: configured.model ?? defaultModel(route),
      rates,
      settings: "X402M_INFERENCE_ENGINE",
    };
  return {
    engine: null,
    kind: null,
    model: configured.model ?? defaultModel(route),
    rates,
    settings: `${upstream ? "" : "X402M_INFERENCE_LLM_URL with "}${prefix}MODEL and ${prefix}RATES for an OpenAI-compatible upstream, ${prefix}GGUF for a local model file, or X402M_INFERENCE_ENGINE=offline for the offline engine (no model)`,
    errors: {
      503: "This route has no engine configured on this server (engine_not_configured: the message names the settings), refused before any payment is asked for.",
    },
  };
}

/**
 * One local engine per model file, however many routes name it: each holds its model and context in
 * memory, and replies take turns on it.
 */
function localEngines(): (file: string) => ChatEngine {
  const engines = new Map<string, ChatEngine>();
  return (file) => {
    let engine = engines.get(file);
    if (!engine) {
      engine = lazyEngine(`local GGUF engine (${file})`, async () =>
        (await import("./engines/gguf.ts")).ggufEngine({ modelPath: file }),
      );
      engines.set(file, engine);
    }
    return engine;
  };
}

export function chatEndpoints(settings: InferenceSettings = OFFLINE_SETTINGS): readonly AnyEndpoint[] {
  const offline = offlineEngine();
  const local = localEngines();
  return ROUTES.flatMap((route) => {
    const served = routeEngine(route, settings, offline, local);
    return [
      chatEndpoint(route, served),
      ...(route.uptoPrice !== null ? [chatEndpoint(route, served, true)] : []),
    ];
  });
}

/** One entry of `GET /v1/models`: OpenAI's model object, and what the route charges and allows. */
export function modelEntry(route: Tier, served: RouteEngine) {
  const { limits } = route;
  return {
    id: served.model,
    object: "model" as const,
    created: 0,
    owned_by: "x402-merchants",
    tier: route.number,
    alias: route.alias,
    path: chatPath(route),
    price_usd: route.price,
    upto: route.uptoPrice === null ? null : uptoEntry(route, served, route.uptoPrice),
    rates: {
      input_usd_per_million_tokens: served.rates.inputPerMillion,
      output_usd_per_million_tokens: served.rates.outputPerMillion,
    },
    limits: {
      max_tokens: limits.maxTokens,
      input_characters: limits.inputCharacters,
      message_characters: limits.messageCharacters ?? null,
      reasoning_tokens_count_as_output: limits.reasoningCountsAsOutput === true,
    },
    constraints: route.stated,
    engine: served.kind,
    available: served.engine !== null,
  };
}

/**
 * A metered route's maximum and what it covers at the route's rates, so a buyer sees that the maximum is the
 * rates times the largest call the route takes (metering.ts).
 */
function uptoEntry(route: Tier, served: RouteEngine, max: PriceUsd) {
  const covers = meteredCoverage(served.rates, priceToAtomic(max, USDC_DECIMALS), route.limits.maxTokens);
  return {
    path: chatPath(route, true),
    max_price_usd: max,
    covers: {
      max_tokens: covers.outputTokens,
      prompt_tokens: covers.at.promptTokens,
      at_max_tokens: covers.at.maxTokens,
    },
  };
}

export function modelsRoute(settings: InferenceSettings = OFFLINE_SETTINGS): FreeRoute {
  const offline = offlineEngine();
  const list = {
    object: "list" as const,
    data: ROUTES.map((route) => modelEntry(route, routeEngine(route, settings, offline))),
  };
  return {
    method: "GET",
    path: "/v1/models",
    description:
      "The routes and what serves them (free): per route its tier, alias, model, per-call and /upto prices, per-token rates and limits.",
    example: { object: "list", data: list.data.slice(0, 2) },
    handler: () => Response.json(list),
  };
}

export interface InferenceHost {
  payTo: `0x${string}`;
  publicUrl: string;
}

/**
 * The inference merchant: the chat routes and `/v1/models`, and the audio routes (audio/catalogue.ts) on
 * the engines `settings` and this machine give, or on `audio` when given (tests).
 */
export function inferenceMerchant(
  host: InferenceHost,
  settings: InferenceSettings,
  audio: AudioServices = audioServices(settings.audio),
): Merchant {
  return {
    name: "inference",
    title: INFERENCE_TITLE,
    guidance: INFERENCE_GUIDANCE,
    payTo: host.payTo,
    publicUrl: host.publicUrl,
    endpoints: [...chatEndpoints(settings), ...audioEndpoints(audio)],
    free: [modelsRoute(settings), ...audioFreeRoutes(audio)],
    // Every engine counts tokens (the offline one, and an upstream that reports no usage). A GGUF model is
    // not loaded ahead: its memory is the operator's to spend on the first call that needs it.
    warm: async () => {
      // Said at start, not at the first paying call: the one optional package a GGUF route needs.
      if (Object.values(settings.routes).some((route) => route.gguf))
        (await import("./engines/gguf.ts")).warnIfNotInstalled(settings.routes);
      (await import("./tokens.ts")).countTokens("");
    },
  };
}
