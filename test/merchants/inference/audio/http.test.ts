/**
 * The audio routes served by the merchant kit on 127.0.0.1, unpaid: every limit of spec 4.5 and 8 (text
 * length, upload size and duration read from the file itself, formats, corrupt audio, a file that claims
 * another type, an unknown voice or language) is a 400 in OpenAI's error shape before any payment; an
 * engine this machine lacks is a 503 naming the one command that installs the route's programs, also
 * before payment (tested on a merchant given paths where no program is, so on any machine); valid
 * calls get a 402 offering exact at the listed price and upto at that maximum; the voice list is free.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Listening } from "../../../../src/common/listen.ts";
import { audioServices } from "../../../../src/merchants/inference/audio/catalogue.ts";
import { espeakEngine, parseEspeakVoices } from "../../../../src/merchants/inference/audio/engines/espeak.ts";
import { fliteEngine } from "../../../../src/merchants/inference/audio/engines/flite.ts";
import { pocketsphinxEngine } from "../../../../src/merchants/inference/audio/engines/pocketsphinx.ts";
import { probeAudio } from "../../../../src/merchants/inference/audio/probe.ts";
import { runProgram } from "../../../../src/merchants/inference/audio/program.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../../src/merchants/inference/catalogue.ts";
import { missingPrograms, mp3, sine, wav } from "../../../helpers/audio.ts";
import { openTestDatabase } from "../../../helpers/db.ts";
import { refusingFacilitator as facilitator, startMerchant } from "../../../helpers/merchant.ts";
import { loudness } from "./audio-checks.ts";

const missing = await missingPrograms("flite", "espeak-ng", "lame", "pocketsphinx_continuous");
const PAY_TO = "0x1111111111111111111111111111111111111111";
/** The host's engines, which the voice walk also calls as its handler does. */
const audio = audioServices(OFFLINE_SETTINGS.audio);
let host: Listening;
/** The same merchant on a machine without the audio programs. */
let bare: Listening;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const opened = await openTestDatabase("pglite");
  closers.push(opened.close);
  host = await startMerchant(
    (url) => inferenceMerchant({ payTo: PAY_TO, publicUrl: url }, OFFLINE_SETTINGS, audio),
    opened.db,
    facilitator,
  );
  closers.push(() => host.close());
  const nowhere = "/nonexistent/x402m-test";
  const lacking = audioServices(OFFLINE_SETTINGS.audio, {
    speech: [fliteEngine({ program: `${nowhere}/flite` }), espeakEngine({ program: `${nowhere}/espeak-ng` })],
    transcription: pocketsphinxEngine({ command: `${nowhere}/pocketsphinx_continuous` }),
  });
  bare = await startMerchant(
    (url) => inferenceMerchant({ payTo: PAY_TO, publicUrl: url }, OFFLINE_SETTINGS, lacking),
    opened.db,
    facilitator,
  );
  closers.push(() => bare.close());
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const speech = (body: unknown, base = host.url) =>
  fetch(`${base}/v1/audio/speech`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const upload = (
  bytes: Uint8Array,
  fields: Record<string, string | string[]> = {},
  name = "a.wav",
  type = "audio/wav",
) => {
  const form = new FormData();
  form.append("file", new File([new Uint8Array(bytes)], name, { type }));
  for (const [key, value] of Object.entries(fields))
    for (const v of Array.isArray(value) ? value : [value]) form.append(key, v);
  return form;
};
const transcribe = (form: FormData, base = host.url) =>
  fetch(`${base}/v1/audio/transcriptions`, { method: "POST", body: form });
const offer = (response: Response) =>
  JSON.parse(Buffer.from(response.headers.get("payment-required") ?? "", "base64").toString("utf8")) as {
    accepts: { scheme: string; amount: string }[];
  };
/** A refusal before payment: the status, OpenAI's error shape, and no payment asked for. */
async function refused(response: Response, status: number, code: string, param?: string | null) {
  expect(response.status).toBe(status);
  expect(response.headers.get("payment-required")).toBeNull();
  const body = (await response.json()) as { error: Record<string, unknown> };
  expect(body.error).toMatchObject({ code, type: expect.any(String), message: expect.any(String) });
  if (param !== undefined) expect(body.error.param).toBe(param);
  return body.error.message as string;
}
const tone = (seconds: number, sampleRate = 8_000) =>
  wav({ sampleRate, channels: [sine(seconds, sampleRate, 440)] });

interface ListedVoice {
  id: string;
  provider: string;
  languages: string[];
  gender: string | null;
  formats: string[];
}
/** Every voice of GET /v1/audio/voices, page after page of `limit`, in order. */
async function walkVoices(limit: number): Promise<ListedVoice[]> {
  const seen: ListedVoice[] = [];
  let after: string | undefined;
  for (;;) {
    const query = `limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
    const page = (await (await fetch(`${host.url}/v1/audio/voices?${query}`)).json()) as {
      data: ListedVoice[];
      has_more: boolean;
      last_id: string;
    };
    seen.push(...page.data);
    if (!page.has_more) return seen;
    after = page.last_id;
  }
}

// Needs none of the programs, so it runs everywhere: the message is what an operator without them reads.
describe("the audio routes on a machine without the programs", () => {
  it("answer 503 before payment, naming the one command that installs every program the route runs", async () => {
    const speechInstall = "apt-get install -y flite espeak-ng lame sox";
    for (const voice of ["alloy", "flite:slt", "espeak-ng:fr-fr"]) {
      const message = await refused(
        await speech({ input: "Hello", voice }, bare.url),
        503,
        "engine_unavailable",
      );
      expect(message).toContain(`the operator installs the speech programs with: ${speechInstall};`);
      expect(message).toMatch(/not installed on this server: \/nonexistent\/x402m-test\/(flite|espeak-ng)/);
    }
    const heard = await refused(await transcribe(upload(tone(2)), bare.url), 503, "engine_unavailable");
    expect(heard).toContain(
      "the operator installs the transcription programs with: apt-get install -y lame pocketsphinx pocketsphinx-en-us;",
    );
    // The voice list is empty, not an error: nothing here can speak.
    const list = (await (await fetch(`${bare.url}/v1/audio/voices`)).json()) as { data: unknown[] };
    expect(list.data).toEqual([]);
  });
});

describe.skipIf(missing.length > 0)(
  `the audio routes, unpaid (needs ${missing.join(", ") || "nothing missing"})`,
  () => {
    it("asks exact for the listed price and upto for the same maximum", async () => {
      const spoken = await speech({ input: "Hello there.", voice: "alloy" });
      expect(spoken.status).toBe(402);
      expect(offer(spoken).accepts.map((a) => [a.scheme, a.amount])).toEqual([
        ["exact", "18000"],
        ["upto", "18000"],
      ]);
      const heard = await transcribe(upload(tone(2)));
      expect(heard.status).toBe(402);
      expect(offer(heard).accepts.map((a) => [a.scheme, a.amount])).toEqual([
        ["exact", "15000"],
        ["upto", "15000"],
      ]);
    });

    it("counts speech characters as code points: 3,000 emoji pass, 3,001 letters do not", async () => {
      expect((await speech({ input: `a${"😀".repeat(2_999)}` })).status).toBe(402);
      const message = await refused(
        await speech({ input: "a".repeat(3_001) }),
        400,
        "invalid_input",
        "input",
      );
      expect(message).toMatch(/at most 3000 characters, not 3001/);
    });

    it("refuses speech it cannot give before payment", async () => {
      await refused(await speech({ input: "?!... --" }), 400, "invalid_input", "input");
      await refused(await speech({ input: "Hi", voice: "nobody:here" }), 400, "voice_not_found", "voice");
      await refused(await speech({ input: "Hi", voice: "constructor" }), 400, "voice_not_found", "voice");
      await refused(
        await speech({ input: "Hi", voice: "flite:slt", response_format: "opus" }),
        400,
        "unsupported_response_format",
        "response_format",
      );
      await refused(await speech({ input: "Hi", speed: 4.5 }), 400, "invalid_input", "speed");
      await refused(
        await speech({ input: "Hi", stream_format: "sse" }),
        400,
        "invalid_input",
        "stream_format",
      );
      const text = await fetch(`${host.url}/v1/audio/speech`, { method: "POST", body: "Hi" });
      await refused(text, 400, "unsupported_media_type");
    });

    it("refuses an upload it cannot take before payment: size, duration from the data, type, corruption", async () => {
      // Five minutes pass; a second more does not, whatever the header says.
      expect((await transcribe(upload(tone(300)))).status).toBe(402);
      const long = await refused(await transcribe(upload(tone(301))), 400, "audio_too_long", "file");
      expect(long).toMatch(/301\.0 s; at most 300 s/);
      // A data chunk that says one second is one second: the bytes after it are not its audio, and no
      // decoder (ours, or an upstream's) plays them.
      const shortChunk = tone(301);
      shortChunk.writeUInt32LE(8_000 * 2, 40);
      expect((await transcribe(upload(shortChunk))).status).toBe(402);
      const modest = tone(2);
      modest.writeUInt32LE(0x7fff_ffff, 40); // claims hours; two seconds are there
      expect((await transcribe(upload(modest))).status).toBe(402);

      await refused(
        await transcribe(upload(tone(2), {}, "a.mp3", "audio/mpeg")),
        400,
        "audio_type_mismatch",
        "file",
      );
      await refused(
        await transcribe(upload(tone(2), {}, "a.flac", "audio/flac")),
        400,
        "audio_type_mismatch",
        "file",
      );
      const noise = new Uint8Array(50_000).map((_, i) => (i * 7919) % 251);
      await refused(
        await transcribe(upload(noise, {}, "a.bin", "application/octet-stream")),
        400,
        "unsupported_audio_format",
        "file",
      );
      const truncated = tone(2).subarray(0, 30);
      await refused(await transcribe(upload(truncated)), 400, "corrupt_audio", "file");

      // 12 MB: one byte over is the schema's 400; far over, the body limit's 413, both before payment.
      const over = new Uint8Array(12 * 1024 * 1024 + 1);
      await refused(await transcribe(upload(over)), 400, "invalid_input", "file");
      const huge = new Uint8Array(13 * 1024 * 1024);
      await refused(await transcribe(upload(huge)), 413, "body_too_large");
    });

    it("measures an MP3 by its frames, not its Info tag, and refuses one the decoder would read nothing of", async () => {
      // lame at 8 kHz, 32 kbit/s: an Info frame, then 288-byte frames of 576 samples (72 ms).
      const long = await mp3(tone(301), ["-b", "32"]);
      const info = long.indexOf("Info");
      expect(info).toBeGreaterThan(0);
      expect(long.readUInt32BE(info + 4) & 1).toBe(1); // its frame count is present: make it claim 10 s
      long.writeUInt32BE(Math.round((10 * 8_000) / 576), info + 8);
      const message = await refused(
        await transcribe(upload(long, {}, "long.mp3", "audio/mpeg")),
        400,
        "audio_too_long",
        "file",
      );
      expect(message).toMatch(/lasts 301\.\d s; at most 300 s/);
      const under = long.subarray(0, 288 * (1 + 4_150)); // 298.8 s of frames
      expect((await transcribe(upload(under, {}, "under.mp3", "audio/mpeg"))).status).toBe(402);

      // Junk before the audio holding one header of another kind (MPEG-1, 44.1 kHz, stereo): lame would
      // start there and decode nothing; one of the audio's own kind, it skips.
      const audio = await mp3(tone(2, 16_000));
      const junk = (header: number[]) => {
        const bytes = Buffer.alloc(600, 0x55);
        Buffer.from(header).copy(bytes, 10);
        return Buffer.concat([bytes, audio]);
      };
      const stray = await refused(
        await transcribe(upload(junk([0xff, 0xfb, 0x90, 0x64]), {}, "stray.mp3", "audio/mpeg")),
        400,
        "corrupt_audio",
        "file",
      );
      expect(stray).toMatch(/frame header of another kind at byte 10/);
      const own = junk([...audio.subarray(0, 4)]);
      expect((await transcribe(upload(own, {}, "own.mp3", "audio/mpeg"))).status).toBe(402);
    });

    it("refuses a form that asks for what the engine cannot do, before payment", async () => {
      await refused(
        await transcribe(upload(tone(2), { language: "fr" })),
        400,
        "unsupported_language",
        "language",
      );
      await refused(
        await transcribe(upload(tone(2), { timestamp_granularities: "word" })),
        400,
        "invalid_request",
        "timestamp_granularities",
      );
      await refused(
        await transcribe(upload(tone(2), { response_format: "docx" })),
        400,
        "invalid_input",
        "response_format",
      );
      const noFile = new FormData();
      noFile.append("model", "whisper-1");
      await refused(await transcribe(noFile), 400, "invalid_input", "file");
      // A list of granularities, as OpenAI's clients send it, is taken.
      const both = upload(tone(2), {
        response_format: "verbose_json",
        "timestamp_granularities[]": ["word", "segment"],
      });
      expect((await transcribe(both)).status).toBe(402);
    });

    it("lists voices free: filters, pages, and each voice's formats", async () => {
      const all = (await (await fetch(`${host.url}/v1/audio/voices?limit=500`)).json()) as {
        object: string;
        data: {
          id: string;
          provider: string;
          languages: string[];
          gender: string | null;
          formats: string[];
        }[];
        has_more: boolean;
      };
      expect(all.object).toBe("list");
      expect(all.has_more).toBe(false);
      expect(all.data.length).toBeGreaterThan(100);
      expect(all.data.find((v) => v.id === "flite:slt")).toMatchObject({
        gender: "female",
        formats: expect.arrayContaining(["mp3", "wav"]),
      });
      const french = (await (
        await fetch(`${host.url}/v1/audio/voices?language=fr&provider=espeak-ng`)
      ).json()) as typeof all;
      expect(french.data.length).toBeGreaterThan(0);
      for (const v of french.data)
        expect(v.languages.some((l) => l.toLowerCase().startsWith("fr"))).toBe(true);
      const female = (await (await fetch(`${host.url}/v1/audio/voices?gender=female`)).json()) as typeof all;
      expect(female.data.map((v) => v.id)).toContain("flite:slt");
      for (const v of female.data) expect(v.gender).toBe("female");
      // Pages of 10 walk the whole list once, in order.
      expect((await walkVoices(10)).map((v) => v.id)).toEqual(all.data.map((v) => v.id));
      const bad = await fetch(`${host.url}/v1/audio/voices?gender=robot`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { param: string } }).error.param).toBe("gender");
    });

    // "hello", not a digit: seven espeak-ng voices (Cherokee, Hebrew, Chuvash, Nogai, Turkmen, Quenya,
    // Sindarin) have no rules for digits and speak them as silence.
    it("speaks a word with every flite voice listed and one espeak-ng voice of each language family", async () => {
      const listed = await walkVoices(50);
      // espeak-ng files its voices by family (`gmw/en-US`, `roa/fr`, `sit/cmn`): its own listing says which.
      const { stdout } = await runProgram({ program: "espeak-ng", args: ["--voices"], timeoutMs: 10_000 });
      const family = new Map(
        parseEspeakVoices(stdout.toString("utf8")).map((v) => [v.id, v.file.split("/")[0]]),
      );
      const families = new Map<string, string>();
      for (const voice of listed)
        if (voice.provider === "espeak-ng" && !families.has(family.get(voice.id) ?? voice.id))
          families.set(family.get(voice.id) ?? voice.id, voice.id);
      expect(families.size).toBe(new Set(family.values()).size); // every family has a voice in the list
      const chosen = [...listed.filter((v) => v.provider === "flite").map((v) => v.id), ...families.values()];
      expect(chosen.length).toBeGreaterThan(30);
      for (const id of chosen) {
        // The route takes the id before payment, and then speaks it as its handler does.
        expect((await speech({ input: "hello", voice: id })).status, id).toBe(402);
        const { engine, voice } = await audio.voices.resolve(id);
        const spoken = await engine.speak(
          { text: "hello", voice, format: "wav", speed: 1 },
          AbortSignal.timeout(30_000),
        );
        expect(probeAudio(spoken.audio).durationSeconds, id).toBeGreaterThan(0.2);
        expect(loudness(spoken.audio), id).toBeGreaterThan(0.01);
      }
    });

    it("documents both routes: the form, the audio answer and both schemes", async () => {
      const doc = (await (await fetch(`${host.url}/openapi.json`)).json()) as {
        paths: Record<
          string,
          Record<
            string,
            {
              requestBody?: { content: object };
              responses: Record<string, { content?: object }>;
              "x-payment-info": { protocols: { x402: { scheme: string } }[] };
            }
          >
        >;
      };
      const speechOp = doc.paths["/v1/audio/speech"]?.post;
      expect(Object.keys(speechOp?.responses["200"]?.content ?? {})[0]).toBe("audio/mpeg");
      expect(speechOp?.["x-payment-info"].protocols.map((p) => p.x402.scheme)).toEqual(["exact", "upto"]);
      const transcriptionOp = doc.paths["/v1/audio/transcriptions"]?.post;
      expect(Object.keys(transcriptionOp?.requestBody?.content ?? {})).toEqual(["multipart/form-data"]);
      expect(doc.paths["/v1/audio/voices"]?.get).toBeDefined();
    });
  },
);
