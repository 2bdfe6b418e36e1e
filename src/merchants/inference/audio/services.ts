/**
 * What the audio routes run on. A file of its own: catalogue.ts makes it and builds the routes, and the
 * routes (speech.ts, transcriptions.ts, voices-route.ts) read it, so they cannot import it from there.
 */
import type { SpeechEngine, TranscriptionEngine } from "./engine.ts";
import type { VoiceCatalogue } from "./voices.ts";

export interface AudioServices {
  /** The speech engines, in the catalogue's order. */
  speechEngines: readonly SpeechEngine[];
  voices: VoiceCatalogue;
  transcription: TranscriptionEngine;
  /** Costs money outside: the kit reserves the payer's funds before the call runs. */
  upstreamSpeech: boolean;
  upstreamTranscription: boolean;
  /**
   * Runs one speech on `engine`: an offline engine's runs take turns, two at a time (one a core: more at
   * once would each take longer and starve the server); an upstream's run as they come.
   */
  speechTurn<T>(engine: SpeechEngine, signal: AbortSignal, task: () => Promise<T>): Promise<T>;
}
