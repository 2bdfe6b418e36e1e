/**
 * eSpeak NG (Debian's `espeak-ng`, GPL-3.0) as a speech engine: about 130 languages and accents, robotic
 * but intelligible. GPL is why it is only ever executed as its own program, never bundled or linked.
 * The text goes to its standard input (`--stdin`, read whole), never in an argument, so no text is ever
 * read as an option; SSML is off (no `-m`), so markup is spoken as text.
 *
 * Voices are what `espeak-ng --voices` lists: one per language or accent, id `espeak-ng:<language>` as
 * espeak-ng names it (`espeak-ng:en-us`), written as BCP 47 in `languages` with the other languages
 * espeak-ng says the voice serves (`cmn` also serves `zh`). Where espeak-ng lists two voices under one
 * language (`yue`: Cantonese in Chinese characters, and in Jyutping), the second takes its file's name
 * (`espeak-ng:yue-latn-jyutping`). MBROLA voices (`mb/`) need a separate synthesiser and are left out.
 *
 * Speed: espeak-ng's rate is words per minute, 175 by default, from 80 up (it speeds up past 450 with
 * its own time-stretcher). OpenAI's 0.25-4 maps to 175 × speed; below 80 wpm (speed < 0.46) espeak-ng
 * speaks at 80 and sox's `tempo` slows the rest, or, without sox, 80 wpm is the slowest.
 */
import { BadInputError } from "../../../../common/errors.ts";
import { changeTempo, encode } from "../encode.ts";
import type { Availability, SpeechAudio, SpeechEngine, SpeechRequest, Voice } from "../engine.ts";
import { findProgram, readOutput, runProgram, withTempDir } from "../program.ts";
import { languageTag } from "../voices.ts";
import {
  checkSpeechRequest,
  type OfflineSpeechSettings,
  offlineAvailability,
  offlineSpeechSetup,
  voiceListing,
} from "./offline-speech.ts";

export type EspeakSettings = OfflineSpeechSettings;

/** espeak-ng's default rate and the slowest it speaks, in words per minute. */
export const ESPEAK_DEFAULT_WPM = 175;
export const ESPEAK_MIN_WPM = 80;

/** An espeak-ng voice: the catalogue's entry and the voice file espeak-ng's `-v` takes. */
export interface EspeakVoice extends Voice {
  /** e.g. `gmw/en-US`: unambiguous where a language names two voices. */
  file: string;
}

/**
 * Parses `espeak-ng --voices`: a header, then `Pty Language Age/Gender VoiceName File (Other Languages)`
 * columns separated by spaces (names use `_` for spaces, so the columns never contain one).
 */
export function parseEspeakVoices(listing: string): EspeakVoice[] {
  const voices: EspeakVoice[] = [];
  const seen = new Set<string>();
  for (const line of listing.split("\n")) {
    const match = /^\s*\d+\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const [, language = "", ageGender = "", voiceName = "", file = "", others = ""] = match;
    if (file.startsWith("mb/") || language === "variant") continue;
    let name = language.toLowerCase();
    if (seen.has(name)) name = (file.split("/").at(-1) ?? file).toLowerCase();
    if (seen.has(name)) continue;
    seen.add(name);
    const sex = ageGender.split("/")[1];
    const tags = [language, ...[...others.matchAll(/\(([^\s)]+)\s+\d+\)/g)].map((m) => m[1] ?? "")]
      .filter(Boolean)
      .map(languageTag);
    const primary = tags[0]?.split("-")[0];
    if (primary && !tags.includes(primary)) tags.push(primary);
    voices.push({
      id: `espeak-ng:${name}`,
      name: voiceName.replaceAll("_", " ").trim(),
      provider: "espeak-ng",
      languages: [...new Set(tags)],
      gender: sex === "F" ? "female" : sex === "M" ? "male" : null,
      file,
    });
  }
  return voices;
}

/**
 * espeak-ng's rate for OpenAI's speed, and the tempo change sox must add when that rate is below the
 * slowest espeak-ng speaks (1 when none is needed).
 */
export function espeakRate(speed: number): { wpm: number; tempo: number } {
  const wpm = Math.round(ESPEAK_DEFAULT_WPM * speed);
  if (wpm >= ESPEAK_MIN_WPM) return { wpm, tempo: 1 };
  return { wpm: ESPEAK_MIN_WPM, tempo: (ESPEAK_DEFAULT_WPM * speed) / ESPEAK_MIN_WPM };
}

/**
 * The espeak-ng speech engine.
 *
 * @example
 * const engine = espeakEngine();
 * await engine.speak({ text: "Bonjour.", voice: "fr-fr", format: "mp3", speed: 1 }, AbortSignal.timeout(30_000));
 */
export function espeakEngine(settings: EspeakSettings = {}): SpeechEngine {
  const { program, encoders, timeoutMs, maxBytes, needed, formats, packages } = offlineSpeechSetup(
    settings,
    "espeak-ng",
    "espeak-ng",
  );
  const listing = voiceListing(program, ["--voices"], "espeak-ng", parseEspeakVoices);
  const voices = async (): Promise<Voice[]> => (await listing()).map(({ file: _file, ...voice }) => voice);

  return {
    name: "espeak-ng",
    formats,
    packages,
    available: (): Promise<Availability> => offlineAvailability("espeak-ng", needed, listing),
    voices,
    async speak(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio> {
      checkSpeechRequest("espeak-ng", formats, request);
      const voice = (await listing()).find((v) => v.id === `espeak-ng:${request.voice}`);
      if (!voice)
        throw new BadInputError(`espeak-ng has no voice ${request.voice}`, "voice_not_found", "voice");
      const { wpm, tempo } = espeakRate(request.speed);
      let wav = await withTempDir(async (dir) => {
        const wavFile = `${dir}/speech.wav`;
        await runProgram({
          program,
          // -b 1: the text is UTF-8 whatever the locale.
          args: ["-v", voice.file, "-s", String(wpm), "-b", "1", "-w", wavFile, "--stdin"],
          stdin: Buffer.from(request.text, "utf8"),
          timeoutMs,
          signal,
          label: "espeak-ng",
        });
        return readOutput(wavFile, maxBytes, "espeak-ng");
      });
      if (tempo !== 1 && findProgram(encoders.sox) !== null)
        wav = await changeTempo(wav, tempo, { sox: encoders.sox, timeoutMs, maxBytes, signal });
      return encode(wav, request.format, { programs: encoders, timeoutMs, maxBytes, signal });
    },
  };
}
