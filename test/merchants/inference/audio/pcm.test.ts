import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import {
  mixDown,
  resample,
  SPEECH_SAMPLE_RATE,
  toSpeechPcm,
} from "../../../../src/merchants/inference/audio/pcm.ts";
import { probeAudio, readWav } from "../../../../src/merchants/inference/audio/probe.ts";
import { ProgramFailedError } from "../../../../src/merchants/inference/audio/program.ts";
import { missingPrograms, mp3, sine, wav } from "../../../helpers/audio.ts";

const noLame = (await missingPrograms("lame")).length > 0;
const noSox = (await missingPrograms("sox")).length > 0;

/** Root mean square, the edges (where a filter has only half its input) left out. */
function rms(samples: ArrayLike<number>, scale = 1, edge = 400): number {
  let sum = 0;
  for (let i = edge; i < samples.length - edge; i++) sum += ((samples[i] as number) / scale) ** 2;
  return Math.sqrt(sum / (samples.length - 2 * edge));
}

/** The amplitude of one frequency in a signal (Goertzel), the edges left out. */
function amplitudeAt(
  samples: ArrayLike<number>,
  rate: number,
  frequency: number,
  scale = 1,
  edge = 400,
): number {
  const n = samples.length - 2 * edge;
  let re = 0;
  let im = 0;
  for (let i = 0; i < n; i++) {
    const x = (samples[i + edge] as number) / scale;
    re += x * Math.cos((2 * Math.PI * frequency * i) / rate);
    im -= x * Math.sin((2 * Math.PI * frequency * i) / rate);
  }
  return (2 * Math.hypot(re, im)) / n;
}

describe("resample", () => {
  it("keeps a tone in the speech band at its frequency and level, going down and up", () => {
    const down = resample(sine(1, 44_100, 1_000), 44_100, 16_000);
    expect(down.length).toBe(16_000);
    expect(amplitudeAt(down, 16_000, 1_000)).toBeCloseTo(0.5, 2);
    const up = resample(sine(1, 8_000, 1_000), 8_000, 16_000);
    expect(up.length).toBe(16_000);
    expect(amplitudeAt(up, 16_000, 1_000)).toBeCloseTo(0.5, 2);
    // The pass band is flat where speech has its energy.
    expect(amplitudeAt(resample(sine(1, 48_000, 3_000), 48_000, 16_000), 16_000, 3_000)).toBeCloseTo(0.5, 2);
  });

  it("removes what lies above the new Nyquist frequency instead of folding it into the speech band", () => {
    // 10 kHz at 44.1 kHz would alias to 6 kHz at 16 kHz; 12 kHz to 4 kHz.
    for (const frequency of [10_000, 12_000]) {
      const out = resample(sine(1, 44_100, frequency), 44_100, 16_000);
      expect(rms(out), `${frequency} Hz`).toBeLessThan(0.005);
    }
  });

  it("keeps a constant constant up to the edges, and returns the same samples at the same rate", () => {
    const dc = resample(new Float32Array(44_100).fill(0.25), 44_100, 16_000);
    expect(Math.max(...dc.map((x) => Math.abs(x - 0.25)))).toBeLessThan(1e-6);
    const same = sine(0.1, 16_000, 440);
    expect(resample(same, 16_000, 16_000)).toBe(same);
  });
});

describe("mixDown", () => {
  it("averages the channels of every sample width and encoding to the same signal", () => {
    const left = sine(0.5, 16_000, 440, 0.6);
    const right = sine(0.5, 16_000, 660, 0.2);
    const reference = Float32Array.from(left, (x, i) => (x + (right[i] as number)) / 2);
    for (const [bits, encoding, tolerance] of [
      [8, "pcm", 1 / 64],
      [16, "pcm", 1e-4],
      [24, "pcm", 1e-6],
      [32, "pcm", 1e-6],
      [32, "float", 1e-7],
      [64, "float", 1e-7],
    ] as const) {
      const bytes = wav({
        sampleRate: 16_000,
        channels: [left, right],
        bits,
        encoding,
        extensible: bits === 24,
      });
      const mono = mixDown(bytes, readWav(bytes) as NonNullable<ReturnType<typeof readWav>>);
      expect(mono.length).toBe(reference.length);
      const worst = Math.max(...mono.map((x, i) => Math.abs(x - (reference[i] as number))));
      expect(worst, `${bits}-bit ${encoding}`).toBeLessThan(tolerance);
    }
    // Opposite channels cancel: the mean, not the first channel, is taken.
    const cancel = wav({ sampleRate: 16_000, channels: [left, left.map((x) => -x)] });
    expect(rms(mixDown(cancel, readWav(cancel) as NonNullable<ReturnType<typeof readWav>>))).toBeLessThan(
      1e-4,
    );
  });

  it("reads NaN and over-range floats as silence and full scale", () => {
    const bytes = wav({ sampleRate: 16_000, channels: [new Float32Array(4)], bits: 32, encoding: "float" });
    const layout = readWav(bytes) as NonNullable<ReturnType<typeof readWav>>;
    [Number.NaN, 3, -3, 0.5].forEach((x, i) => void bytes.writeFloatLE(x, layout.dataOffset + i * 4));
    expect([...mixDown(bytes, layout)]).toEqual([0, 1, -1, 0.5]);
  });

  it.skipIf(noSox)("decodes A-law and µ-law as sox encodes them (needs sox)", async () => {
    const source = wav({ sampleRate: 8_000, channels: [sine(0.5, 8_000, 440, 0.5)] });
    const dir = await mkdtemp(path.join(tmpdir(), "x402m-pcm-test-"));
    try {
      await writeFile(path.join(dir, "in.wav"), source);
      for (const encoding of ["a-law", "mu-law"]) {
        const out = path.join(dir, `${encoding}.wav`);
        await promisify(execFile)("sox", [path.join(dir, "in.wav"), "-e", encoding, out]);
        const bytes = await readFile(out);
        const layout = readWav(bytes);
        expect(layout?.encoding).toBe(encoding === "a-law" ? "alaw" : "mulaw");
        const mono = mixDown(bytes, layout as NonNullable<typeof layout>);
        expect(amplitudeAt(mono, 8_000, 440), encoding).toBeCloseTo(0.5, 2);
        expect(
          rms(mono.map((x, i) => x - 0.5 * Math.sin((2 * Math.PI * 440 * i) / 8_000))),
          encoding,
        ).toBeLessThan(0.01);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("toSpeechPcm", () => {
  it("turns a 44.1 kHz stereo WAV into 16 kHz mono 16-bit samples", async () => {
    const bytes = wav({ sampleRate: 44_100, channels: [sine(1, 44_100, 440), sine(1, 44_100, 440)] });
    const pcm = await toSpeechPcm(bytes, probeAudio(bytes));
    expect(pcm).toBeInstanceOf(Int16Array);
    expect(pcm.length).toBe(SPEECH_SAMPLE_RATE);
    expect(amplitudeAt(pcm, 16_000, 440, 32_767)).toBeCloseTo(0.5, 2);
  });

  it.skipIf(noLame)(
    "decodes an MP3 through lame, then mixes down and resamples it (needs lame)",
    async () => {
      const source = wav({ sampleRate: 44_100, channels: [sine(2, 44_100, 440), sine(2, 44_100, 440)] });
      const bytes = await mp3(source, ["-b", "128"]);
      const pcm = await toSpeechPcm(bytes, probeAudio(bytes));
      // lame drops its own delay; the padding of the last frame stays.
      expect(pcm.length / 16_000).toBeGreaterThanOrEqual(2);
      expect(pcm.length / 16_000).toBeLessThan(2.1);
      expect(amplitudeAt(pcm, 16_000, 440, 32_767, 2_000)).toBeCloseTo(0.5, 1);
      expect(amplitudeAt(pcm, 16_000, 1_000, 32_767, 2_000)).toBeLessThan(0.01);
    },
  );

  it.skipIf(noLame)(
    "answers 503 with the install command when lame is missing, and honours an abort (needs lame)",
    async () => {
      const bytes = await mp3(wav({ sampleRate: 16_000, channels: [sine(1, 16_000, 440)] }));
      const info = probeAudio(bytes);
      const missing = await toSpeechPcm(bytes, info, { lame: "no-such-lame-x402m" }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(ProgramFailedError);
      expect(missing).toMatchObject({ status: 503, code: "engine_unavailable" });
      expect((missing as Error).message).toMatch(/apt-get install -y lame/);
      const reason = new Error("gone");
      await expect(toSpeechPcm(bytes, info, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    },
  );
});
