/**
 * Flite (CMU, BSD-style licence; Debian's `flite`) as a speech engine: English voices, clear enough to
 * transcribe back. The program runs as its own process: the text goes in a file of a private temporary
 * directory (`-f`), never in an argument, so no text is ever read as an option; the WAV comes back in a
 * file of the same directory and is encoded by `encode.ts`.
 *
 * Voices are what `flite -lv` lists, except the limited-domain ones (`awb_time` speaks clock times only:
 * any other text comes out as noise). The voices Debian ships are CMU's US English recordings
 * (`cmu_us_*`), whose speakers' genders CMU documents: slt is a woman, kal, awb and rms are men. A voice
 * this table does not know (a flite built with others) is listed with gender null.
 */
import { writeFile } from "node:fs/promises";
import { BadInputError } from "../../../../common/errors.ts";
import { encode } from "../encode.ts";
import type { Availability, SpeechAudio, SpeechEngine, SpeechRequest, Voice } from "../engine.ts";
import { readOutput, runProgram, withTempDir } from "../program.ts";
import {
  checkSpeechRequest,
  type OfflineSpeechSettings,
  offlineAvailability,
  offlineSpeechSetup,
  voiceListing,
} from "./offline-speech.ts";

export type FliteSettings = OfflineSpeechSettings;

/** What CMU documents of the voices Debian's flite ships: US English, and the speaker's gender. */
const KNOWN_VOICES = new Map<string, { name: string; gender: Voice["gender"] }>([
  ["slt", { name: "SLT (US English, female)", gender: "female" }],
  ["kal", { name: "KAL (US English, male, 8 kHz diphone)", gender: "male" }],
  ["kal16", { name: "KAL16 (US English, male, 16 kHz diphone)", gender: "male" }],
  ["awb", { name: "AWB (US English lexicon, Scottish male speaker)", gender: "male" }],
  ["rms", { name: "RMS (US English, male)", gender: "male" }],
]);

/** Flite's own rate option is a duration multiplier: OpenAI's speed 2 is half the duration. */
export function fliteDurationStretch(speed: number): number {
  return 1 / speed;
}

/**
 * Parses `flite -lv` ("Voices available: kal awb_time kal16 awb rms slt") into catalogue voices, in
 * flite's order, without the limited-domain voices.
 */
export function parseFliteVoices(listing: string): Voice[] {
  const match = /Voices available:(.*)/.exec(listing);
  if (!match) return [];
  return (match[1] ?? "")
    .trim()
    .split(/\s+/)
    .filter((name) => name !== "" && !name.endsWith("_time"))
    .map((name) => ({
      id: `flite:${name}`,
      name: KNOWN_VOICES.get(name)?.name ?? name,
      provider: "flite",
      languages: ["en-US", "en"],
      gender: KNOWN_VOICES.get(name)?.gender ?? null,
    }));
}

/**
 * The flite speech engine.
 *
 * @example
 * const engine = fliteEngine();
 * if ((await engine.available()).ok)
 *   await engine.speak({ text: "Hello.", voice: "slt", format: "mp3", speed: 1 }, AbortSignal.timeout(30_000));
 */
export function fliteEngine(settings: FliteSettings = {}): SpeechEngine {
  const { program, encoders, timeoutMs, maxBytes, needed, formats, packages } = offlineSpeechSetup(
    settings,
    "flite",
    "flite",
  );
  const voices = voiceListing(program, ["-lv"], "flite", parseFliteVoices);

  return {
    name: "flite",
    formats,
    packages,
    available: (): Promise<Availability> => offlineAvailability("flite", needed, voices),
    voices,
    async speak(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio> {
      checkSpeechRequest("flite", formats, request);
      if (!(await voices()).some((voice) => voice.id === `flite:${request.voice}`))
        throw new BadInputError(`flite has no voice ${request.voice}`, "voice_not_found", "voice");
      const wav = await withTempDir(async (dir) => {
        const textFile = `${dir}/input.txt`;
        const wavFile = `${dir}/speech.wav`;
        await writeFile(textFile, request.text, "utf8");
        await runProgram({
          program,
          // biome-ignore format: options and their values read best in pairs.
          args: ["-voice", request.voice, "--setf", `duration_stretch=${fliteDurationStretch(request.speed)}`, "-f", textFile, "-o", wavFile],
          timeoutMs,
          signal,
          label: "flite",
        });
        return readOutput(wavFile, maxBytes, "flite");
      });
      return encode(wav, request.format, { programs: encoders, timeoutMs, maxBytes, signal });
    },
  };
}
