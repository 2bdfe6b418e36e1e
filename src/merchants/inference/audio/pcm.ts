/**
 * An upload as what a speech recogniser reads: 16 kHz, mono, signed 16-bit samples.
 *
 * WAV is decoded, mixed down and resampled here in JS: its samples are a few lines to read, and no program
 * is then needed for the most common upload. MP3 is decoded by Debian's `lame --decode` (LGPL, run as its
 * own process, already installed for the speech engines) into a WAV on its standard output, which then
 * takes the same path. `sox` was the other candidate: Debian's sox cannot read MP3 without the extra
 * `libsox-fmt-mp3` package, and it would add a second program where JS resampling already does the job.
 */
import { BadInputError } from "../../../common/errors.ts";
import type { AudioInfo } from "./engine.ts";
import { AUDIO_ERRORS, mp3Start, readWav, type WavLayout } from "./probe.ts";
import { installCommand, lastLine, ProgramFailedError, runProgram } from "./program.ts";

/** The sample rate pocketsphinx's English model (and most recognisers) are trained on. */
export const SPEECH_SAMPLE_RATE = 16_000;
/** The apt command that installs the MP3 decoder. */
export const LAME_INSTALL = installCommand(["lame"]);

export interface SpeechPcmOptions {
  signal?: AbortSignal;
  /** Time limit of the MP3 decoder; 60 s by default (5 minutes of MP3 decode in about 1 s here). */
  timeoutMs?: number;
  /** The `lame` executable; `lame` in PATH by default. */
  lame?: string;
}

/**
 * Decodes a probed upload into 16 kHz mono signed 16-bit samples.
 *
 * @throws ProgramFailedError (503 `engine_unavailable`) when an MP3 needs `lame` and it is not installed; BadInputError
 *   `corrupt_audio` when `lame` cannot decode the MP3, or not all of it; ProgramFailedError on its time-out or crash.
 * @example
 * const samples = await toSpeechPcm(bytes, probeAudio(bytes), { signal });
 */
export async function toSpeechPcm(
  bytes: Uint8Array,
  info: AudioInfo,
  options: SpeechPcmOptions = {},
): Promise<Int16Array> {
  const wav = info.container === "wav" ? bytes : await decodeMp3(bytes, info, options);
  const layout = readWav(wav);
  if (!layout) throw new ProgramFailedError("lame", "answered something that is not a WAV");
  if (info.container === "mp3") assertDecodedWhole(layout, info);
  return toInt16(resample(mixDown(wav, layout), layout.sampleRate, SPEECH_SAMPLE_RATE));
}

/**
 * What lame may leave out of an MP3's frames, in samples: the encoder delay and padding a LAME tag declares
 * (12 bits each), its decoder's own delay (528 + 1), and a last partial frame.
 */
const LAME_TRIM_SAMPLES = 2 * 4095 + 529 + 1152;

/**
 * Refuses an MP3 lame stopped decoding early: it stops where the channel count or sample rate changes
 * mid-stream (two files joined), frames the probe counted. Transcribing the part before would charge a
 * metered caller for audio never heard; refused, the call is not charged at all.
 */
function assertDecodedWhole(layout: WavLayout, info: AudioInfo): void {
  const decoded = layout.dataLength / layout.blockAlign / layout.sampleRate;
  if (info.durationSeconds - decoded > LAME_TRIM_SAMPLES / info.sampleRate)
    throw new BadInputError(
      `the MP3 could not be decoded whole: its frames hold ${info.durationSeconds.toFixed(1)} s, the decoder read ${decoded.toFixed(1)} s (the channel count or sample rate changes mid-stream)`,
      AUDIO_ERRORS.corrupt,
      "file",
    );
}

/** lame's test of four bytes as a Layer III header (get_audio.c's is_syncword_mp123; free format passes). */
function lameTakesHeader(bytes: Uint8Array, at: number): boolean {
  const [b0, b1 = 0, b2 = 0, b3 = 0] = bytes.subarray(at, at + 4);
  return (
    b0 === 0xff &&
    (b1 & 0xe0) === 0xe0 &&
    (b1 & 0x18) !== 0x08 &&
    (b1 & 0x06) === 0x02 &&
    (b2 & 0xf0) !== 0xf0 &&
    (b2 & 0x0c) !== 0x0c &&
    (b3 & 0x03) !== 0x02
  );
}

/** Version, sample rate index and mono or not: what lame keeps from its first header for the whole file. */
const streamBits = (bytes: Uint8Array, at: number) =>
  `${((bytes[at + 1] as number) >> 3) & 3}/${((bytes[at + 2] as number) >> 2) & 3}/${(bytes[at + 3] as number) >> 6 === 3}`;

/**
 * Refuses, before payment, an MP3 whose frames the probe counts but from which lame decodes nothing: lame
 * starts on the first four bytes after the ID3v2 tags that pass its header test, even in junk before the
 * audio, and keeps that header's version, sample rate and channel count; audio of another then stops it
 * at once. A header of the same kind (or the audio's own first frame) is harmless: lame resynchronises.
 * A scan of the bytes before the first frame (at most 64 KiB): microseconds.
 *
 * @throws BadInputError `corrupt_audio`.
 */
export function assertLameStartsOnAudio(bytes: Uint8Array): void {
  const start = mp3Start(bytes);
  if (!start) return;
  for (let at = start.tagsEnd; at < start.first; at++) {
    if (bytes[at] !== 0xff || !lameTakesHeader(bytes, at)) continue;
    if (streamBits(bytes, at) === streamBits(bytes, start.first)) return;
    throw new BadInputError(
      `the MP3 cannot be decoded: the bytes before its audio (at byte ${start.first}) hold a frame header of another kind at byte ${at}, where the decoder would start`,
      AUDIO_ERRORS.corrupt,
      "file",
    );
  }
}

/** The MP3 decoded by `lame` as a WAV (its header's sizes unfinished: `readWav` reads to the end). */
async function decodeMp3(bytes: Uint8Array, info: AudioInfo, options: SpeechPcmOptions): Promise<Uint8Array> {
  // The decoder adds its delay and may pad the last frame: two seconds of room over the probed length.
  const maxOutputBytes = Math.ceil((info.durationSeconds + 2) * info.sampleRate * info.channels * 2) + 1024;
  const result = await runProgram({
    label: "lame",
    program: options.lame ?? "lame",
    args: ["--mp3input", "--decode", "--quiet", "-", "-"],
    stdin: bytes,
    timeoutMs: options.timeoutMs ?? 60_000,
    signal: options.signal,
    maxBytes: maxOutputBytes,
    install: LAME_INSTALL,
    allowFailure: true,
  });
  if (result.exitCode !== 0 || result.stdout.length <= 44)
    throw new BadInputError(
      `the MP3 could not be decoded${lastLine(result.stderr)}`,
      AUDIO_ERRORS.corrupt,
      "file",
    );
  return result.stdout;
}

const ulaw = g711Table((u) => {
  const v = ~u & 0xff;
  const t = (((v & 0x0f) << 3) + 0x84) << ((v & 0x70) >> 4);
  return v & 0x80 ? 0x84 - t : t - 0x84;
});
const alaw = g711Table((a) => {
  const v = a ^ 0x55;
  const segment = (v & 0x70) >> 4;
  let t = (v & 0x0f) << 4;
  t = segment === 0 ? t + 8 : (t + 0x108) << Math.max(0, segment - 1);
  return v & 0x80 ? t : -t;
});

function g711Table(decode: (byte: number) => number): Float32Array {
  const table = new Float32Array(256);
  for (let b = 0; b < 256; b++) table[b] = decode(b) / 32_768;
  return table;
}

/**
 * A WAV's samples as one channel of floats in [-1, 1]: the mean of its channels at each instant (speech is
 * the same on every channel of a recording; the mean keeps it and does not clip).
 */
export function mixDown(bytes: Uint8Array, layout: WavLayout): Float32Array {
  const { channels, blockAlign, dataOffset, encoding } = layout;
  const width = layout.bitsPerSample / 8;
  const frames = layout.dataLength / blockAlign;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const read: (at: number) => number =
    encoding === "float"
      ? width === 4
        ? (at) => view.getFloat32(at, true)
        : (at) => view.getFloat64(at, true)
      : encoding === "mulaw"
        ? (at) => ulaw[bytes[at] as number] as number
        : encoding === "alaw"
          ? (at) => alaw[bytes[at] as number] as number
          : width === 1
            ? (at) => ((bytes[at] as number) - 128) / 128
            : width === 2
              ? (at) => view.getInt16(at, true) / 32_768
              : width === 3
                ? (at) => ((view.getUint16(at, true) | (view.getInt8(at + 2) << 16)) as number) / 8_388_608
                : (at) => view.getInt32(at, true) / 2_147_483_648;
  const out = new Float32Array(frames);
  for (let frame = 0, at = dataOffset; frame < frames; frame++, at += blockAlign) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += read(at + c * width);
    // A float file may hold NaN or values past full scale: silence and clipping, not poison for the mean.
    const mean = sum / channels;
    out[frame] = Number.isNaN(mean) ? 0 : Math.min(1, Math.max(-1, mean));
  }
  return out;
}

/** Zero crossings of the sinc on each side: wide enough for speech recognition, cheap enough for 5 minutes. */
const ZERO_CROSSINGS = 8;
/** Table points per zero crossing; the kernel between two is interpolated linearly. */
const TABLE_RESOLUTION = 512;
/** The pass band ends at this fraction of the lower Nyquist frequency, leaving room for the filter's slope. */
const PASS_BAND = 0.9;

/** sinc(x) under a Blackman window, for |x| in [0, ZERO_CROSSINGS], sampled TABLE_RESOLUTION times per unit. */
const KERNEL = (() => {
  const size = ZERO_CROSSINGS * TABLE_RESOLUTION + 2;
  const table = new Float64Array(size);
  for (let i = 0; i < size; i++) {
    const x = i / TABLE_RESOLUTION;
    if (x >= ZERO_CROSSINGS) continue;
    const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    const phase = Math.PI * (x / ZERO_CROSSINGS + 1); // 0 to 2π across the window's whole width
    table[i] = sinc * (0.42 - 0.5 * Math.cos(phase) + 0.08 * Math.cos(2 * phase));
  }
  return table;
})();

/**
 * Band-limited resampling (windowed sinc): going down, the low-pass at the new Nyquist frequency keeps
 * what lies above it from folding back into the band a recogniser listens to. Each output sample is
 * normalised by its weights, so a constant stays constant and the edges of the signal do not fade.
 */
export function resample(input: Float32Array, from: number, to: number): Float32Array {
  if (from === to || input.length === 0) return input;
  const cutoff = PASS_BAND * Math.min(1, to / from);
  const halfWidth = ZERO_CROSSINGS / cutoff;
  const step = from / to;
  const length = Math.max(1, Math.floor((input.length * to) / from));
  const out = new Float32Array(length);
  const last = input.length - 1;
  for (let n = 0; n < length; n++) {
    const center = n * step;
    const first = Math.max(0, Math.ceil(center - halfWidth));
    const end = Math.min(last, Math.floor(center + halfWidth));
    let sum = 0;
    let weights = 0;
    for (let i = first; i <= end; i++) {
      const position = Math.abs(i - center) * cutoff * TABLE_RESOLUTION;
      const index = Math.floor(position);
      const fraction = position - index;
      const weight =
        (KERNEL[index] as number) + ((KERNEL[index + 1] as number) - (KERNEL[index] as number)) * fraction;
      sum += (input[i] as number) * weight;
      weights += weight;
    }
    out[n] = weights > 0 ? sum / weights : 0;
  }
  return out;
}

/** Floats in [-1, 1] as signed 16-bit samples (rounded, clipped). */
export function toInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.round((samples[i] as number) * 32_767);
    out[i] = Math.min(32_767, Math.max(-32_768, s));
  }
  return out;
}
