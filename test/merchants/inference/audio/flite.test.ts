import { describe, expect, it } from "vitest";
import {
  fliteDurationStretch,
  fliteEngine,
  parseFliteVoices,
} from "../../../../src/merchants/inference/audio/engines/flite.ts";
import { describeOfflineEngine } from "./offline-engine-cases.ts";

describeOfflineEngine({ program: "flite", make: fliteEngine, voice: "slt", sampleRate: 16_000 });

describe("flite's voices", () => {
  it("lists what flite -lv lists, less the limited-domain voices, with the genders CMU documents", () => {
    const voices = parseFliteVoices("Voices available: kal awb_time kal16 awb rms slt \n");
    expect(voices.map((v) => v.id)).toEqual([
      "flite:kal",
      "flite:kal16",
      "flite:awb",
      "flite:rms",
      "flite:slt",
    ]);
    expect(voices.find((v) => v.id === "flite:slt")).toMatchObject({
      provider: "flite",
      languages: ["en-US", "en"],
      gender: "female",
    });
    expect(voices.filter((v) => v.gender === "male").map((v) => v.id)).toEqual([
      "flite:kal",
      "flite:kal16",
      "flite:awb",
      "flite:rms",
    ]);
  });

  it("gives a voice it does not know no gender rather than a guess, and reads no voices from other output", () => {
    expect(parseFliteVoices("Voices available: cmu_us_ljm")[0]).toMatchObject({
      id: "flite:cmu_us_ljm",
      gender: null,
    });
    expect(parseFliteVoices("flite: command not found")).toEqual([]);
  });

  it("reads this machine's flite", async () => {
    const ids = (await fliteEngine().voices()).map((v) => v.id);
    expect(ids).toContain("flite:slt");
    expect(ids).not.toContain("flite:awb_time");
  });

  it("speaks every voice it lists", async () => {
    const engine = fliteEngine();
    for (const voice of await engine.voices()) {
      const name = voice.id.slice("flite:".length);
      const { audio } = await engine.speak(
        { text: "One two three.", voice: name, format: "wav", speed: 1 },
        AbortSignal.timeout(10_000),
      );
      expect(audio.byteLength).toBeGreaterThan(8_000);
    }
  });

  it("stretches duration by the inverse of OpenAI's speed", () => {
    expect(fliteDurationStretch(1)).toBe(1);
    expect(fliteDurationStretch(0.25)).toBe(4);
    expect(fliteDurationStretch(4)).toBe(0.25);
  });
});
