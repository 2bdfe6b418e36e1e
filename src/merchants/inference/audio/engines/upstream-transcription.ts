/**
 * An OpenAI-compatible transcription upstream (OpenAI, Groq, a faster-whisper or whisper.cpp server, any
 * `POST {url}/audio/transcriptions`) as a transcription engine: the upload as multipart `file` with the
 * name and type its probed container has (OpenAI reads the format from the name), `model`, `language`,
 * `prompt`, `temperature`, `response_format=verbose_json` and `timestamp_granularities[]` `segment` (and
 * `word` when words are wanted), with `Authorization: Bearer`.
 *
 * The call goes through the provider adapters' `upstreamJson` (src/merchants/utility/providers/upstream.ts):
 * a time limit, a size cap, no redirects, an upstream 429 as a 503 with Retry-After, and every other
 * failure an `UpstreamError` that is never charged. An answer that does not have the verbose_json shape is
 * one too (`upstream_invalid`).
 *
 * Some servers ignore `response_format` and answer `{"text"}` alone: that text becomes one segment
 * spanning the whole file (true, if coarse) rather than a failure. Times are clamped to the probed
 * duration, and the transcript's `duration` is the probed one: the length the call was priced on.
 */
import { z } from "zod";
import { UpstreamError } from "../../../../common/errors.ts";
import { upstreamJson } from "../../../../merchant-kit/index.ts";
import type { Transcript, TranscriptionEngine, TranscriptionRequest, TranscriptSegment } from "../engine.ts";

export interface UpstreamTranscriptionSettings {
  /** Base URL as OpenAI's SDK takes it, e.g. `https://api.openai.com/v1` (we add `/audio/transcriptions`). */
  url: string;
  /** Sent as `Authorization: Bearer`; may be empty for a local server. */
  key: string;
  /** The model every call uses; when absent, the caller's `model`, else `whisper-1`. */
  model?: string;
  /** 120 s by default: five minutes of audio take a Whisper server tens of seconds. */
  timeoutMs?: number;
  /** ISO 639-1 codes the upstream transcribes; null (the default) when it takes whatever it is given. */
  languages?: readonly string[] | null;
}

const finite = z.number().refine(Number.isFinite);
const Segment = z.looseObject({
  start: finite,
  end: finite,
  text: z.string(),
  seek: finite.optional(),
  tokens: z.array(finite).optional(),
  temperature: finite.optional(),
  avg_logprob: finite.optional(),
  compression_ratio: finite.optional(),
  no_speech_prob: finite.optional(),
});
const Word = z.looseObject({ word: z.string(), start: finite, end: finite });
const Body = z.looseObject({
  text: z.string(),
  language: z.string().optional(),
  segments: z.array(Segment).optional(),
  words: z.array(Word).optional(),
});

const FILE = {
  wav: { name: "audio.wav", type: "audio/wav" },
  mp3: { name: "audio.mp3", type: "audio/mpeg" },
} as const;

/**
 * The transcription engine of an OpenAI-compatible upstream.
 *
 * @example
 * const engine = upstreamTranscriptionEngine({ url: "https://api.openai.com/v1", key, model: "whisper-1" });
 * const transcript = await engine.transcribe({ audio, info: probeAudio(audio), words: false, signal });
 */
export function upstreamTranscriptionEngine(settings: UpstreamTranscriptionSettings): TranscriptionEngine {
  const provider = "transcription provider (openai)";
  const url = `${settings.url.replace(/\/+$/, "")}/audio/transcriptions`;
  return {
    name: "upstream",
    languages: settings.languages ?? null,
    async available() {
      return { ok: true };
    },
    async transcribe(request: TranscriptionRequest): Promise<Transcript> {
      const { info } = request;
      const form = new FormData();
      const file = FILE[info.container];
      // Blob takes views of an ArrayBuffer only; a copy is one, whatever buffer the upload sits in.
      form.append("file", new Blob([new Uint8Array(request.audio)], { type: file.type }), file.name);
      form.append("model", settings.model ?? request.model ?? "whisper-1");
      form.append("response_format", "verbose_json");
      form.append("timestamp_granularities[]", "segment");
      if (request.words) form.append("timestamp_granularities[]", "word");
      if (request.language !== undefined) form.append("language", request.language);
      if (request.prompt !== undefined) form.append("prompt", request.prompt);
      if (request.temperature !== undefined) form.append("temperature", String(request.temperature));
      const body = await upstreamJson({
        provider,
        url,
        headers: settings.key ? { authorization: `Bearer ${settings.key}` } : {},
        form,
        timeoutMs: settings.timeoutMs ?? 120_000,
        signal: request.signal,
      });
      const parsed = Body.safeParse(body);
      if (!parsed.success)
        throw new UpstreamError(
          `the ${provider} answered without a transcription (${parsed.error.issues[0]?.path.join(".") || "body"}: ${parsed.error.issues[0]?.message})`,
          "upstream_invalid",
        );
      return transcript(parsed.data, info.durationSeconds, request);
    },
  };
}

/** The upstream's verbose_json as a `Transcript`, its times clamped to the probed duration. */
function transcript(body: z.infer<typeof Body>, duration: number, request: TranscriptionRequest): Transcript {
  const clamp = (t: number) => Math.min(duration, Math.max(0, t));
  const text = body.text.trim();
  const segments: TranscriptSegment[] = body.segments
    ? body.segments.map((s, id) => {
        const start = clamp(s.start);
        return {
          id,
          start,
          end: Math.max(start, clamp(s.end)),
          text: s.text,
          ...(s.seek !== undefined && { seek: s.seek }),
          ...(s.tokens !== undefined && { tokens: s.tokens }),
          ...(s.temperature !== undefined && { temperature: s.temperature }),
          ...(s.avg_logprob !== undefined && { avgLogprob: s.avg_logprob }),
          ...(s.compression_ratio !== undefined && { compressionRatio: s.compression_ratio }),
          ...(s.no_speech_prob !== undefined && { noSpeechProb: s.no_speech_prob }),
        };
      })
    : text
      ? [{ id: 0, start: 0, end: duration, text }]
      : [];
  return {
    language: body.language ?? request.language ?? "unknown",
    duration,
    text,
    segments,
    ...(request.words &&
      body.words && {
        words: body.words.map((w) => {
          const start = clamp(w.start);
          return { word: w.word, start, end: Math.max(start, clamp(w.end)) };
        }),
      }),
  };
}
