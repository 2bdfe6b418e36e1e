import { describe, expect, it } from "vitest";
import {
  CONTENT_TYPES,
  changeTempo,
  encode,
  offlineFormats,
  PCM_SAMPLE_RATE,
  wavInfo,
} from "../../../../src/merchants/inference/audio/encode.ts";
import { flacInfo, toneWav, walkMp3 } from "./audio-checks.ts";

const signal = () => AbortSignal.timeout(20_000);

describe("reading an engine's WAV", () => {
  it("reads the format and counts the duration from the samples present", () => {
    const info = wavInfo(toneWav(1.5, 16_000));
    expect(info).toMatchObject({ sampleRate: 16_000, channels: 1, bitsPerSample: 16, dataOffset: 44 });
    expect(info.durationSeconds).toBe(1.5);
  });

  it("reads a header written to a pipe (sizes unknown) up to the bytes present, and skips other chunks", () => {
    const tone = Buffer.from(toneWav(0.5, 8_000));
    const streamed = Buffer.from(tone);
    streamed.writeUInt32LE(0xffffffff, 4);
    streamed.writeUInt32LE(0xffffffff, 40);
    expect(wavInfo(streamed).durationSeconds).toBe(0.5);
    // A LIST chunk between fmt and data, as some programs write.
    const list = Buffer.concat([
      Buffer.from("LIST", "latin1"),
      Buffer.from([5, 0, 0, 0]),
      Buffer.from("INFOx\0"),
    ]);
    const withList = Buffer.concat([tone.subarray(0, 36), list, tone.subarray(36)]);
    expect(wavInfo(withList)).toMatchObject({ dataOffset: 36 + list.length + 8, durationSeconds: 0.5 });
  });

  it("refuses what is not PCM WAV", () => {
    expect(() => wavInfo(new TextEncoder().encode("ID3 not a wav at all"))).toThrow(/no WAV/);
    const float = Buffer.from(toneWav(0.1));
    float.writeUInt16LE(3, 20);
    expect(() => wavInfo(float)).toThrow(/not PCM/);
  });
});

describe("encoding", () => {
  const tone = toneWav(2, 16_000);

  it("lists the formats whose encoder is installed, never opus or aac", () => {
    expect(offlineFormats({ lame: "lame", sox: "sox" })).toEqual(["mp3", "wav", "flac", "pcm"]);
    expect(offlineFormats({ lame: "/nonexistent/lame", sox: "sox" })).toEqual(["wav", "flac", "pcm"]);
    expect(offlineFormats({ lame: "lame", sox: "/nonexistent/sox" })).toEqual(["mp3", "wav"]);
  });

  it("makes MP3 whose every byte is a Layer III frame, 24 kHz mono, as long as the WAV", async () => {
    const { audio, contentType } = await encode(tone, "mp3", { signal: signal() });
    expect(contentType).toBe("audio/mpeg");
    const mp3 = walkMp3(audio);
    expect(mp3).toMatchObject({ sampleRate: 24_000, channels: 1 });
    // lame pads the end to whole frames, and its decoder delay adds a few hundred samples.
    expect(mp3.durationSeconds).toBeGreaterThan(1.95);
    expect(mp3.durationSeconds).toBeLessThan(2.15);
  });

  it("(the MP3 check itself refuses a cut or corrupted stream)", async () => {
    const { audio } = await encode(tone, "mp3", { signal: signal() });
    expect(() => walkMp3(audio.subarray(0, audio.length - 10))).toThrow(/cut short/);
    const corrupt = Buffer.from(audio);
    corrupt.fill(0, 400, 800);
    expect(() => walkMp3(corrupt)).toThrow(/no MP3 frame sync/);
  });

  it("makes FLAC whose STREAMINFO holds the WAV's samples", async () => {
    const { audio, contentType } = await encode(tone, "flac", { signal: signal() });
    expect(contentType).toBe("audio/flac");
    expect(flacInfo(audio)).toEqual({ sampleRate: 16_000, channels: 1, bits: 16, durationSeconds: 2 });
  });

  it("makes raw 16-bit little-endian PCM at 24 kHz, OpenAI's pcm", async () => {
    const { audio, contentType } = await encode(tone, "pcm", { signal: signal() });
    expect(contentType).toBe(CONTENT_TYPES.pcm);
    expect(audio.byteLength).toBe(2 * PCM_SAMPLE_RATE * 2);
    // The tone's amplitude survives resampling: a sample near a crest is large, and positive (little-endian).
    const view = new DataView(audio.buffer, audio.byteOffset, audio.byteLength);
    const peak = Math.max(...Array.from({ length: 200 }, (_, i) => view.getInt16(i * 2, true)));
    expect(peak).toBeGreaterThan(10_000);
    expect(peak).toBeLessThan(13_000);
  });

  it("answers WAV with a canonical header over the same samples", async () => {
    const streamed = Buffer.from(tone);
    streamed.writeUInt32LE(0xffffffff, 40);
    const { audio, contentType } = await encode(streamed, "wav");
    expect(contentType).toBe("audio/wav");
    expect(Buffer.from(audio).readUInt32LE(40)).toBe(tone.byteLength - 44);
    expect(Buffer.from(audio.subarray(44)).equals(Buffer.from(tone.subarray(44)))).toBe(true);
  });

  it("refuses a format it cannot make, and fails (never silently) without its encoder", async () => {
    await expect(encode(tone, "opus")).rejects.toMatchObject({ code: "engine_format_unsupported" });
    await expect(encode(tone, "mp3", { programs: { lame: "/nonexistent/lame" } })).rejects.toMatchObject({
      status: 503,
      code: "engine_unavailable",
    });
  });

  it("bounds the encoded size", async () => {
    await expect(encode(tone, "flac", { maxBytes: 1_000, signal: signal() })).rejects.toMatchObject({
      code: "engine_too_large",
    });
  });

  it("changes tempo without a new pitch: factor 0.5 doubles the duration", async () => {
    const slow = await changeTempo(tone, 0.5, { signal: signal() });
    expect(wavInfo(slow).durationSeconds).toBeCloseTo(4, 1);
    expect(wavInfo(slow).sampleRate).toBe(16_000);
  });
});
