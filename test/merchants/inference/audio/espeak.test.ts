import { describe, expect, it } from "vitest";
import { wavInfo } from "../../../../src/merchants/inference/audio/encode.ts";
import {
  ESPEAK_MIN_WPM,
  espeakEngine,
  espeakRate,
  parseEspeakVoices,
} from "../../../../src/merchants/inference/audio/engines/espeak.ts";
import { describeOfflineEngine, SENTENCE } from "./offline-engine-cases.ts";

describeOfflineEngine({ program: "espeak-ng", make: espeakEngine, voice: "en-us", sampleRate: 22_050 });

// Lines of `espeak-ng --voices` (1.51) and of `--voices=en`, which also lists MBROLA voices.
const LISTING = `Pty Language       Age/Gender VoiceName          File                 Other Languages
 5  af              --/M      Afrikaans          gmw/af               
 5  chr-US-Qaaa-x-west --/M      Cherokee_          iro/chr              
 5  cmn             --/M      Chinese_(Mandarin,_latin_as_English) sit/cmn              (zh-cmn 5)(zh 5)
 2  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)
 5  en-gb-x-rp      --/M      English_(Received_Pronunciation) gmw/en-GB-x-rp       (en-gb 4)(en 5)
 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)
 5  en-us           --/F      us-mbrola-1        mb/mb-us1            (en 8)
 5  es-419          --/M      Spanish_(Latin_America) roa/es-419           (es-mx 6)(es 6)
 5  yue             --/M      Chinese_(Cantonese) sit/yue              (zh-yue 5)(zh 8)
 5  yue             --/M      Chinese_(Cantonese,_latin_as_Jyutping) sit/yue-Latn-jyutping (zh-yue 5)(zh 8)
 5  variant         --/F      Alicia             !v/Alicia            
`;

describe("espeak-ng's voices", () => {
  const voices = parseEspeakVoices(LISTING);

  it("reads one voice a line with its language as BCP 47, the other languages it serves, and its gender", () => {
    expect(voices.find((v) => v.id === "espeak-ng:en-gb-x-rp")).toEqual({
      id: "espeak-ng:en-gb-x-rp",
      name: "English (Received Pronunciation)",
      provider: "espeak-ng",
      languages: ["en-GB-x-rp", "en-GB", "en"],
      gender: "male",
      file: "gmw/en-GB-x-rp",
    });
    expect(voices.find((v) => v.id === "espeak-ng:cmn")?.languages).toEqual(["cmn", "zh-cmn", "zh"]);
    expect(voices.find((v) => v.id === "espeak-ng:es-419")?.languages).toEqual(["es-419", "es-MX", "es"]);
    expect(voices.find((v) => v.id === "espeak-ng:af")?.languages).toEqual(["af"]);
    // espeak-ng writes the region before the script; BCP 47 the other way round.
    expect(voices.find((v) => v.id === "espeak-ng:chr-us-qaaa-x-west")).toMatchObject({
      name: "Cherokee",
      languages: ["chr-Qaaa-US-x-west", "chr"],
    });
  });

  it("keeps ids unique, leaves out MBROLA voices and variants", () => {
    expect(voices.map((v) => v.id)).toEqual([
      "espeak-ng:af",
      "espeak-ng:chr-us-qaaa-x-west",
      "espeak-ng:cmn",
      "espeak-ng:en-gb",
      "espeak-ng:en-gb-x-rp",
      "espeak-ng:en-us",
      "espeak-ng:es-419",
      "espeak-ng:yue",
      "espeak-ng:yue-latn-jyutping",
    ]);
    expect(voices.find((v) => v.id === "espeak-ng:yue-latn-jyutping")?.file).toBe("sit/yue-Latn-jyutping");
  });

  it("reads this machine's espeak-ng: about 130 languages, ids unique", async () => {
    const list = await espeakEngine().voices();
    expect(list.length).toBeGreaterThan(100);
    expect(new Set(list.map((v) => v.id)).size).toBe(list.length);
    expect(list.find((v) => v.id === "espeak-ng:fr-fr")?.languages).toEqual(["fr-FR", "fr"]);
    expect(list.every((v) => !("file" in v))).toBe(true);
  });

  it("speaks a voice by its file where a language has two", async () => {
    const engine = espeakEngine();
    const say = (voice: string) =>
      engine.speak({ text: "nei5 hou2", voice, format: "wav", speed: 1 }, AbortSignal.timeout(10_000));
    const [characters, jyutping] = await Promise.all([say("yue"), say("yue-latn-jyutping")]);
    expect(Buffer.from(characters.audio).equals(Buffer.from(jyutping.audio))).toBe(false);
  });

  it("speaks other languages", async () => {
    const { audio } = await espeakEngine().speak(
      {
        text: "Le renard brun saute par-dessus le chien paresseux.",
        voice: "fr-fr",
        format: "wav",
        speed: 1,
      },
      AbortSignal.timeout(10_000),
    );
    expect(wavInfo(audio).durationSeconds).toBeGreaterThan(1.5);
  });
});

describe("espeak-ng's rate", () => {
  it("is 175 words a minute times the speed, and sox's tempo below its slowest 80", () => {
    expect(espeakRate(1)).toEqual({ wpm: 175, tempo: 1 });
    expect(espeakRate(4)).toEqual({ wpm: 700, tempo: 1 });
    expect(espeakRate(0.5)).toEqual({ wpm: 88, tempo: 1 });
    expect(espeakRate(0.25)).toEqual({ wpm: ESPEAK_MIN_WPM, tempo: 0.546875 });
  });

  it("without sox, speaks at its slowest rather than failing", async () => {
    const engine = espeakEngine({ encoders: { sox: "/nonexistent/sox" } });
    const speak = (speed: number) =>
      engine.speak({ text: SENTENCE, voice: "en-us", format: "wav", speed }, AbortSignal.timeout(10_000));
    const [slowest, quarter] = await Promise.all([speak(80 / 175), speak(0.25)]);
    expect(wavInfo(quarter.audio).durationSeconds).toBe(wavInfo(slowest.audio).durationSeconds);
  });
});
