/**
 * From the WAV an offline engine writes to the format the caller asked for (OpenAI's `response_format`):
 *
 * | format | made by | answer |
 * |---|---|---|
 * | `mp3` (OpenAI's default) | `lame` (LGPL: run as its own process) | MPEG-2 Layer III, 24 kHz mono, 64 kbit/s, `audio/mpeg` |
 * | `wav` | nothing: the engine's own | 16-bit PCM at the engine's rate (8, 16 or 22.05 kHz), `audio/wav` |
 * | `flac` | `sox` | lossless, at the engine's rate, `audio/flac` |
 * | `pcm` | `sox` | raw 16-bit little-endian mono at 24 kHz (as OpenAI's `pcm`), `audio/pcm` |
 *
 * `opus` and `aac` need an encoder Debian's sox lacks (and no npm package with a fitting licence makes
 * them), so offline engines do not offer them; an upstream may. MP3 is resampled to 24 kHz, OpenAI's rate,
 * because 8 kHz MP3 (MPEG 2.5) is an extension some players refuse.
 */
import { UpstreamError } from "../../../common/errors.ts";
import type { SpeechAudio, SpeechFormat } from "./engine.ts";
import { DEFAULT_PROGRAM_MAX_BYTES, findProgram, type ProgramSpec, runProgram } from "./program.ts";

/** The sample rate of `pcm` answers: OpenAI's, since raw samples carry no header to say it. */
export const PCM_SAMPLE_RATE = 24_000;

/** sox's options for OpenAI's `pcm`: raw signed 16-bit little-endian mono samples at 24 kHz. */
const RAW_PCM_OUTPUT = ["--type=raw", `--rate=${PCM_SAMPLE_RATE}`, "--bits=16", "--channels=1"];

export const CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
  flac: "audio/flac",
  pcm: "audio/pcm",
  opus: "audio/ogg; codecs=opus",
  aac: "audio/aac",
};

/** Where the encoders are: a name on the PATH or an absolute path (tests point these at nothing). */
export interface EncoderPrograms {
  lame: string;
  sox: string;
}

export const DEFAULT_ENCODERS: EncoderPrograms = { lame: "lame", sox: "sox" };

/** The Debian packages of the encoders: lame for MP3 (OpenAI's default), sox for FLAC, PCM and slow speech. */
export const ENCODER_PACKAGES = ["lame", "sox"] as const;

export interface EncodeOptions {
  programs?: Partial<EncoderPrograms>;
  timeoutMs?: number;
  /** Cap of the encoded answer. */
  maxBytes?: number;
  signal?: AbortSignal;
}

/** The program each format needs besides the engine (none for WAV). */
export function encoderFor(format: SpeechFormat, programs: EncoderPrograms): ProgramSpec | null {
  if (format === "mp3") return { command: programs.lame, debianPackage: "lame" };
  if (format === "flac" || format === "pcm") return { command: programs.sox, debianPackage: "sox" };
  return null;
}

/**
 * The formats an offline engine can answer in on this machine, in OpenAI's order: those whose encoder is
 * installed. Never `opus` or `aac` (see the module's comment).
 */
export function offlineFormats(programs: EncoderPrograms): SpeechFormat[] {
  const formats: SpeechFormat[] = ["mp3", "wav", "flac", "pcm"];
  return formats.filter((format) => {
    const encoder = encoderFor(format, programs);
    return encoder === null || findProgram(encoder.command) !== null;
  });
}

/**
 * Encodes an engine's WAV into `format`.
 *
 * @example
 * const { audio, contentType } = await encode(wav, "mp3", { signal });
 */
export async function encode(
  wav: Uint8Array,
  format: SpeechFormat,
  options: EncodeOptions = {},
): Promise<SpeechAudio> {
  const programs = { ...DEFAULT_ENCODERS, ...options.programs };
  const info = wavInfo(wav);
  const run = (program: string, args: string[], label: string) =>
    runProgram({
      program,
      args,
      stdin: wav,
      label,
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes ?? DEFAULT_PROGRAM_MAX_BYTES,
      signal: options.signal,
    }).then((result) => new Uint8Array(result.stdout));
  let audio: Uint8Array;
  switch (format) {
    case "wav":
      audio = normalizeWav(wav, info);
      break;
    case "mp3":
      // `-` `-`: WAV on stdin, MP3 on stdout. `-q 7`: a third faster than lame's default on 3,000
      // characters of speech (0.46 s against 0.68 s here), with no difference a listener of speech hears.
      audio = await run(
        programs.lame,
        ["--quiet", "-m", "m", "-b", "64", "--resample", "24", "-q", "7", "-", "-"],
        "lame (mp3)",
      );
      break;
    case "flac":
      audio = await run(programs.sox, ["-q", "-t", "wav", "-", "-t", "flac", "-"], "sox (flac)");
      break;
    case "pcm":
      audio = await run(
        programs.sox,
        ["-q", "--type=wav", "-", ...RAW_PCM_OUTPUT, "--encoding=signed-integer", "--endian=little", "-"],
        "sox (pcm)",
      );
      break;
    default:
      throw new UpstreamError(`no encoder for ${format} on this server`, "engine_format_unsupported");
  }
  if (audio.byteLength === 0) throw new UpstreamError(`the ${format} encoder wrote nothing`, "engine_failed");
  return { audio, contentType: CONTENT_TYPES[format] };
}

/**
 * Makes speech slower or faster without changing its pitch (sox's `tempo`): `factor` 2 halves the
 * duration, 0.5 doubles it. For engines whose own rate option stops short of OpenAI's 0.25-4 range.
 */
export async function changeTempo(
  wav: Uint8Array,
  factor: number,
  options: Omit<EncodeOptions, "programs"> & { sox?: string } = {},
): Promise<Uint8Array> {
  const { stdout } = await runProgram({
    program: options.sox ?? DEFAULT_ENCODERS.sox,
    args: ["-q", "-t", "wav", "-", "-t", "wav", "-", "tempo", "-s", factor.toFixed(4)],
    stdin: wav,
    label: "sox (tempo)",
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes ?? DEFAULT_PROGRAM_MAX_BYTES,
    signal: options.signal,
  });
  return new Uint8Array(stdout);
}

/** What a WAV's header and data say about it. */
export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Where the samples start and how many bytes they are (the bytes present, if the header claims more). */
  dataOffset: number;
  dataBytes: number;
  /** From the bytes of samples present, not from a size the header claims. */
  durationSeconds: number;
}

/**
 * Reads a PCM WAV's `fmt ` and `data` chunks. A header written to a pipe (sizes unknown, 0 or 0xFFFFFFFF)
 * is read up to the end of the bytes present. Throws an `UpstreamError` for anything else: this reads an
 * engine's output, and an engine that wrote no WAV failed.
 */
export function wavInfo(bytes: Uint8Array): WavInfo {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.byteLength < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE")
    throw new UpstreamError("the speech engine wrote no WAV audio", "engine_failed");
  let format: Omit<WavInfo, "dataOffset" | "dataBytes" | "durationSeconds"> | undefined;
  for (let at = 12; at + 8 <= bytes.byteLength; ) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === "fmt " && size >= 16 && body + 16 <= bytes.byteLength) {
      const encoding = view.getUint16(body, true);
      // 1: integer PCM; 0xFFFE: WAVE_FORMAT_EXTENSIBLE, which programs use for the same samples.
      if (encoding !== 1 && encoding !== 0xfffe)
        throw new UpstreamError(`the speech engine wrote WAV encoding ${encoding}, not PCM`, "engine_failed");
      format = {
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bitsPerSample: view.getUint16(body + 14, true),
      };
    } else if (id === "data") {
      if (!format || format.channels === 0 || format.sampleRate === 0 || format.bitsPerSample === 0)
        throw new UpstreamError("the speech engine wrote a WAV without a usable format", "engine_failed");
      const present = bytes.byteLength - body;
      const dataBytes = size === 0 || size > present ? present : size;
      const frame = format.channels * Math.ceil(format.bitsPerSample / 8);
      return {
        ...format,
        dataOffset: body,
        dataBytes,
        durationSeconds: Math.floor(dataBytes / frame) / format.sampleRate,
      };
    }
    at = body + size + (size % 2);
  }
  throw new UpstreamError("the speech engine wrote a WAV without samples", "engine_failed");
}

/** A canonical 44-byte-header WAV of the same samples: sizes filled in, extra chunks dropped. */
function normalizeWav(wav: Uint8Array, info: WavInfo): Uint8Array {
  const out = new Uint8Array(44 + info.dataBytes);
  const view = new DataView(out.buffer);
  const ascii = (at: number, text: string) => out.set(Buffer.from(text, "latin1"), at);
  const blockAlign = info.channels * Math.ceil(info.bitsPerSample / 8);
  ascii(0, "RIFF");
  view.setUint32(4, 36 + info.dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, info.channels, true);
  view.setUint32(24, info.sampleRate, true);
  view.setUint32(28, info.sampleRate * blockAlign, true);
  view.setUint16(32, blockAlign, true);
  view.setUint16(34, info.bitsPerSample, true);
  ascii(36, "data");
  view.setUint32(40, info.dataBytes, true);
  out.set(wav.subarray(info.dataOffset, info.dataOffset + info.dataBytes), 44);
  return out;
}
