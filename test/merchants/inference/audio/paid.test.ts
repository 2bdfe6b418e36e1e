/**
 * The audio routes paid for real: the stock `@x402/fetch` client with the exact scheme and with upto, the
 * project's facilitator on a devnet, Debian's offline engines. Exact pays the listed price; upto pays the
 * characters spoken or the minutes heard at spec 4.5's rates; a refusal or an engine failure costs
 * nothing; buyers at once each pay their own. And the round trip: known sentences spoken by
 * /v1/audio/speech and transcribed back by /v1/audio/transcriptions, with the word error rate asserted
 * under 25% (measured 6.9% here, 2026-11-24, with flite's rms voice as MP3 and pocketsphinx's English model;
 * the engine test measured 10-16% on other sentences).
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, type DevnetAccount, startDevnet } from "../../../../src/chain/devnet/index.ts";
import type { Listening } from "../../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../../src/facilitator/index.ts";
import { audioServices } from "../../../../src/merchants/inference/audio/catalogue.ts";
import type { SpeechEngine } from "../../../../src/merchants/inference/audio/engine.ts";
import { espeakEngine } from "../../../../src/merchants/inference/audio/engines/espeak.ts";
import { fliteEngine } from "../../../../src/merchants/inference/audio/engines/flite.ts";
import { speechAmount, transcriptionAmount } from "../../../../src/merchants/inference/audio/metering.ts";
import { probeAudio } from "../../../../src/merchants/inference/audio/probe.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../../src/merchants/inference/catalogue.ts";
import { missingPrograms, sine, wav, wordErrorRate } from "../../../helpers/audio.ts";
import { startMiner } from "../../../helpers/chain.ts";
import { openTestDatabase } from "../../../helpers/db.ts";
import { devnetFacilitator } from "../../../helpers/facilitator.ts";
import { startMerchant } from "../../../helpers/merchant.ts";
import { newMerchant, usdcReader, x402ClientFor } from "../../../helpers/x402.ts";
import { walkMp3 } from "./audio-checks.ts";

const SENTENCES = [
  "The quick brown fox jumps over the lazy dog.",
  "Please call me when you arrive at the station.",
  "We will meet again next week to discuss the plan.",
  "The weather today is cold and windy in the north.",
  "She bought three apples and a loaf of bread.",
  "Open the window and let some fresh air into the room.",
];

/** An engine whose program breaks mid-call, as a crashed synthesiser would. */
const broken: SpeechEngine = {
  name: "broken",
  formats: ["mp3"],
  available: async () => ({ ok: true }),
  voices: async () => [
    { id: "broken:one", name: "one", provider: "broken", languages: ["en"], gender: null },
  ],
  speak: async () => {
    throw new Error("segmentation fault");
  },
};

const missing = await missingPrograms("flite", "espeak-ng", "lame", "pocketsphinx_continuous");
let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;
let facilitator: Facilitator;
let host: Listening;
let usdc: ReturnType<typeof usdcReader>;
const payTo = newMerchant();
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  if (missing.length > 0) return;
  devnet = await startDevnet({ port: 0, buyers: 4, blockTime: 0 });
  miner = startMiner(devnet);
  usdc = usdcReader(devnet.rpc);
  const ledger = await openTestDatabase("pglite");
  closers.push(ledger.close);
  facilitator = await devnetFacilitator(devnet, ledger.db);
  const state = await openTestDatabase("pglite");
  closers.push(state.close);
  const audio = audioServices(OFFLINE_SETTINGS.audio, { speech: [fliteEngine(), espeakEngine(), broken] });
  host = await startMerchant(
    (url) => inferenceMerchant({ payTo, publicUrl: url }, OFFLINE_SETTINGS, audio),
    state.db,
    inProcessClient(facilitator),
    { rpcUrl: devnet.rpc },
  );
  closers.push(() => host.close());
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await facilitator?.close();
  await miner?.stop();
  await devnet?.stop();
});

const buyer = (i: number) => devnet.buyers[i] as DevnetAccount;
const paying = (b: DevnetAccount, scheme: "exact" | "upto") =>
  wrapFetchWithPayment(fetch, x402ClientFor(b, scheme));
const speechRequest = (body: Record<string, unknown>) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const transcriptionRequest = (
  audio: Uint8Array,
  name: string,
  type: string,
  fields: Record<string, string> = {},
) => {
  const form = new FormData();
  form.append("file", new File([new Uint8Array(audio)], name, { type }));
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  return { method: "POST", body: form };
};
const settled = (response: Response) =>
  BigInt(decodePaymentResponseHeader(response.headers.get("payment-response") as string).amount ?? "-1");

describe.skipIf(missing.length > 0)(
  `the audio routes, paid on the devnet (needs ${missing.join(", ") || "nothing missing"})`,
  () => {
    it("speaks for the listed price with exact, and for its characters with upto", async () => {
      const b = buyer(0);
      let before = await usdc.balanceOf(b.address);
      const exact = await paying(b, "exact")(
        `${host.url}/v1/audio/speech`,
        speechRequest({ input: "Hello there.", voice: "alloy" }),
      );
      expect(exact.status, await exact.clone().text()).toBe(200);
      expect(exact.headers.get("content-type")).toBe("audio/mpeg");
      expect(walkMp3(new Uint8Array(await exact.arrayBuffer())).durationSeconds).toBeGreaterThan(0.3);
      await miner.pending();
      expect(before - (await usdc.balanceOf(b.address))).toBe(18_000n);

      before = await usdc.balanceOf(b.address);
      const text = "Metered speech costs six millionths of a dollar a character.";
      const metered = await paying(b, "upto")(
        `${host.url}/v1/audio/speech`,
        speechRequest({ input: text, voice: "espeak-ng:en-us", response_format: "wav" }),
      );
      expect(metered.status, await metered.clone().text()).toBe(200);
      expect(metered.headers.get("content-type")).toBe("audio/wav");
      expect(probeAudio(new Uint8Array(await metered.arrayBuffer())).durationSeconds).toBeGreaterThan(1);
      const cost = speechAmount(text, 6, 18_000n);
      expect(cost).toBe(BigInt(text.length * 6));
      expect(settled(metered)).toBe(cost);
      await miner.pending();
      expect(before - (await usdc.balanceOf(b.address))).toBe(cost);

      // Exact pays the listed price for a transcription, however short.
      before = await usdc.balanceOf(b.address);
      const tone = wav({ sampleRate: 16_000, channels: [sine(1, 16_000, 440)] });
      const heard = await paying(b, "exact")(
        `${host.url}/v1/audio/transcriptions`,
        transcriptionRequest(tone, "tone.wav", "audio/wav"),
      );
      expect(heard.status, await heard.clone().text()).toBe(200);
      expect(await heard.json()).toEqual({ text: expect.any(String) });
      await miner.pending();
      expect(before - (await usdc.balanceOf(b.address))).toBe(15_000n);
    });

    it("round-trips known sentences through both routes, under 25% word errors, paying minutes with upto", async () => {
      const b = buyer(1);
      const said = SENTENCES.join(" ");
      const spoken = await paying(b, "upto")(
        `${host.url}/v1/audio/speech`,
        speechRequest({ input: said, voice: "flite:rms" }),
      );
      expect(spoken.status, await spoken.clone().text()).toBe(200);
      const audio = new Uint8Array(await spoken.arrayBuffer());
      const duration = probeAudio(audio).durationSeconds;

      const before = await usdc.balanceOf(b.address);
      const heard = await paying(b, "upto")(
        `${host.url}/v1/audio/transcriptions`,
        transcriptionRequest(audio, "speech.mp3", "audio/mpeg", {
          response_format: "verbose_json",
          "timestamp_granularities[]": "segment",
        }),
      );
      expect(heard.status, await heard.clone().text()).toBe(200);
      const transcript = (await heard.json()) as {
        task: string;
        duration: number;
        text: string;
        segments: { start: number; end: number; text: string }[];
      };
      expect(transcript.task).toBe("transcribe");
      expect(transcript.duration).toBeCloseTo(duration, 3);
      expect(transcript.segments.length).toBeGreaterThan(1);
      for (const s of transcript.segments) {
        expect(s.start).toBeLessThan(s.end);
        expect(s.end).toBeLessThanOrEqual(duration + 1e-6);
      }
      const wer = wordErrorRate(said, transcript.text);
      expect(wer, `heard: ${transcript.text}`).toBeLessThan(0.25);
      const cost = transcriptionAmount(duration, 6, 15_000n);
      expect(settled(heard)).toBe(cost);
      await miner.pending();
      expect(before - (await usdc.balanceOf(b.address))).toBe(cost);
    });

    it("charges nothing for a refusal or a failed engine, and buyers at once each their own", async () => {
      const buyers = [buyer(2), buyer(3)];
      const before = await Promise.all(buyers.map((b) => usdc.balanceOf(b.address)));
      const refused = await paying(buyers[0] as DevnetAccount, "upto")(
        `${host.url}/v1/audio/speech`,
        speechRequest({ input: "x".repeat(3_001) }),
      );
      expect(refused.status).toBe(400);
      const failed = await paying(buyers[0] as DevnetAccount, "exact")(
        `${host.url}/v1/audio/speech`,
        speechRequest({ input: "Nothing will come of this.", voice: "broken:one" }),
      );
      expect(failed.status).toBe(502);
      expect(((await failed.json()) as { error: { code: string } }).error.code).toBe("engine_failed");
      await miner.pending();
      expect(await usdc.balanceOf((buyers[0] as DevnetAccount).address)).toBe(before[0]);

      const shopBefore = await usdc.balanceOf(payTo);
      const texts = ["Short.", "A somewhat longer sentence to speak at once."];
      const answers = await Promise.all(
        buyers.map((b, i) =>
          paying(b, "upto")(
            `${host.url}/v1/audio/speech`,
            speechRequest({ input: texts[i], voice: "flite:slt" }),
          ),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      await miner.pending();
      const charged = await Promise.all(
        buyers.map(async (b, i) => (before[i] as bigint) - (await usdc.balanceOf(b.address))),
      );
      expect(charged).toEqual(texts.map((t) => BigInt(t.length * 6)));
      expect((await usdc.balanceOf(payTo)) - shopBefore).toBe(charged.reduce((a, b) => a + b, 0n));
    });
  },
);
