/**
 * A `Transcript` written out as OpenAI's `/v1/audio/transcriptions` answers each `response_format`:
 *
 * - `json`: `{"text"}`; `text`: the text and a newline (both what OpenAI sends);
 * - `srt`: numbered cues from 1, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, the segment's text trimmed;
 * - `vtt`: `WEBVTT`, then cues without numbers (as OpenAI writes them), `HH:MM:SS.mmm --> HH:MM:SS.mmm`;
 *   served as `text/vtt`, the type a browser's `<track>` requires;
 * - `verbose_json`: `{task: "transcribe", language, duration, text, segments, words?}`, each segment with
 *   Whisper's ten fields. What an engine does not know is filled with defaults that claim nothing false:
 *   `seek` the segment's start in 10 ms frames (Whisper's unit; there is no 30 s window to point at);
 *   `tokens` `[]` (no Whisper tokens exist); `temperature` 0 (pocketsphinx decodes deterministically);
 *   `avg_logprob` the engine's own (pocketsphinx: its words' posteriors) or 0; `compression_ratio`
 *   computed from the text as Whisper does (its UTF-8 bytes over their zlib-compressed bytes);
 *   `no_speech_prob` 0 (a segment exists only where the engine heard words). `words` appears when the
 *   transcript has word times (the caller asked for `timestamp_granularities[]=word`).
 *
 * Cue text has any `-->` replaced by `->` (as Whisper's writers do): it would end a cue's timing line.
 */
import { deflateSync } from "node:zlib";
import type { Transcript, TranscriptSegment } from "./engine.ts";

export const TRANSCRIPT_FORMATS = ["json", "text", "srt", "vtt", "verbose_json"] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

export interface RenderedTranscript {
  body: string;
  /** `application/json`, `text/plain; charset=utf-8` or `text/vtt; charset=utf-8`. */
  contentType: string;
}

const JSON_TYPE = "application/json";
const TEXT_TYPE = "text/plain; charset=utf-8";

/**
 * Renders a transcript in one of OpenAI's response formats.
 *
 * @example
 * const { body, contentType } = formatTranscript(transcript, "srt");
 * return c.body(body, 200, { "content-type": contentType });
 */
export function formatTranscript(transcript: Transcript, format: TranscriptFormat): RenderedTranscript {
  switch (format) {
    case "json":
      return { body: JSON.stringify({ text: transcript.text }), contentType: JSON_TYPE };
    case "text":
      return { body: `${transcript.text}\n`, contentType: TEXT_TYPE };
    case "srt":
      return {
        body: cues(transcript.segments)
          .map((s, i) => `${i + 1}\n${srtTimestamp(s.start)} --> ${srtTimestamp(s.end)}\n${s.text}\n\n`)
          .join(""),
        contentType: TEXT_TYPE,
      };
    case "vtt":
      return {
        body: `WEBVTT\n\n${cues(transcript.segments)
          .map((s) => `${vttTimestamp(s.start)} --> ${vttTimestamp(s.end)}\n${s.text}\n\n`)
          .join("")}`,
        contentType: "text/vtt; charset=utf-8",
      };
    case "verbose_json":
      return { body: JSON.stringify(verboseJson(transcript)), contentType: JSON_TYPE };
  }
}

/** The segments that have text, their text as a cue holds it. */
function cues(segments: readonly TranscriptSegment[]): TranscriptSegment[] {
  return segments
    .map((s) => ({ ...s, text: s.text.trim().replaceAll("-->", "->") }))
    .filter((s) => s.text !== "");
}

/** OpenAI's verbose_json object (see the module's comment for the defaults). */
export function verboseJson(transcript: Transcript) {
  return {
    task: "transcribe" as const,
    language: transcript.language,
    duration: transcript.duration,
    text: transcript.text,
    segments: transcript.segments.map((s) => ({
      id: s.id,
      seek: s.seek ?? Math.round(s.start * 100),
      start: s.start,
      end: s.end,
      text: s.text,
      tokens: s.tokens ?? [],
      temperature: s.temperature ?? 0,
      avg_logprob: s.avgLogprob ?? 0,
      compression_ratio: s.compressionRatio ?? compressionRatio(s.text),
      no_speech_prob: s.noSpeechProb ?? 0,
    })),
    ...(transcript.words && {
      words: transcript.words.map(({ word, start, end }) => ({ word, start, end })),
    }),
  };
}

/** Whisper's measure of repetition: the text's UTF-8 length over its zlib-compressed length. */
export function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, "utf8");
  return bytes.length / deflateSync(bytes).length;
}

/** Whole milliseconds as `[hours, minutes, seconds, milliseconds]`, hours unbounded. */
function parts(seconds: number): [string, string, string, string] {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return [
    pad(Math.floor(ms / 3_600_000)),
    pad(Math.floor(ms / 60_000) % 60),
    pad(Math.floor(ms / 1000) % 60),
    pad(ms % 1000, 3),
  ];
}

/** `00:01:02,345`: SubRip's timestamp. */
export function srtTimestamp(seconds: number): string {
  const [h, m, s, ms] = parts(seconds);
  return `${h}:${m}:${s},${ms}`;
}

/** `00:01:02.345`: WebVTT's timestamp, hours always written. */
export function vttTimestamp(seconds: number): string {
  const [h, m, s, ms] = parts(seconds);
  return `${h}:${m}:${s}.${ms}`;
}
