/**
 * `POST /v1/audio/speech` (docs/audio.md): OpenAI's speech request (`model`, `input`, `voice`,
 * `response_format`, `speed`), answered with the audio itself, MP3 by default. At most 3,000 characters.
 * Paid with `exact` at the listed 0.018, or with `upto` at that maximum, charged 0.000006 a character
 * (metering.ts).
 *
 * Everything that can be known before the engine runs is checked before payment: the text's length and
 * that it has something to speak, the voice (a catalogue id, or one of OpenAI's names), whether the
 * voice's engine can run here (else a 503 naming the command that installs the speech programs), and
 * whether it can answer in the format asked for.
 */
import { z } from "zod";
import { BadInputError } from "../../../common/errors.ts";
import {
  defineEndpoint,
  type HandlerContext,
  precheckOf,
  priceToAtomic,
} from "../../../merchant-kit/index.ts";
import { CONTENT_TYPES } from "./encode.ts";
import type { SpeechFormat } from "./engine.ts";
import { audioEngineErrors, engineCall } from "./engine-call.ts";
import {
  characterCount,
  MAX_SPEECH_CHARACTERS,
  SPEECH_RATE_PER_CHARACTER,
  speechAmount,
} from "./metering.ts";
import type { AudioServices } from "./services.ts";
import type { ResolvedVoice } from "./voices.ts";

export const SPEECH_PATH = "/v1/audio/speech";
export const SPEECH_PRICE = "0.018";
const FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const satisfies readonly SpeechFormat[];

export const SpeechInput = z.object({
  model: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe("Accepted for OpenAI clients (`tts-1`, ...); the server's configured model answers."),
  input: z
    .string()
    .min(1)
    .meta({ maxLength: MAX_SPEECH_CHARACTERS })
    .superRefine((text, ctx) => {
      const count = characterCount(text);
      if (count > MAX_SPEECH_CHARACTERS)
        ctx.addIssue({
          code: "custom",
          message: `at most ${MAX_SPEECH_CHARACTERS} characters, not ${count}`,
        });
      else if (!/[\p{L}\p{N}]/u.test(text))
        ctx.addIssue({ code: "custom", message: "has no letter or digit to speak" });
    })
    .describe(`The text to speak: at most ${MAX_SPEECH_CHARACTERS} characters (Unicode code points).`),
  voice: z
    .string()
    .min(1)
    .max(128)
    .default("alloy")
    .describe(
      "A voice id from GET /v1/audio/voices (e.g. `flite:slt`, `espeak-ng:fr-fr`), or one of OpenAI's names (`alloy`, `echo`, ...), spoken by the upstream when one is configured, else by an offline voice (docs/audio.md).",
    ),
  response_format: z
    .enum(FORMATS)
    .default("mp3")
    .describe("mp3 (audio/mpeg) by default; the formats a voice's engine can make are listed with it."),
  speed: z.number().min(0.25).max(4).default(1).describe("0.25 to 4; 1 is the voice's normal pace."),
  stream_format: z
    .literal("audio", { error: 'only "audio" is supported: the audio is sent whole' })
    .optional(),
});

type SpeechBody = z.output<typeof SpeechInput>;

/** The voice's engine, ready to speak this request, or the refusal (never charged). */
async function prepare(body: SpeechBody, audio: AudioServices): Promise<ResolvedVoice> {
  // A voice whose engine cannot run here is a 503 naming the route's install command (voices.ts).
  const resolved = await audio.voices.resolve(body.voice);
  if (!resolved.engine.formats.includes(body.response_format))
    throw new BadInputError(
      `the voice ${resolved.id} can answer in ${resolved.engine.formats.join(", ")}, not ${body.response_format}`,
      "unsupported_response_format",
      "response_format",
    );
  return resolved;
}

export function speechEndpoint(audio: AudioServices) {
  return defineEndpoint({
    method: "POST",
    path: SPEECH_PATH,
    price: SPEECH_PRICE,
    scheme: ["exact", "upto", "batch-settlement"],
    errorDialect: "openai",
    ...(audio.upstreamSpeech && { effects: ["upstream" as const] }),
    description: `Text to speech in OpenAI's dialect (model, input, voice, response_format, speed): the audio, MP3 by default; voices from GET /v1/audio/voices. At most ${MAX_SPEECH_CHARACTERS} characters; exact pays ${SPEECH_PRICE}, upto or a payment channel ${SPEECH_RATE_PER_CHARACTER} a character.`,
    input: SpeechInput,
    output: z.string().describe("The audio's bytes, of the content type asked for."),
    outputMedia: FORMATS.map((format) => CONTENT_TYPES[format]),
    example: {
      input: { model: "tts-1", input: "Hello from the inference API.", voice: "alloy" },
      output: "<audio/mpeg bytes>",
    },
    timeoutMs: 120_000,
    maxBodyBytes: 64 * 1024,
    precheck: precheckOf((body) => prepare(body, audio)),
    errors: {
      400: "A voice this server does not have, or a response_format its engine cannot make (voice_not_found, unsupported_response_format), before any payment is asked for.",
      ...audioEngineErrors("speech", audio.upstreamSpeech),
    },
    handler: (body, ctx) => speak(body, ctx, audio),
  });
}

async function speak(body: SpeechBody, ctx: HandlerContext, audio: AudioServices): Promise<Response> {
  const { engine, voice } = await prepare(body, audio);
  const request = {
    text: body.input,
    voice,
    format: body.response_format,
    speed: body.speed,
    ...(body.model !== undefined && { model: body.model }),
  };
  const spoken = await audio.speechTurn(engine, ctx.signal, () =>
    engineCall(engine, ctx.signal, () => engine.speak(request, ctx.signal)),
  );
  if (ctx.meter) {
    const decimals = ctx.services.config.payments.asset.decimals;
    ctx.meter(speechAmount(body.input, decimals, priceToAtomic(SPEECH_PRICE, decimals)));
  }
  // Response takes a view of an ArrayBuffer only; engines' buffers may be shared ones (Node's pool).
  return new Response(new Uint8Array(spoken.audio), {
    headers: { "content-type": spoken.contentType, "content-length": String(spoken.audio.byteLength) },
  });
}
