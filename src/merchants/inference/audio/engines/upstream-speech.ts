/**
 * An OpenAI-compatible speech upstream (OpenAI itself, Kokoro-FastAPI, openedai-speech, any
 * `POST /v1/audio/speech`): `{model, input, voice, response_format, speed}` with `Authorization: Bearer`,
 * answered with the audio bytes and their content type. Calls go through the providers' `upstreamFetch`
 * (time limit, no redirects, a 429 becomes a 503 with Retry-After, the key never in a message), and the
 * audio is read up to a size cap; every failure is an `UpstreamError`, never charged.
 *
 * Voices: the provider's own list when it has one (`GET {url}/audio/voices`, as Kokoro-FastAPI and other
 * OpenAI-compatible servers expose it: `{"voices": ["af_bella", ...]}`, `{"voices": [{id, name, ...}]}`
 * or `{"data": [{id}]}`), else OpenAI's documented voices (OpenAI has no list endpoint). Ids are
 * `upstream:<name>`; gender and languages only where the provider says them (or the operator configured
 * the languages its voices speak).
 */
import { UpstreamError } from "../../../../common/errors.ts";
import { failure, readBytes, upstreamFetch, upstreamJson } from "../../../../merchant-kit/index.ts";
import { CONTENT_TYPES } from "../encode.ts";
import type {
  Availability,
  SpeechAudio,
  SpeechEngine,
  SpeechFormat,
  SpeechRequest,
  Voice,
} from "../engine.ts";
import { languageTag, OPENAI_VOICES } from "../voices.ts";

export interface UpstreamSpeechSettings {
  /** Base URL as the OpenAI SDK takes it (`https://api.openai.com/v1`): we add `/audio/speech`. */
  url: string;
  /** Sent as `Authorization: Bearer`; empty for a local server without keys. */
  key: string;
  /** The model every call uses (`gpt-4o-mini-tts`, `tts-1`, `kokoro`); else the caller's, else `tts-1`. */
  model?: string;
  /** Default 60 s: a long text takes the provider a while. */
  timeoutMs?: number;
  /** Cap of one answer, default 32 MB (3,000 characters of 24 kHz WAV are about 10 MB). */
  maxBytes?: number;
  /** BCP 47 tags the provider's voices speak, when its list does not say (OpenAI's voices speak many). */
  languages?: string[];
  /** The formats it answers in, default OpenAI's six. */
  formats?: SpeechFormat[];
  /** How long a voice list is kept, default 10 minutes. */
  voicesTtlMs?: number;
}

export const DEFAULT_UPSTREAM_SPEECH_TIMEOUT_MS = 60_000;
export const DEFAULT_UPSTREAM_SPEECH_MAX_BYTES = 32 * 1024 * 1024;
const ALL_FORMATS: readonly SpeechFormat[] = ["mp3", "opus", "aac", "flac", "wav", "pcm"];
/** A failed list is retried after this long rather than kept for the full TTL. */
const FAILED_LIST_TTL_MS = 60_000;

/**
 * The upstream speech engine.
 *
 * @example
 * const engine = upstreamSpeechEngine({ url: "https://api.openai.com/v1", key, model: "gpt-4o-mini-tts" });
 * const { audio, contentType } = await engine.speak(
 *   { text: "Hello.", voice: "alloy", format: "mp3", speed: 1 }, AbortSignal.timeout(60_000));
 */
export function upstreamSpeechEngine(settings: UpstreamSpeechSettings): SpeechEngine {
  const base = settings.url.replace(/\/+$/, "");
  const provider = `speech provider at ${new URL(base).host}`;
  const headers: Record<string, string> = settings.key ? { authorization: `Bearer ${settings.key}` } : {};
  const maxBytes = settings.maxBytes ?? DEFAULT_UPSTREAM_SPEECH_MAX_BYTES;
  const timeoutMs = settings.timeoutMs ?? DEFAULT_UPSTREAM_SPEECH_TIMEOUT_MS;
  const ttl = settings.voicesTtlMs ?? 10 * 60_000;
  let cached: { voices: Voice[]; until: number } | undefined;

  return {
    name: "upstream",
    formats: settings.formats ?? ALL_FORMATS,
    async available(): Promise<Availability> {
      // Configured is all we can know without spending the provider's quota; a failing call says the rest.
      return { ok: true };
    },
    async voices(): Promise<Voice[]> {
      if (cached && cached.until > Date.now()) return cached.voices;
      let voices: Voice[] | null = null;
      try {
        const body = await upstreamJson({
          provider,
          url: `${base}/audio/voices`,
          headers,
          timeoutMs: Math.min(timeoutMs, 10_000),
          maxBytes: 2 * 1024 * 1024,
        });
        voices = parseVoiceList(body, settings.languages ?? []);
      } catch {
        // No list (OpenAI has none: a 404), or not now: OpenAI's voices, and ask again soon.
      }
      const found = voices !== null && voices.length > 0;
      cached = {
        voices: found ? (voices as Voice[]) : openaiVoices(settings.languages ?? []),
        until: Date.now() + (found ? ttl : FAILED_LIST_TTL_MS),
      };
      return cached.voices;
    },
    async speak(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio> {
      const call = {
        provider,
        url: `${base}/audio/speech`,
        headers: { ...headers, accept: "*/*" },
        json: {
          model: settings.model ?? request.model ?? "tts-1",
          input: request.text,
          voice: request.voice,
          response_format: request.format,
          speed: request.speed,
        },
        timeoutMs,
        signal,
      };
      const { response, signal: combined } = await upstreamFetch(call);
      const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
      const audio = await readBytes(response, maxBytes, call).catch((error: unknown) => {
        throw failure(call, error, combined, timeoutMs);
      });
      // A 200 carrying JSON or text is an error page from a gateway, not audio.
      if (type.startsWith("application/json") || type.startsWith("text/"))
        throw new UpstreamError(`the ${provider} answered ${type} instead of audio`, "upstream_invalid");
      if (audio.byteLength === 0)
        throw new UpstreamError(`the ${provider} answered no audio`, "upstream_invalid");
      const contentType = response.headers.get("content-type") ?? CONTENT_TYPES[request.format];
      return {
        audio,
        contentType: contentType.startsWith("audio/") ? contentType : CONTENT_TYPES[request.format],
      };
    },
  };
}

/** OpenAI's voices as catalogue entries: no gender (OpenAI publishes none). */
export function openaiVoices(languages: readonly string[] = []): Voice[] {
  return OPENAI_VOICES.map((name) => ({
    id: `upstream:${name}`,
    name,
    provider: "upstream",
    languages: [...languages],
    gender: null,
  }));
}

/**
 * Reads a provider's voice list in the shapes OpenAI-compatible servers answer: `{"voices": [...]}`,
 * `{"data": [...]}` or a bare array, each item a name or an object with `id`/`voice_id`/`name` and, when
 * the provider says them, `gender` and `language`/`languages`/`locale`. Null when the body is none of these.
 */
export function parseVoiceList(body: unknown, languages: readonly string[] = []): Voice[] | null {
  const record = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  const items = Array.isArray(body) ? body : (record.voices ?? record.data);
  if (!Array.isArray(items)) return null;
  const voices = new Map<string, Voice>();
  for (const item of items) {
    const entry = typeof item === "object" && item !== null ? (item as Record<string, unknown>) : {};
    const id = [item, entry.id, entry.voice_id, entry.name].find(
      (value): value is string => typeof value === "string" && value.length > 0 && value.length <= 200,
    );
    if (!id || voices.has(id)) continue;
    const said = [entry.languages, entry.language, entry.locale]
      .flat()
      .filter(
        (tag): tag is string => typeof tag === "string" && /^[a-z]{2,3}([-_][a-z0-9]{1,8})*$/i.test(tag),
      )
      .map(languageTag);
    voices.set(id, {
      id: `upstream:${id}`,
      name: typeof entry.name === "string" && entry.name ? entry.name : id,
      provider: "upstream",
      languages: said.length > 0 ? [...new Set(said)] : [...languages],
      gender: gender(entry.gender),
    });
  }
  return [...voices.values()];
}

function gender(value: unknown): Voice["gender"] {
  const said = typeof value === "string" ? value.trim().toLowerCase() : "";
  if (said === "female" || said === "f") return "female";
  if (said === "male" || said === "m") return "male";
  if (said === "neutral") return "neutral";
  return null;
}
