/**
 * What every offline speech engine must do, as one set of tests each engine's file runs with its own
 * program: speak real audio, honour speed and format, never read text as options, die when aborted, and
 * say what to install when its program is missing.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { PCM_SAMPLE_RATE, wavInfo } from "../../../../src/merchants/inference/audio/encode.ts";
import type { SpeechEngine, SpeechFormat } from "../../../../src/merchants/inference/audio/engine.ts";
import { alive, childrenOf, commandName, eventually } from "../../../helpers/process.ts";
import { flacInfo, loudness, walkMp3 } from "./audio-checks.ts";

export interface OfflineEngineCase {
  /** The Debian program and package (`flite`, `espeak-ng`). */
  program: string;
  make(settings?: { program?: string; encoders?: { lame?: string; sox?: string } }): SpeechEngine;
  voice: string;
  sampleRate: number;
}

export const SENTENCE = "The quick brown fox jumps over the lazy dog.";

/** A private directory removed when the test ends. */
export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "audio-engine-test-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function describeOfflineEngine(c: OfflineEngineCase): void {
  const engine = c.make();
  const say = (text: string, speed = 1, format: SpeechFormat = "wav", signal = AbortSignal.timeout(20_000)) =>
    engine.speak({ text, voice: c.voice, format, speed }, signal);

  describe(`${c.program} speaking`, () => {
    it("speaks a known sentence into audible WAV of a plausible length", async () => {
      const { audio, contentType } = await say(SENTENCE);
      expect(contentType).toBe("audio/wav");
      const info = wavInfo(audio);
      expect(info).toMatchObject({ sampleRate: c.sampleRate, channels: 1, bitsPerSample: 16 });
      // Nine words at 120 to 300 words a minute, with the pauses engines add at the ends.
      expect(info.durationSeconds).toBeGreaterThan(1.5);
      expect(info.durationSeconds).toBeLessThan(5);
      expect(loudness(audio)).toBeGreaterThan(0.02);
    });

    it("speaks longer for a longer text", async () => {
      const one = wavInfo((await say(SENTENCE)).audio).durationSeconds;
      const three = wavInfo((await say(`${SENTENCE} ${SENTENCE} ${SENTENCE}`)).audio).durationSeconds;
      expect(three).toBeGreaterThan(2.5 * one);
    });

    it("maps speed onto the program's rate: slower is longer, faster is shorter", async () => {
      const duration = async (speed: number) => wavInfo((await say(SENTENCE, speed)).audio).durationSeconds;
      const [quarter, half, normal, double, quadruple] = await Promise.all(
        [0.25, 0.5, 1, 2, 4].map(duration),
      );
      expect(half).toBeGreaterThan(1.6 * (normal as number));
      expect(quarter).toBeGreaterThan(3 * (normal as number));
      expect(double).toBeLessThan(0.7 * (normal as number));
      expect(quadruple).toBeLessThan(double as number);
    });

    it("answers every format it lists, each what it says it is", async () => {
      expect(engine.formats).toEqual(["mp3", "wav", "flac", "pcm"]);
      const wav = wavInfo((await say(SENTENCE)).audio);
      for (const format of engine.formats) {
        const { audio, contentType } = await say(SENTENCE, 1, format);
        if (format === "mp3") {
          expect(contentType).toBe("audio/mpeg");
          const mp3 = walkMp3(audio);
          expect(mp3).toMatchObject({ sampleRate: 24_000, channels: 1 });
          expect(Math.abs(mp3.durationSeconds - wav.durationSeconds)).toBeLessThan(0.15);
        } else if (format === "flac") {
          expect(contentType).toBe("audio/flac");
          expect(flacInfo(audio)).toMatchObject({ sampleRate: c.sampleRate, channels: 1, bits: 16 });
          expect(flacInfo(audio).durationSeconds).toBeCloseTo(wav.durationSeconds, 3);
        } else if (format === "pcm") {
          expect(contentType).toBe("audio/pcm");
          expect(Math.abs(audio.byteLength / 2 / PCM_SAMPLE_RATE - wav.durationSeconds)).toBeLessThan(0.01);
        } else {
          expect(wavInfo(audio).durationSeconds).toBe(wav.durationSeconds);
        }
      }
    });

    it("speaks text that starts with - or holds quotes and shell syntax, never obeying it", async () => {
      const dir = tempDir();
      const hostile = `-o ${dir}/evil.wav --help -voice kal "quoted" 'single' $(touch ${dir}/x) \`touch ${dir}/y\``;
      const { audio } = await say(hostile);
      expect(fs.readdirSync(dir)).toEqual([]);
      // It said the words: as long as the same words without the punctuation, give or take the pauses.
      const plain = hostile.replace(/[-"'$()`]/g, " ");
      const spoken = wavInfo(audio).durationSeconds;
      expect(spoken).toBeGreaterThan(0.8 * wavInfo((await say(plain)).audio).durationSeconds);
      expect(loudness(audio)).toBeGreaterThan(0.02);
    });

    it("kills the program when the caller aborts", async () => {
      const controller = new AbortController();
      const reason = new Error("the caller left");
      const speaking = say(`${SENTENCE} `.repeat(60), 0.25, "mp3", controller.signal);
      speaking.catch(() => undefined);
      let pid = 0;
      const seen = await eventually(() => {
        pid = childrenOf(process.pid).find((p) => commandName(p) === c.program.slice(0, 15)) ?? 0;
        return pid !== 0;
      }, 10_000);
      expect(seen).toBe(true);
      controller.abort(reason);
      await expect(speaking).rejects.toBe(reason);
      expect(await eventually(() => !alive(pid), 2_000)).toBe(true);
    });

    it("refuses a voice or a format it does not have", async () => {
      await expect(
        engine.speak(
          { text: "hi", voice: "no-such-voice", format: "mp3", speed: 1 },
          AbortSignal.timeout(5_000),
        ),
      ).rejects.toMatchObject({ status: 400, code: "voice_not_found" });
      await expect(say("hi", 1, "opus")).rejects.toMatchObject({ status: 400, code: "unsupported_format" });
      await expect(say("hi", 5)).rejects.toMatchObject({ status: 400 });
    });
  });

  describe(`${c.program} availability`, () => {
    it("is available with its program and lame", async () => {
      expect(await engine.available()).toEqual({ ok: true });
    });

    it("says what is missing, and lists the packages of every program it runs", async () => {
      expect(await c.make({ program: `/nonexistent/${c.program}` }).available()).toEqual({
        ok: false,
        reason: `not installed on this server: /nonexistent/${c.program}`,
      });
      const bare = c.make({ program: `/nonexistent/${c.program}`, encoders: { lame: "/nonexistent/lame" } });
      expect(await bare.available()).toEqual({
        ok: false,
        reason: `not installed on this server: /nonexistent/${c.program}, /nonexistent/lame`,
      });
      expect(bare.packages).toEqual([c.program, "lame", "sox"]);
    });

    it("lists only the formats whose encoder is installed", () => {
      expect(c.make({ encoders: { sox: "/nonexistent/sox" } }).formats).toEqual(["mp3", "wav"]);
    });

    it("is not available when its program is there but does not run", async () => {
      const program = path.join(tempDir(), c.program);
      fs.writeFileSync(program, "#!/bin/sh\necho 'data files missing' >&2\nexit 1\n", { mode: 0o755 });
      expect(await c.make({ program }).available()).toMatchObject({
        ok: false,
        reason: expect.stringContaining("data files missing"),
      });
    });
  });
}
