/**
 * What an uploaded audio file is, read from its own bytes before payment: its container, sample rate,
 * channels and a duration counted from the audio actually present. A length the file claims (a WAV's
 * chunk sizes, a Xing/VBRI frame count) is never believed: a small file that claims an hour must not be
 * priced as one, and a streamed WAV whose header was never finished must still be priced as what it holds.
 *
 * Accepted: WAV (RIFF or RF64; PCM 8/16/24/32-bit, IEEE float 32/64-bit, A-law, µ-law, plain or
 * WAVE_FORMAT_EXTENSIBLE) and MP3 (MPEG-1, 2 and 2.5 Layer III, with ID3v2/ID3v1/APE tags). Anything else
 * is a `BadInputError` with one of the `AUDIO_ERRORS` codes.
 */
import { BadInputError } from "../../../common/errors.ts";
import type { AudioInfo } from "./engine.ts";

/** The codes a refused upload carries (HTTP 400, before payment). */
export const AUDIO_ERRORS = {
  /** Not WAV or MP3 (or a WAV codec we do not decode, or MPEG audio that is not Layer III). */
  unsupported: "unsupported_audio_format",
  /** Starts as WAV or MP3 but cannot be read: a broken header, no audio chunk, no run of frames. */
  corrupt: "corrupt_audio",
  /** A readable file with no audio sample in it. */
  empty: "empty_audio",
  /** The declared content type or file name says one format, the bytes are another. */
  mismatch: "audio_type_mismatch",
  /** Longer than the endpoint takes (the route's limit, from the duration read here). */
  tooLong: "audio_too_long",
} as const;

/** Sample rates outside this range are no recording a speech engine can use (nor one a header should hold). */
export const MIN_SAMPLE_RATE = 1_000;
export const MAX_SAMPLE_RATE = 768_000;
const MAX_CHANNELS = 32;

/** How a WAV's samples are stored, as `pcm.ts` decodes them. */
export type WavEncoding = "pcm" | "float" | "alaw" | "mulaw";

/** Where a WAV's audio is and how to read it: the data present, in whole sample frames. */
export interface WavLayout {
  encoding: WavEncoding;
  /** Bits of one sample's container (8, 16, 24, 32 or 64); the valid bits of EXTENSIBLE sit at its top. */
  bitsPerSample: number;
  /** Bytes of one frame (all channels of one instant). */
  blockAlign: number;
  channels: number;
  sampleRate: number;
  /** Byte offset of the first sample frame. */
  dataOffset: number;
  /** Bytes of whole frames present (the declared size clamped to the file, rounded down to a frame). */
  dataLength: number;
}

function refuse(code: keyof typeof AUDIO_ERRORS, message: string): BadInputError {
  return new BadInputError(message, AUDIO_ERRORS[code], "file");
}

/**
 * Reads an uploaded file's container, sample rate, channels and duration from its own data.
 *
 * @throws BadInputError `unsupported_audio_format`, `corrupt_audio` or `empty_audio` (see `AUDIO_ERRORS`).
 * @example
 * const info = probeAudio(new Uint8Array(await file.arrayBuffer()));
 * if (info.durationSeconds > 300) throw new BadInputError("at most 5 minutes of audio");
 */
export function probeAudio(bytes: Uint8Array): AudioInfo {
  const wav = readWav(bytes);
  if (wav) {
    return {
      container: "wav",
      durationSeconds: wav.dataLength / wav.blockAlign / wav.sampleRate,
      sampleRate: wav.sampleRate,
      channels: wav.channels,
    };
  }
  const mp3 = readMp3(bytes);
  if (mp3) return mp3;
  const other = otherFormat(bytes);
  throw refuse(
    "unsupported",
    other
      ? `the file is ${other}; only WAV and MP3 audio are accepted`
      : "the file is neither WAV nor MP3 audio (no RIFF/WAVE header and no run of MPEG Layer III frames)",
  );
}

const ascii = (bytes: Uint8Array, offset: number, length: number) =>
  String.fromCharCode(...bytes.subarray(offset, offset + length));

/** The format's name when the bytes start like a well-known audio or video container we do not take. */
function otherFormat(bytes: Uint8Array): string | undefined {
  if (bytes.length < 12) return undefined;
  const head = ascii(bytes, 0, 4);
  if (head === "fLaC") return "FLAC";
  if (head === "OggS") return "Ogg (Vorbis or Opus)";
  if (head === "RIFX") return "big-endian WAV (RIFX)";
  if (head === "FORM" && ascii(bytes, 8, 3) === "AIF") return "AIFF";
  if (ascii(bytes, 4, 4) === "ftyp") return "MP4/M4A";
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3)
    return "WebM/Matroska";
  return undefined;
}

const EXTENSIBLE = 0xfffe;
// The 14 bytes every KSDATAFORMAT_SUBTYPE_* GUID ends with; its first two bytes are the plain format tag.
const KSDATAFORMAT_TAIL = [
  0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71,
];
const CODECS: Record<number, string> = {
  2: "Microsoft ADPCM",
  17: "IMA ADPCM",
  49: "GSM 6.10",
  80: "MPEG audio",
  85: "MP3 inside a WAV (send the MP3 itself)",
};

/**
 * The layout of a WAV (RIFF or RF64) file, or undefined when the bytes do not start as one.
 *
 * A data size of 0 or 0xFFFFFFFF (streaming encoders that never came back to write it, RF64) means "to
 * the end of the file"; a size larger than the file is clamped to what is there; a trailing partial frame
 * is not counted.
 *
 * @throws BadInputError when the file starts as a WAV but cannot be read, or holds a codec we do not decode.
 */
export function readWav(bytes: Uint8Array): WavLayout | undefined {
  if (bytes.length < 12) return undefined;
  const riff = ascii(bytes, 0, 4);
  if ((riff !== "RIFF" && riff !== "RF64") || ascii(bytes, 8, 4) !== "WAVE") return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let format: Omit<WavLayout, "dataOffset" | "dataLength"> | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = ascii(bytes, offset, 4);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === "fmt ") {
      if (size < 16 || body + size > bytes.length)
        throw refuse("corrupt", "the WAV's fmt chunk is truncated");
      format = readFormat(view, body, size);
    } else if (id === "data") {
      if (!format) throw refuse("corrupt", "the WAV has audio data before its fmt chunk");
      const present = bytes.length - body;
      const declared = size === 0 || size === 0xffffffff ? present : Math.min(size, present);
      const dataLength = declared - (declared % format.blockAlign);
      if (dataLength === 0) throw refuse("empty", "the WAV holds no audio samples");
      return { ...format, dataOffset: body, dataLength };
    }
    const next = body + size + (size & 1);
    if (next > bytes.length)
      throw refuse(
        "corrupt",
        `the WAV's "${id.replace(/[^\x20-\x7e]/g, "?")}" chunk runs past the end of the file`,
      );
    offset = next;
  }
  throw refuse("corrupt", format ? "the WAV has no data chunk" : "the WAV has no fmt chunk");
}

function readFormat(view: DataView, at: number, size: number): Omit<WavLayout, "dataOffset" | "dataLength"> {
  let tag = view.getUint16(at, true);
  const channels = view.getUint16(at + 2, true);
  const sampleRate = view.getUint32(at + 4, true);
  const blockAlign = view.getUint16(at + 12, true);
  const bitsPerSample = view.getUint16(at + 14, true);
  if (tag === EXTENSIBLE) {
    if (size < 40) throw refuse("corrupt", "the WAV's WAVE_FORMAT_EXTENSIBLE header is truncated");
    const guid = new Uint8Array(view.buffer, view.byteOffset + at + 24, 16);
    if (!KSDATAFORMAT_TAIL.every((b, i) => guid[i + 2] === b))
      throw refuse("unsupported", "the WAV's sub-format is not a standard one (PCM or IEEE float)");
    tag = view.getUint16(at + 24, true);
  }
  const encoding = ({ 1: "pcm", 3: "float", 6: "alaw", 7: "mulaw" } as const)[tag as 1 | 3 | 6 | 7];
  if (!encoding)
    throw refuse(
      "unsupported",
      `the WAV holds ${CODECS[tag] ?? `codec 0x${tag.toString(16)}`}; PCM, IEEE float, A-law and µ-law are accepted`,
    );
  const widths = { pcm: [8, 16, 24, 32], float: [32, 64], alaw: [8], mulaw: [8] }[encoding];
  if (!widths.includes(bitsPerSample))
    throw refuse(
      "unsupported",
      `the WAV has ${bitsPerSample}-bit ${encoding} samples, which are not accepted`,
    );
  if (channels === 0 || channels > MAX_CHANNELS)
    throw refuse("corrupt", `the WAV claims ${channels} channels (1 to ${MAX_CHANNELS} are readable)`);
  if (blockAlign !== (channels * bitsPerSample) / 8)
    throw refuse(
      "corrupt",
      `the WAV's block size (${blockAlign}) does not match its channels and sample width`,
    );
  if (sampleRate < MIN_SAMPLE_RATE || sampleRate > MAX_SAMPLE_RATE)
    throw refuse(
      "unsupported",
      `the WAV's sample rate ${sampleRate} Hz is outside ${MIN_SAMPLE_RATE} to ${MAX_SAMPLE_RATE} Hz`,
    );
  return { encoding, bitsPerSample, blockAlign, channels, sampleRate };
}

interface FrameHeader {
  /** The two version bits: 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5. */
  version: number;
  sampleRate: number;
  /** Bytes of the whole frame, header included. */
  length: number;
  samples: number;
  channels: number;
  /** A 16-bit CRC follows the header. */
  crc: boolean;
}

const BITRATES_MPEG1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_MPEG2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES: Record<number, number[]> = {
  3: [44_100, 48_000, 32_000],
  2: [22_050, 24_000, 16_000],
  0: [11_025, 12_000, 8_000],
};
/** Consecutive frames needed to take bytes for MP3: one header in random data is likely, three chained are not. */
const RUN = 3;
/** How far after its tags an MP3 may start (padding, a stray byte or two): further, it is not an MP3. */
const MAX_LEADING_JUNK = 64 * 1024;

/** A Layer III frame header at `at`, or undefined; free-format and reserved values are not valid. */
function frameAt(bytes: Uint8Array, at: number, end: number): FrameHeader | undefined {
  if (at + 4 > end) return undefined;
  const b1 = bytes[at + 1] as number;
  const b2 = bytes[at + 2] as number;
  const b3 = bytes[at + 3] as number;
  if (bytes[at] !== 0xff || (b1 & 0xe0) !== 0xe0) return undefined;
  const version = (b1 >> 3) & 3;
  if (version === 1 || ((b1 >> 1) & 3) !== 1) return undefined;
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 3;
  if (bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3 || (b3 & 3) === 2) return undefined;
  const mpeg1 = version === 3;
  const sampleRate = (SAMPLE_RATES[version] as number[])[rateIndex] as number;
  const bitrate = ((mpeg1 ? BITRATES_MPEG1 : BITRATES_MPEG2)[bitrateIndex] as number) * 1000;
  return {
    version,
    sampleRate,
    length: Math.floor(((mpeg1 ? 144 : 72) * bitrate) / sampleRate) + ((b2 >> 1) & 1),
    samples: mpeg1 ? 1152 : 576,
    channels: b3 >> 6 === 3 ? 1 : 2,
    crc: (b1 & 1) === 0,
  };
}

const sameStream = (a: FrameHeader, b: FrameHeader) =>
  a.version === b.version && a.sampleRate === b.sampleRate;

/**
 * The offset of the first frame in [from, limit) that starts a chain of `RUN` frames of one stream (or a
 * chain of at least two that ends exactly at `end`), or -1.
 */
function findRun(bytes: Uint8Array, from: number, limit: number, end: number, stream?: FrameHeader): number {
  const last = Math.min(limit, end - 4);
  for (let at = from; at <= last; at++) {
    if (bytes[at] !== 0xff || ((bytes[at + 1] as number) & 0xe0) !== 0xe0) continue;
    const first = frameAt(bytes, at, end);
    if (!first || (stream && !sameStream(first, stream))) continue;
    let next = at + first.length;
    let count = 1;
    while (count < RUN) {
      const frame = frameAt(bytes, next, end);
      if (!frame || !sameStream(frame, first)) break;
      next += frame.length;
      count++;
    }
    if (count === RUN || (count >= 2 && next === end)) return at;
  }
  return -1;
}

/** Where the ID3v2 tags at the start end (several may follow one another), or 0. */
function skipId3v2(bytes: Uint8Array): number {
  let at = 0;
  while (at + 10 <= bytes.length && ascii(bytes, at, 3) === "ID3") {
    const size = bytes.subarray(at + 6, at + 10);
    if (size.some((b) => b > 0x7f)) throw refuse("corrupt", "the MP3's ID3v2 tag has an invalid size");
    const body =
      ((size[0] as number) << 21) |
      ((size[1] as number) << 14) |
      ((size[2] as number) << 7) |
      (size[3] as number);
    const footer = ((bytes[at + 5] as number) & 0x10) !== 0 ? 10 : 0;
    at += 10 + body + footer;
  }
  return Math.min(at, bytes.length);
}

/** Where the audio ends once an ID3v1 tag and an APEv2 tag (in either order of use) are cut off. */
function trailingTagsStart(bytes: Uint8Array, from: number): number {
  let end = bytes.length;
  if (end - 128 >= from && ascii(bytes, end - 128, 3) === "TAG") end -= 128;
  if (end - 32 >= from && ascii(bytes, end - 32, 8) === "APETAGEX") {
    const view = new DataView(bytes.buffer, bytes.byteOffset + end - 32, 32);
    const size = view.getUint32(12, true);
    const hasHeader = (view.getUint32(20, true) & 0x80000000) !== 0;
    end = Math.max(from, end - size - (hasHeader ? 32 : 0));
  }
  return end;
}

/** True when the frame is a Xing/Info or VBRI header: an encoder's table of contents, not audio. */
function isInfoFrame(bytes: Uint8Array, at: number, frame: FrameHeader): boolean {
  const sideInfo = frame.version === 3 ? (frame.channels === 1 ? 17 : 32) : frame.channels === 1 ? 9 : 17;
  const xing = at + 4 + (frame.crc ? 2 : 0) + sideInfo;
  const tag = ascii(bytes, xing, 4);
  return tag === "Xing" || tag === "Info" || ascii(bytes, at + 36, 4) === "VBRI";
}

/** Where an MP3's ID3v2 tags end (`start`), where its trailing tags begin (`end`), and its first frame (or -1). */
function locateMp3(bytes: Uint8Array): { start: number; end: number; first: number } {
  const start = skipId3v2(bytes);
  const end = trailingTagsStart(bytes, start);
  return { start, end, first: findRun(bytes, start, start + MAX_LEADING_JUNK, end) };
}

/**
 * Where an MP3's audio starts, for a decoder's own rules about the bytes before it (pcm.ts): the first byte
 * after its ID3v2 tags, and the first frame of the stream the probe counts; undefined without one.
 */
export function mp3Start(bytes: Uint8Array): { tagsEnd: number; first: number } | undefined {
  const { start, first } = locateMp3(bytes);
  return first < 0 ? undefined : { tagsEnd: start, first };
}

/**
 * The MP3's info from its frames, or undefined when the bytes hold no run of Layer III frames and no
 * ID3v2 tag. Junk between frames (a tag in the middle of two joined files, a damaged stretch) is skipped
 * up to the next run of frames of the same stream; a last frame cut short is not counted.
 */
function readMp3(bytes: Uint8Array): AudioInfo | undefined {
  const { start, end, first } = locateMp3(bytes);
  if (first < 0) {
    if (start > 0)
      throw refuse("corrupt", "the file has an ID3 tag but no MPEG Layer III audio frames after it");
    return undefined;
  }
  const stream = frameAt(bytes, first, end) as FrameHeader;
  let samples = 0;
  let at = first;
  while (at < end) {
    const frame = frameAt(bytes, at, end);
    if (frame && sameStream(frame, stream)) {
      if (at + frame.length > end) break;
      if (at !== first || !isInfoFrame(bytes, at, frame)) samples += frame.samples;
      at += frame.length;
      continue;
    }
    at = findRun(bytes, at + 1, end, end, stream);
    if (at < 0) break;
  }
  if (samples === 0) throw refuse("empty", "the MP3 holds no audio frames");
  return {
    container: "mp3",
    durationSeconds: samples / stream.sampleRate,
    sampleRate: stream.sampleRate,
    channels: stream.channels,
  };
}

/** What a multipart part says it is: its `Content-Type` and its file name, either possibly missing. */
export interface DeclaredType {
  contentType?: string | null;
  filename?: string | null;
}

const WAV_TYPES = new Set(["audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave", "audio/x-pn-wav"]);
const MP3_TYPES = new Set([
  "audio/mpeg",
  "audio/mp3",
  "audio/x-mp3",
  "audio/mpeg3",
  "audio/x-mpeg",
  "audio/x-mpeg-3",
  "audio/mpa",
  "audio/mpg",
]);
/** Types that claim nothing: what curl and most clients send for a file they did not look into. */
const NO_CLAIM_TYPES = new Set(["", "application/octet-stream", "binary/octet-stream"]);
// OpenAI's list names mpeg and mpga for MP3 too.
const EXTENSIONS: Record<string, AudioInfo["container"]> = {
  wav: "wav",
  wave: "wav",
  mp3: "mp3",
  mpga: "mp3",
  mpeg: "mp3",
};

/**
 * What a content type and a file name claim about a file: a container, `other` (some other type, e.g.
 * `audio/flac` or `clip.ogg`), or null when neither claims anything (missing, `application/octet-stream`,
 * a name without extension). When the two claim different things, the answer is `other`: the bytes can
 * agree with one of them at most.
 */
export function declaredContainer(declared: DeclaredType): AudioInfo["container"] | "other" | null {
  const type = (declared.contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const byType = NO_CLAIM_TYPES.has(type)
    ? null
    : WAV_TYPES.has(type)
      ? "wav"
      : MP3_TYPES.has(type)
        ? "mp3"
        : "other";
  const name = declared.filename ?? "";
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 && dot < name.length - 1 ? name.slice(dot + 1).toLowerCase() : undefined;
  const byName = extension === undefined ? null : (EXTENSIONS[extension] ?? "other");
  if (byType && byName && byType !== byName) return "other";
  return byType ?? byName;
}

/**
 * Refuses a file whose declared content type or file name says another format than its bytes are (a
 * `.mp3` that is a WAV, an `audio/wav` that is an MP3, a `.flac` or `image/png` at all).
 *
 * @throws BadInputError `audio_type_mismatch`.
 * @example
 * assertDeclaredTypeAgrees(probeAudio(bytes), { contentType: part.type, filename: part.name });
 */
export function assertDeclaredTypeAgrees(info: Pick<AudioInfo, "container">, declared: DeclaredType): void {
  const claim = declaredContainer(declared);
  if (claim === null || claim === info.container) return;
  const said = [
    declared.contentType && `type ${declared.contentType}`,
    declared.filename && `name ${declared.filename}`,
  ]
    .filter(Boolean)
    .join(" and ");
  throw refuse(
    "mismatch",
    `the file is ${info.container.toUpperCase()} audio but its ${said} claims otherwise`,
  );
}
