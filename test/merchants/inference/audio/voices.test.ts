import { describe, expect, it } from "vitest";
import type { Availability, SpeechEngine, Voice } from "../../../../src/merchants/inference/audio/engine.ts";
import { espeakEngine } from "../../../../src/merchants/inference/audio/engines/espeak.ts";
import { fliteEngine } from "../../../../src/merchants/inference/audio/engines/flite.ts";
import {
  languageTag,
  OPENAI_VOICE_MAP,
  OPENAI_VOICES,
  speaksLanguage,
  voiceCatalogue,
} from "../../../../src/merchants/inference/audio/voices.ts";

/** An engine that lists voices but cannot speak: the catalogue only lists and resolves. */
function engine(name: string, voices: Omit<Voice, "provider">[], availability: Availability = { ok: true }) {
  return {
    name,
    formats: ["wav"],
    available: async () => availability,
    voices: async () => voices.map((v) => ({ ...v, provider: name })),
    speak: async () => {
      throw new Error(`${name} does not speak in these tests`);
    },
  } satisfies SpeechEngine;
}

const v = (id: string, languages: string[], gender: Voice["gender"] = null) => ({
  id,
  name: id,
  languages,
  gender,
});
const flite = engine("flite", [
  v("flite:slt", ["en-US", "en"], "female"),
  v("flite:kal", ["en-US", "en"], "male"),
  v("flite:awb", ["en-US", "en"], "male"),
  v("flite:rms", ["en-US", "en"], "male"),
  v("flite:kal16", ["en-US", "en"], "male"),
]);
const espeak = engine("espeak-ng", [
  v("espeak-ng:fr-fr", ["fr-FR", "fr"], "male"),
  v("espeak-ng:en-us", ["en-US", "en"], "male"),
  v("espeak-ng:en-gb-x-rp", ["en-GB-x-rp", "en-GB", "en"], "male"),
  v("espeak-ng:cmn", ["cmn", "zh-cmn", "zh"], "male"),
]);
const missing = { ok: false, reason: "not installed on this server: flite" } as const;

describe("the voice catalogue", () => {
  it("lists every available engine's voices: engines in order, each sorted by id", async () => {
    const page = await voiceCatalogue([flite, espeak]).list();
    expect(page.data.map((x) => x.id)).toEqual([
      "flite:awb",
      "flite:kal",
      "flite:kal16",
      "flite:rms",
      "flite:slt",
      "espeak-ng:cmn",
      "espeak-ng:en-gb-x-rp",
      "espeak-ng:en-us",
      "espeak-ng:fr-fr",
    ]);
    expect(page).toMatchObject({ first_id: "flite:awb", last_id: "espeak-ng:fr-fr", has_more: false });
  });

  it("leaves out engines that cannot run here", async () => {
    const absent = engine("flite", [v("flite:slt", ["en"])], missing);
    expect((await voiceCatalogue([absent, espeak]).all()).every((x) => x.provider === "espeak-ng")).toBe(
      true,
    );
  });

  it("filters by provider, gender and language (a language matches its more specific tags, any case)", async () => {
    const catalogue = voiceCatalogue([flite, espeak]);
    const ids = async (query: Parameters<typeof catalogue.list>[0]) =>
      (await catalogue.list(query)).data.map((x) => x.id);
    expect(await ids({ provider: "ESPEAK-NG", language: "fr" })).toEqual(["espeak-ng:fr-fr"]);
    expect(await ids({ gender: "female" })).toEqual(["flite:slt"]);
    expect(await ids({ language: "en-gb" })).toEqual(["espeak-ng:en-gb-x-rp"]);
    expect(await ids({ language: "zh" })).toEqual(["espeak-ng:cmn"]);
    expect(await ids({ language: "e" })).toEqual([]);
    expect((await ids({ language: "EN" })).length).toBe(7);
    expect(await ids({ provider: "upstream" })).toEqual([]);
  });

  it("pages with limit and an after cursor, as OpenAI's lists do, and says when more remain", async () => {
    const catalogue = voiceCatalogue([flite, espeak]);
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await catalogue.list({ limit: 2, after });
      seen.push(...page.data.map((x) => x.id));
      expect(page.data.length).toBeLessThanOrEqual(2);
      if (!page.has_more) break;
      after = page.last_id ?? undefined;
    }
    expect(seen).toEqual((await catalogue.list()).data.map((x) => x.id));
    const last = await catalogue.list({ after: "espeak-ng:fr-fr" });
    expect(last).toEqual({ data: [], first_id: null, last_id: null, has_more: false });
  });

  it("keeps its place when the cursor's voice has gone, or the list grew meanwhile", async () => {
    const before = voiceCatalogue([flite, espeak]);
    const first = await before.list({ limit: 3 });
    expect(first.last_id).toBe("flite:kal16");
    const grown = engine("flite", [v("flite:aaa", ["en"]), v("flite:slt", ["en"]), v("flite:rms", ["en"])]);
    const next = await voiceCatalogue([grown, espeak]).list({ limit: 2, after: first.last_id ?? "" });
    expect(next.data.map((x) => x.id)).toEqual(["flite:rms", "flite:slt"]);
  });

  it("refuses a limit outside 1-500 and a cursor that is no voice id", async () => {
    const catalogue = voiceCatalogue([flite]);
    for (const limit of [0, 501, 2.5])
      await expect(catalogue.list({ limit })).rejects.toMatchObject({ status: 400, param: "limit" });
    await expect(catalogue.list({ limit: 500 })).resolves.toMatchObject({ has_more: false });
    await expect(catalogue.list({ after: "alloy" })).rejects.toMatchObject({ status: 400, param: "after" });
    await expect(catalogue.list({ after: "piper:x" })).rejects.toMatchObject({ status: 400, param: "after" });
  });
});

describe("resolving a request's voice", () => {
  it("takes a catalogue id to its engine and the engine's own name", async () => {
    const resolved = await voiceCatalogue([flite, espeak]).resolve("espeak-ng:en-gb-x-rp");
    expect(resolved).toEqual({ engine: espeak, voice: "en-gb-x-rp", id: "espeak-ng:en-gb-x-rp" });
    expect((await voiceCatalogue([flite]).resolve("FLITE:slt")).id).toBe("flite:slt");
  });

  it("refuses an unknown voice with a 400 before any work", async () => {
    const catalogue = voiceCatalogue([flite, espeak]);
    for (const voice of ["flite:nobody", "piper:amy", "nobody", "", "constructor", "toString", "flite:"])
      await expect(catalogue.resolve(voice)).rejects.toMatchObject({ status: 400, code: "voice_not_found" });
  });

  it("answers 503 for a voice of an engine that cannot run here, with the command installing every speech engine", async () => {
    const absent = {
      ...engine("flite", [v("flite:slt", ["en"])], missing),
      packages: ["flite", "lame", "sox"],
    };
    const other = { ...espeak, packages: ["espeak-ng", "lame", "sox"] };
    await expect(voiceCatalogue([absent, other]).resolve("flite:slt")).rejects.toMatchObject({
      status: 503,
      code: "engine_unavailable",
      message:
        "the flite speech engine cannot run on this server (not installed on this server: flite); the operator installs the speech programs with: apt-get install -y flite espeak-ng lame sox; nothing was charged",
    });
  });

  it("maps every OpenAI name to an offline voice without an upstream: flite first, else espeak-ng", async () => {
    const both = voiceCatalogue([flite, espeak]);
    for (const name of OPENAI_VOICES) {
      const resolved = await both.resolve(name);
      expect(resolved.id).toBe(OPENAI_VOICE_MAP[name][0]);
      expect(resolved.engine).toBe(flite);
    }
    expect((await both.resolve("alloy")).voice).toBe("slt");
    expect((await both.resolve("Nova")).id).toBe("flite:slt");
    const noFlite = voiceCatalogue([engine("flite", [v("flite:slt", ["en"])], missing), espeak]);
    expect(await noFlite.resolve("onyx")).toEqual({ engine: espeak, voice: "en-us", id: "espeak-ng:en-us" });
  });

  it("sends OpenAI's names, and names its own list has, to a configured upstream", async () => {
    const upstream = engine("upstream", [v("upstream:af_bella", ["en"])]);
    const catalogue = voiceCatalogue([upstream, flite, espeak]);
    expect(await catalogue.resolve("alloy")).toEqual({
      engine: upstream,
      voice: "alloy",
      id: "upstream:alloy",
    });
    expect(await catalogue.resolve("af_bella")).toEqual({
      engine: upstream,
      voice: "af_bella",
      id: "upstream:af_bella",
    });
    expect((await catalogue.resolve("upstream:nova")).engine).toBe(upstream);
    expect((await catalogue.resolve("flite:slt")).engine).toBe(flite);
    for (const voice of ["upstream:af_nobody", "upstream:constructor", "__proto__"])
      await expect(catalogue.resolve(voice)).rejects.toMatchObject({ status: 400 });
    await expect(catalogue.resolve("af_nobody")).rejects.toMatchObject({ status: 400 });
  });
});

describe("language tags", () => {
  it("writes tags as BCP 47 does, without changing what they name", () => {
    expect(languageTag("en-us")).toBe("en-US");
    expect(languageTag("en_gb-x-RP")).toBe("en-GB-x-rp");
    expect(languageTag("cmn-latn-pinyin")).toBe("cmn-Latn-pinyin");
    expect(languageTag("chr-US-Qaaa-x-west")).toBe("chr-Qaaa-US-x-west");
    expect(languageTag("es-419")).toBe("es-419");
    expect(languageTag("en-gb-scotland")).toBe("en-GB-scotland");
    expect(languageTag("zh-yue")).toBe("zh-yue");
  });

  it("matches whole subtags only", () => {
    const voice = { id: "x", name: "x", provider: "x", languages: ["en-GB-x-rp"], gender: null };
    expect(speaksLanguage(voice, "en")).toBe(true);
    expect(speaksLanguage(voice, "EN-gb")).toBe(true);
    expect(speaksLanguage(voice, "en-g")).toBe(false);
    expect(speaksLanguage(voice, "en-US")).toBe(false);
  });
});

describe("the catalogue over this machine's engines", () => {
  it("lists flite's and espeak-ng's voices, each id resolving to the engine that speaks it", async () => {
    const catalogue = voiceCatalogue([fliteEngine(), espeakEngine()]);
    const all = await catalogue.all();
    expect(all.length).toBeGreaterThan(130);
    expect(new Set(all.map((x) => x.id)).size).toBe(all.length);
    expect((await catalogue.list({ gender: "female" })).data.map((x) => x.id)).toEqual(["flite:slt"]);
    expect((await catalogue.list({ language: "de" })).data.map((x) => x.id)).toEqual(["espeak-ng:de"]);
    for (const voice of [all[0], all.at(-1)] as Voice[]) {
      const resolved = await catalogue.resolve(voice.id);
      expect(resolved.engine.name).toBe(voice.provider);
    }
  });
});
