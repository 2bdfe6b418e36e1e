/**
 * The inference API's audio part (docs/audio.md): `POST /v1/audio/speech`, `POST /v1/audio/transcriptions` and
 * the free `GET /v1/audio/voices`, over the engines the operator's settings and this machine give:
 *
 * - speech: an OpenAI-compatible upstream when configured (X402M_INFERENCE_AUDIO_URL), then Debian's
 *   flite and espeak-ng, each voice spoken by its own engine (voices.ts);
 * - transcription: the upstream when configured (every language it knows), else Debian's pocketsphinx
 *   (English).
 *
 * The offline programs are looked for, not required: a machine without them serves the routes, which
 * answer 503 with the one command that installs every program of the route, before any payment.
 */
import type { AnyEndpoint, FreeRoute } from "../../../merchant-kit/index.ts";
import type { AudioSettings } from "../settings.ts";
import type { SpeechEngine, TranscriptionEngine } from "./engine.ts";
import { espeakEngine } from "./engines/espeak.ts";
import { fliteEngine } from "./engines/flite.ts";
import { pocketsphinxEngine } from "./engines/pocketsphinx.ts";
import { upstreamSpeechEngine } from "./engines/upstream-speech.ts";
import { upstreamTranscriptionEngine } from "./engines/upstream-transcription.ts";
import { turns } from "./program.ts";
import type { AudioServices } from "./services.ts";
import { speechEndpoint } from "./speech.ts";
import { transcriptionsEndpoint } from "./transcriptions.ts";
import { voiceCatalogue } from "./voices.ts";
import { voicesRoute } from "./voices-route.ts";

/** Offline speech runs at once on this host (one per core of the 2-core machines it is built for). */
const OFFLINE_SPEECH_RUNS = 2;

/** The engines `settings` and this machine give, or those given (tests). */
export function audioServices(
  settings: AudioSettings,
  engines: { speech?: readonly SpeechEngine[]; transcription?: TranscriptionEngine } = {},
): AudioServices {
  const { upstream } = settings;
  const common = upstream && {
    url: upstream.url,
    key: upstream.key,
    ...(upstream.timeoutMs !== undefined && { timeoutMs: upstream.timeoutMs }),
  };
  const speechEngines = engines.speech ?? [
    ...(common ? [upstreamSpeechEngine({ ...common, model: settings.speechModel })] : []),
    fliteEngine(),
    espeakEngine(),
  ];
  const transcription =
    engines.transcription ??
    (common
      ? upstreamTranscriptionEngine({ ...common, model: settings.transcriptionModel })
      : pocketsphinxEngine());
  const offline = turns(OFFLINE_SPEECH_RUNS);
  return {
    speechEngines,
    voices: voiceCatalogue(speechEngines),
    transcription,
    upstreamSpeech: speechEngines.some((engine) => engine.name === "upstream"),
    upstreamTranscription: transcription.name === "upstream",
    speechTurn: (engine, signal, task) => (engine.name === "upstream" ? task() : offline(signal, task)),
  };
}

export function audioEndpoints(audio: AudioServices): readonly AnyEndpoint[] {
  return [speechEndpoint(audio), transcriptionsEndpoint(audio)];
}

export function audioFreeRoutes(audio: AudioServices): readonly FreeRoute[] {
  return [voicesRoute(audio)];
}
