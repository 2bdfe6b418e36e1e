/**
 * Audio the transcription tests make for themselves: WAV files written here in JS (any rate, width,
 * channel count, encoding, and header lies), speech from Debian's flite, MP3 from Debian's lame. Nothing
 * is read from the network or from a checked-in binary.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { AUDIO_PACKAGES, findProgram, installCommand } from "../../src/merchants/inference/audio/program.ts";

const run = promisify(execFile);

export interface WavSpec {
  sampleRate: number;
  /** One array per channel, floats in [-1, 1]. */
  channels: Float32Array[];
  /** 8, 16, 24 or 32 for PCM; 32 or 64 for float; 8 for alaw/mulaw. Default 16. */
  bits?: number;
  encoding?: "pcm" | "float";
  /** Write WAVE_FORMAT_EXTENSIBLE instead of the plain tag. */
  extensible?: boolean;
  /** The data chunk's declared size, when it should lie (default: the true size). */
  declaredDataSize?: number;
  /** Chunks written between fmt and data (e.g. a LIST chunk), as [id, body]. */
  extraChunks?: [string, Uint8Array][];
}

/** A WAV file's bytes. */
export function wav(spec: WavSpec): Buffer {
  const bits = spec.bits ?? 16;
  const encoding = spec.encoding ?? "pcm";
  const channels = spec.channels.length;
  const frames = spec.channels[0]?.length ?? 0;
  const width = bits / 8;
  const data = Buffer.alloc(frames * channels * width);
  for (let i = 0; i < frames; i++) {
    for (let c = 0; c < channels; c++) {
      const x = Math.max(-1, Math.min(1, spec.channels[c]?.[i] ?? 0));
      const at = (i * channels + c) * width;
      if (encoding === "float") {
        if (bits === 32) data.writeFloatLE(x, at);
        else data.writeDoubleLE(x, at);
      } else if (bits === 8) data.writeUInt8(Math.round(x * 127) + 128, at);
      else if (bits === 16) data.writeInt16LE(Math.round(x * 32_767), at);
      else if (bits === 24) data.writeIntLE(Math.round(x * 8_388_607), at, 3);
      else data.writeInt32LE(Math.round(x * 2_147_483_647), at);
    }
  }
  const tag = encoding === "float" ? 3 : 1;
  const fmt = Buffer.alloc(spec.extensible ? 40 : 16);
  fmt.writeUInt16LE(spec.extensible ? 0xfffe : tag, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(spec.sampleRate, 4);
  fmt.writeUInt32LE(spec.sampleRate * channels * width, 8);
  fmt.writeUInt16LE(channels * width, 12);
  fmt.writeUInt16LE(bits, 14);
  if (spec.extensible) {
    fmt.writeUInt16LE(22, 16);
    fmt.writeUInt16LE(bits, 18);
    fmt.writeUInt32LE(channels === 1 ? 0x4 : 0x3, 20);
    fmt.writeUInt16LE(tag, 24);
    Buffer.from([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71]).copy(
      fmt,
      26,
    );
  }
  const chunk = (id: string, body: Uint8Array, declared = body.length) => {
    const header = Buffer.alloc(8);
    header.write(id, 0, "ascii");
    header.writeUInt32LE(declared, 4);
    return Buffer.concat([header, body, Buffer.alloc(body.length & 1)]);
  };
  const body = Buffer.concat([
    Buffer.from("WAVE"),
    chunk("fmt ", fmt),
    ...(spec.extraChunks ?? []).map(([id, b]) => chunk(id, b)),
    chunk("data", data, spec.declaredDataSize ?? data.length),
  ]);
  const riff = Buffer.alloc(8);
  riff.write("RIFF", 0, "ascii");
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

/** A sine tone, amplitude `amplitude`. */
export function sine(seconds: number, sampleRate: number, frequency: number, amplitude = 0.5): Float32Array {
  const out = new Float32Array(Math.round(seconds * sampleRate));
  for (let i = 0; i < out.length; i++)
    out[i] = amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate);
  return out;
}

/**
 * Which of these programs are missing from PATH, for tests that skip without them: a developer without
 * Debian's audio programs still runs the rest. CI installs them and sets `X402M_TEST_REQUIRE_AUDIO=1`,
 * and then a missing program throws, failing the test file instead of skipping it unseen.
 */
export async function missingPrograms(...names: string[]): Promise<string[]> {
  const found = await Promise.all(names.map((name) => findProgram(name)));
  const missing = names.filter((_, i) => !found[i]);
  if (missing.length > 0 && process.env.X402M_TEST_REQUIRE_AUDIO === "1")
    throw new Error(
      `X402M_TEST_REQUIRE_AUDIO=1 and ${missing.join(", ")} missing from PATH: the audio tests would skip (${installCommand(AUDIO_PACKAGES)})`,
    );
  return missing;
}

/** Runs `work` with a private temporary directory, removed afterwards. */
async function inTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), "x402m-audio-test-"));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** flite speaking `text` with one of its voices: a 16 kHz (kal: 8 kHz) mono 16-bit WAV. */
export function speak(text: string, voice = "rms"): Promise<Buffer> {
  return inTempDir(async (dir) => {
    const out = path.join(dir, "speech.wav");
    await run("flite", ["-voice", voice, "-t", text, "-o", out]);
    return readFile(out);
  });
}

/** lame's MP3 of a WAV (extra arguments e.g. `-b 32`, `--resample 8`, `--add-id3v2 --tt Title`). */
export function mp3(wavBytes: Uint8Array, args: string[] = []): Promise<Buffer> {
  return inTempDir(async (dir) => {
    const input = path.join(dir, "in.wav");
    const output = path.join(dir, "out.mp3");
    await writeFile(input, wavBytes);
    await run("lame", ["--quiet", ...args, input, output]);
    return readFile(output);
  });
}

/** Lower-case words, punctuation dropped: how a transcript is compared with what was said. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z' ]+/g, " ")
    .split(/\s+/)
    .filter(Boolean);
}

/** Word error rate: (substitutions + deletions + insertions) / words said, by edit distance. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = words(reference);
  const hyp = words(hypothesis);
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const current = [i];
    for (let j = 1; j <= hyp.length; j++)
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (ref[i - 1] === hyp[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return (previous[hyp.length] as number) / ref.length;
}
