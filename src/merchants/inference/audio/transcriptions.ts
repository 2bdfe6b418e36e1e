/**
 * `POST /v1/audio/transcriptions` (docs/audio.md): OpenAI's multipart request (`file`, `model`, `language`,
 * `prompt`, `response_format` json|text|srt|vtt|verbose_json, `temperature`, `timestamp_granularities`),
 * WAV or MP3, at most 5 minutes and 12 MB. Paid with `exact` at the listed 0.015, or with `upto` at that
 * maximum, charged 0.003 a minute of audio (metering.ts).
 *
 * The upload is read before payment: its container, rate and duration come from its own bytes (probe.ts:
 * WAV samples present, MP3 frames counted), never from what it claims; a file whose declared type or name
 * says another format is refused, as is one too long, a language the engine cannot transcribe, audio the
 * engine's decoder is known from the bytes not to read, or an engine that cannot run here (503 with the
 * command that installs the transcription programs).
 */
import { z } from "zod";
import { BadInputError } from "../../../common/errors.ts";
import {
  defineEndpoint,
  type HandlerContext,
  precheckOf,
  priceToAtomic,
} from "../../../merchant-kit/index.ts";
import type { AudioInfo } from "./engine.ts";
import { audioEngineErrors, engineCall, engineUnavailable } from "./engine-call.ts";
import { MAX_TRANSCRIPTION_SECONDS, TRANSCRIPTION_RATE_PER_MINUTE, transcriptionAmount } from "./metering.ts";
import { AUDIO_ERRORS, assertDeclaredTypeAgrees, probeAudio } from "./probe.ts";
import type { AudioServices } from "./services.ts";
import { formatTranscript, TRANSCRIPT_FORMATS } from "./transcript-format.ts";

export const TRANSCRIPTIONS_PATH = "/v1/audio/transcriptions";
export const TRANSCRIPTIONS_PRICE = "0.015";
/** Spec 4.5 and 8: "12 MB", read as 12 MiB, the larger reading (a caller is never refused below it). */
export const MAX_UPLOAD_BYTES = 12 * 1024 * 1024;

/** A form field sent once arrives as a value, sent as `name[]` or twice as a list: both are a list here. */
const asList = (value: unknown) => (value === undefined || Array.isArray(value) ? value : [value]);

export const TranscriptionInput = z.object({
  file: z
    .file()
    .max(MAX_UPLOAD_BYTES, `at most ${MAX_UPLOAD_BYTES} bytes (12 MB)`)
    .describe("The audio: WAV or MP3, at most 12 MB and 5 minutes."),
  model: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe("Accepted for OpenAI clients (`whisper-1`, ...); the server's configured engine answers."),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$/, "an ISO 639-1 code such as en")
    .optional()
    .describe("ISO 639-1 code of the spoken language (`en`); the offline engine knows English only."),
  prompt: z.string().max(4_096).optional().describe("Passed to an upstream; the offline engine ignores it."),
  response_format: z.enum(TRANSCRIPT_FORMATS).default("json"),
  temperature: z.coerce.number().min(0).max(1).optional(),
  timestamp_granularities: z
    .preprocess(asList, z.array(z.enum(["word", "segment"])).max(2))
    .optional()
    .describe("`segment` (the default) and/or `word`: with response_format verbose_json only."),
  stream: z.enum(["false"], { error: "streaming is not supported: the transcript is sent whole" }).optional(),
});

type TranscriptionBody = z.output<typeof TranscriptionInput>;

interface Upload {
  bytes: Uint8Array;
  info: AudioInfo;
}

/** The upload read and checked, or the refusal (never charged). */
async function prepare(body: TranscriptionBody, audio: AudioServices): Promise<Upload> {
  const bytes = new Uint8Array(await body.file.arrayBuffer());
  const info = probeAudio(bytes);
  assertDeclaredTypeAgrees(info, { contentType: body.file.type, filename: body.file.name });
  if (info.durationSeconds > MAX_TRANSCRIPTION_SECONDS)
    throw new BadInputError(
      `the audio lasts ${info.durationSeconds.toFixed(1)} s; at most ${MAX_TRANSCRIPTION_SECONDS} s (5 minutes)`,
      AUDIO_ERRORS.tooLong,
      "file",
    );
  if (body.timestamp_granularities !== undefined && body.response_format !== "verbose_json")
    throw new BadInputError(
      "timestamp_granularities needs response_format verbose_json",
      "invalid_request",
      "timestamp_granularities",
    );
  const engine = audio.transcription;
  const availability = await engine.available();
  if (!availability.ok) throw engineUnavailable("transcription", engine, availability.reason, [engine]);
  const language = body.language?.toLowerCase().split(/[-_]/)[0];
  if (language !== undefined && engine.languages !== null && !engine.languages.includes(language))
    throw new BadInputError(
      `this server transcribes ${engine.languages.join(", ")}, not ${body.language} (an operator adds languages with an upstream: X402M_INFERENCE_AUDIO_URL)`,
      "unsupported_language",
      "language",
    );
  engine.checkAudio?.(bytes, info);
  return { bytes, info };
}

export function transcriptionsEndpoint(audio: AudioServices) {
  return defineEndpoint({
    method: "POST",
    path: TRANSCRIPTIONS_PATH,
    price: TRANSCRIPTIONS_PRICE,
    scheme: ["exact", "upto", "batch-settlement"],
    body: "multipart",
    errorDialect: "openai",
    ...(audio.upstreamTranscription && { effects: ["upstream" as const] }),
    description: `Speech to text in OpenAI's dialect (multipart: file, model, language, response_format json|text|srt|vtt|verbose_json with segment times and duration). WAV or MP3, at most 5 minutes and 12 MB; exact pays ${TRANSCRIPTIONS_PRICE}, upto or a payment channel ${TRANSCRIPTION_RATE_PER_MINUTE} a minute.`,
    input: TranscriptionInput,
    output: z.object({ text: z.string() }),
    outputMedia: ["application/json", "text/plain", "text/vtt"],
    example: {
      input: {
        file: new File([new Uint8Array(44)], "speech.wav", { type: "audio/wav" }),
        model: "whisper-1",
        response_format: "json",
      },
      output: { text: "hello from the inference api" },
    },
    timeoutMs: 180_000,
    // The form's boundaries and other fields around the largest file.
    maxBodyBytes: MAX_UPLOAD_BYTES + 64 * 1024,
    precheck: precheckOf((body) => prepare(body, audio)),
    errors: {
      400: "A file that is not WAV or MP3 audio this server reads, or lasts more than 5 minutes, a language it does not transcribe, timestamp_granularities without verbose_json, before any payment is asked for.",
      ...audioEngineErrors("transcription", audio.upstreamTranscription),
    },
    handler: (body, ctx) => transcribe(body, ctx, audio),
  });
}

async function transcribe(
  body: TranscriptionBody,
  ctx: HandlerContext,
  audio: AudioServices,
): Promise<Response> {
  const { bytes, info } = await prepare(body, audio);
  const engine = audio.transcription;
  const transcript = await engineCall(engine, ctx.signal, () =>
    engine.transcribe({
      audio: bytes,
      info,
      ...(body.language !== undefined && { language: body.language }),
      ...(body.prompt !== undefined && { prompt: body.prompt }),
      ...(body.temperature !== undefined && { temperature: body.temperature }),
      ...(body.model !== undefined && { model: body.model }),
      words: body.timestamp_granularities?.includes("word") ?? false,
      signal: ctx.signal,
    }),
  );
  if (ctx.meter) {
    const decimals = ctx.services.config.payments.asset.decimals;
    ctx.meter(
      transcriptionAmount(info.durationSeconds, decimals, priceToAtomic(TRANSCRIPTIONS_PRICE, decimals)),
    );
  }
  const rendered = formatTranscript(transcript, body.response_format);
  return new Response(rendered.body, { headers: { "content-type": rendered.contentType } });
}
