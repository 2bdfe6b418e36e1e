/**
 * What the audio tests check bytes with, written from the formats' specifications rather than with the
 * code under test: MP3 frame headers walked end to end, FLAC's STREAMINFO, a WAV's loudness, and a
 * synthetic WAV to encode.
 */
import { wavInfo } from "../../../../src/merchants/inference/audio/encode.ts";

/** MPEG audio Layer III bit rates (kbit/s) by index: MPEG-1, then MPEG-2 and 2.5. */
const BITRATES = {
  1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const SAMPLE_RATES: Record<number, number[]> = {
  3: [44_100, 48_000, 32_000], // MPEG-1
  2: [22_050, 24_000, 16_000], // MPEG-2
  0: [11_025, 12_000, 8_000], // MPEG-2.5
};

export interface Mp3Walk {
  frames: number;
  sampleRate: number;
  channels: number;
  /** Seconds of the frames, less lame's first (information) frame when it has one. */
  durationSeconds: number;
}

/**
 * Walks an MP3 frame by frame from its first byte (an ID3v2 tag is skipped) and fails unless every byte
 * belongs to a valid Layer III frame of one sample rate.
 */
export function walkMp3(bytes: Uint8Array): Mp3Walk {
  let at = 0;
  if (bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33) {
    const size = ((bytes[6] ?? 0) << 21) | ((bytes[7] ?? 0) << 14) | ((bytes[8] ?? 0) << 7) | (bytes[9] ?? 0);
    at = 10 + size;
  }
  let frames = 0;
  let sampleRate = 0;
  let channels = 0;
  let infoFrame = false;
  while (at < bytes.length) {
    const b1 = bytes[at + 1] ?? 0;
    const b2 = bytes[at + 2] ?? 0;
    const b3 = bytes[at + 3] ?? 0;
    if (bytes[at] !== 0xff || (b1 & 0xe0) !== 0xe0) throw new Error(`no MP3 frame sync at byte ${at}`);
    const version = (b1 >> 3) & 3;
    if (version === 1) throw new Error(`reserved MPEG version at byte ${at}`);
    if (((b1 >> 1) & 3) !== 1) throw new Error(`not Layer III at byte ${at}`);
    const bitrate = (version === 3 ? BITRATES[1] : BITRATES[2])[(b2 >> 4) & 15];
    const rate = SAMPLE_RATES[version]?.[(b2 >> 2) & 3];
    if (!bitrate || !rate) throw new Error(`bad bit rate or sample rate at byte ${at}`);
    if (sampleRate !== 0 && rate !== sampleRate) throw new Error(`sample rate changes at byte ${at}`);
    sampleRate = rate;
    channels = b3 >> 6 === 3 ? 1 : 2;
    const padding = (b2 >> 1) & 1;
    const length = Math.floor(((version === 3 ? 144 : 72) * bitrate * 1000) / rate) + padding;
    if (frames === 0) {
      const text = Buffer.from(bytes.subarray(at, at + length)).toString("latin1");
      infoFrame = text.includes("Xing") || text.includes("Info");
    }
    frames++;
    at += length;
  }
  if (at !== bytes.length) throw new Error("the last MP3 frame is cut short");
  const samplesPerFrame = sampleRate >= 32_000 ? 1152 : 576;
  return {
    frames,
    sampleRate,
    channels,
    durationSeconds: ((frames - (infoFrame ? 1 : 0)) * samplesPerFrame) / sampleRate,
  };
}

/** FLAC's signature and STREAMINFO (the first metadata block, which the format requires). */
export function flacInfo(bytes: Uint8Array): {
  sampleRate: number;
  channels: number;
  bits: number;
  durationSeconds: number;
} {
  if (Buffer.from(bytes.subarray(0, 4)).toString("latin1") !== "fLaC") throw new Error("no fLaC signature");
  if (((bytes[4] ?? 0) & 0x7f) !== 0) throw new Error("the first metadata block is not STREAMINFO");
  const s = Buffer.from(bytes.subarray(8, 8 + 34));
  const sampleRate = (s.readUInt32BE(10) >>> 12) & 0xfffff;
  const channels = ((s[12] ?? 0) >> 1) & 7;
  const bits = ((((s[12] ?? 0) & 1) << 4) | ((s[13] ?? 0) >> 4)) + 1;
  const total = ((s[13] ?? 0) & 0x0f) * 2 ** 32 + s.readUInt32BE(14);
  return { sampleRate, channels: channels + 1, bits, durationSeconds: total / sampleRate };
}

/** Root mean square of a 16-bit WAV's samples, 0 (silence) to 1. */
export function loudness(wav: Uint8Array): number {
  const info = wavInfo(wav);
  const view = new DataView(wav.buffer, wav.byteOffset + info.dataOffset, info.dataBytes);
  let sum = 0;
  const n = Math.floor(info.dataBytes / 2);
  for (let i = 0; i < n; i++) sum += (view.getInt16(i * 2, true) / 32768) ** 2;
  return n === 0 ? 0 : Math.sqrt(sum / n);
}

/** A mono 16-bit WAV of a sine tone, written here so encoder tests need no engine. */
export function toneWav(seconds: number, sampleRate = 16_000, hz = 440): Uint8Array {
  const samples = Math.round(seconds * sampleRate);
  const out = Buffer.alloc(44 + samples * 2);
  out.write("RIFF", 0, "latin1");
  out.writeUInt32LE(36 + samples * 2, 4);
  out.write("WAVEfmt ", 8, "latin1");
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write("data", 36, "latin1");
  out.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++)
    out.writeInt16LE(Math.round(Math.sin((2 * Math.PI * hz * i) / sampleRate) * 12_000), 44 + i * 2);
  return new Uint8Array(out);
}
