/**
 * What the inference merchant's audio engines offer, behind one interface per job: speech (text to audio,
 * OpenAI's `/v1/audio/speech`), transcription (audio to text, `/v1/audio/transcriptions`), and the voices
 * each speech engine can speak with (`/v1/audio/voices`). Engines are offline programs on this machine
 * (Debian's flite, espeak-ng, lame, pocketsphinx: each its own process) or an OpenAI-compatible upstream.
 */

/**
 * Whether an engine can run here; when not, why (what is missing). The route's 503 adds the command that
 * installs every package its engines list in `packages`.
 */
export type Availability = { ok: true } | { ok: false; reason: string };

export type SpeechFormat = "mp3" | "wav" | "opus" | "flac" | "aac" | "pcm";

/** One voice of the catalogue; `id` is what `/v1/audio/speech` takes as `voice`. */
export interface Voice {
  /** Unique across engines, stable: e.g. `flite:slt`, `espeak-ng:fr-fr`, `upstream:alloy`. */
  id: string;
  name: string;
  /** The engine family that speaks it: `flite`, `espeak-ng`, `upstream`. */
  provider: string;
  /** BCP 47 tags it speaks, most specific first (e.g. `["en-US", "en"]`). */
  languages: string[];
  gender: "female" | "male" | "neutral" | null;
}

export interface SpeechRequest {
  text: string;
  /** A voice id of this engine. */
  voice: string;
  format: SpeechFormat;
  /** 0.25 to 4, 1 normal (OpenAI's range). */
  speed: number;
  /** The model the caller named, passed to an upstream. */
  model?: string;
}

export interface SpeechAudio {
  audio: Uint8Array;
  /** e.g. `audio/mpeg`, `audio/wav`. */
  contentType: string;
}

export interface SpeechEngine {
  /** `flite`, `espeak-ng`, `upstream`. */
  readonly name: string;
  /** The formats it can answer in; a request for another is refused before payment. */
  readonly formats: readonly SpeechFormat[];
  /** The Debian packages of the programs it runs, optional ones included; none for an upstream. */
  readonly packages?: readonly string[];
  available(): Promise<Availability>;
  voices(): Promise<Voice[]>;
  speak(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio>;
}

/** What the kit knows of an uploaded audio file before payment, from its own header and frames. */
export interface AudioInfo {
  container: "wav" | "mp3";
  /** Seconds, computed from the data (frames, samples), not from a length the file claims. */
  durationSeconds: number;
  sampleRate: number;
  channels: number;
}

export interface TranscriptionRequest {
  audio: Uint8Array;
  info: AudioInfo;
  /** ISO 639-1, when the caller named it. */
  language?: string;
  prompt?: string;
  temperature?: number;
  model?: string;
  /** Word times wanted (`timestamp_granularities` includes `word`). */
  words: boolean;
  signal: AbortSignal;
}

export interface TranscriptSegment {
  id: number;
  /** Seconds from the start. */
  start: number;
  end: number;
  text: string;
  /**
   * What a Whisper-like engine says of the segment, when it says it (an upstream's verbose_json): passed on
   * as is. An engine without them leaves them out and `transcript-format.ts` writes its documented defaults.
   */
  seek?: number;
  tokens?: number[];
  temperature?: number;
  /** Mean log-probability of the segment's text (pocketsphinx: of its words' posteriors). */
  avgLogprob?: number;
  compressionRatio?: number;
  noSpeechProb?: number;
}

export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
}

export interface Transcript {
  /** ISO 639-1 or the language's English name, as OpenAI answers (`english`). */
  language: string;
  duration: number;
  text: string;
  segments: TranscriptSegment[];
  words?: TranscriptWord[];
}

export interface TranscriptionEngine {
  /** `pocketsphinx`, `upstream`. */
  readonly name: string;
  /** ISO 639-1 codes it transcribes; null: whatever the upstream does. */
  readonly languages: readonly string[] | null;
  /** The Debian packages of the programs it runs (its model too); none for an upstream. */
  readonly packages?: readonly string[];
  available(): Promise<Availability>;
  /**
   * Refuses (a `BadInputError`, before payment) audio the probe accepted that this engine's decoder is
   * known, from the bytes alone, not to read.
   */
  checkAudio?(audio: Uint8Array, info: AudioInfo): void;
  transcribe(request: TranscriptionRequest): Promise<Transcript>;
}
