/**
 * The audio routes paid for real: the stock `@x402/fetch` client with the exact scheme and with upto, the
 * project's facilitator on a devnet, Debian's offline engines. Exact pays the listed price; upto pays the
 * characters spoken or the minutes heard at spec 4.5's rates; a refusal or an engine failure costs
 * nothing; buyers at once each pay their own; one payment sent several times at once runs once, and a
 * wallet that can pay one call gets one however many it sends at once. And the round trip: known sentences spoken by
 * /v1/audio/speech and transcribed back by /v1/audio/transcriptions, with the word error rate asserted
 * under 25% (measured 6.9% here, 2026-11-24, with flite's rms voice as MP3 and pocketsphinx's English model;
 * the engine test measured 10-16% on other sentences).
 */
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, type DevnetAccount, startDevnet } from "../../../../src/chain/devnet/index.ts";
import type { Listening } from "../../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../../src/facilitator/index.ts";
import { audioServices } from "../../../../src/merchants/inference/audio/catalogue.ts";
import type { SpeechEngine, TranscriptionEngine } from "../../../../src/merchants/inference/audio/engine.ts";
import { espeakEngine } from "../../../../src/merchants/inference/audio/engines/espeak.ts";
import { fliteEngine } from "../../../../src/merchants/inference/audio/engines/flite.ts";
import { pocketsphinxEngine } from "../../../../src/merchants/inference/audio/engines/pocketsphinx.ts";
import { speechAmount, transcriptionAmount } from "../../../../src/merchants/inference/audio/metering.ts";
import { probeAudio } from "../../../../src/merchants/inference/audio/probe.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../../src/merchants/inference/catalogue.ts";
import { missingPrograms, mp3, sine, wav, wordErrorRate } from "../../../helpers/audio.ts";
import { permit2WalletHolding, startMiner, walletHolding } from "../../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../../../helpers/db.ts";
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

/** Calls that reached an engine, by route: what a payment made the host work for. */
const ran = { speech: 0, transcription: 0 };
/** flite and pocketsphinx as they are, counting their calls. */
const countedFlite = (engine: SpeechEngine): SpeechEngine => ({
  ...engine,
  speak: (request, signal) => {
    ran.speech++;
    return engine.speak(request, signal);
  },
});
const countedPocketsphinx = (engine: TranscriptionEngine): TranscriptionEngine => ({
  ...engine,
  transcribe: (request) => {
    ran.transcription++;
    return engine.transcribe(request);
  },
});

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
  // Buyers 0-3 pay in the first cases, 4 sends one payment several times, 5 funds the wallets that can
  // afford one call, 6 sends an MP3 lame cannot decode whole: no case reads a balance another moves.
  devnet = await startDevnet({ port: 0, buyers: 7, blockTime: 0 });
  miner = startMiner(devnet);
  usdc = usdcReader(devnet.rpc);
  const ledger = await openTestDatabase(LEDGER_KIND);
  closers.push(ledger.close);
  facilitator = await devnetFacilitator(devnet, ledger.db);
  const state = await openTestDatabase("pglite");
  closers.push(state.close);
  const audio = audioServices(OFFLINE_SETTINGS.audio, {
    speech: [countedFlite(fliteEngine()), espeakEngine(), broken],
    transcription: countedPocketsphinx(pocketsphinxEngine()),
  });
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
        language: string;
        duration: number;
        text: string;
        segments: { start: number; end: number; text: string }[];
      };
      expect(transcript.task).toBe("transcribe");
      expect(transcript.language).toBe("english"); // as OpenAI names it in verbose_json
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
      // Speaking then recognising a paragraph: 19 s of CPU-bound engines beside the suite, more on a busier machine.
    }, 90_000);

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

    it("refuses an MP3 lame stops decoding halfway with a 400 after the payment is verified, charging nothing", async () => {
      // Two files joined, mono then stereo: the probe counts every frame; lame stops where the channels change.
      const [mono, stereo] = [[sine(2, 16_000, 440)], [sine(2, 16_000, 440), sine(2, 16_000, 660)]];
      const joined = Buffer.concat([
        await mp3(wav({ sampleRate: 16_000, channels: mono })),
        await mp3(wav({ sampleRate: 16_000, channels: stereo })),
      ]);
      const b = buyer(6);
      const before = await usdc.balanceOf(b.address);
      for (const scheme of ["exact", "upto"] as const) {
        const ranBefore = ran.transcription;
        const answer = await paying(b, scheme)(
          `${host.url}/v1/audio/transcriptions`,
          transcriptionRequest(joined, "joined.mp3", "audio/mpeg"),
        );
        expect(answer.status).toBe(400);
        expect(answer.headers.get("payment-response")).toBeNull();
        expect(await answer.json()).toEqual({
          error: {
            message: expect.stringMatching(
              /could not be decoded whole: its frames hold 4\.\d s, the decoder read 2\.\d s/,
            ),
            type: "invalid_request_error",
            param: "file",
            code: "corrupt_audio",
          },
        });
        expect(ran.transcription - ranBefore).toBe(1); // paid for, verified, run: and refused
      }
      expect(await usdc.balanceOf(b.address)).toBe(before);
    });

    /** Each paid route with a small call and what that call costs under each scheme. */
    const second = wav({ sampleRate: 16_000, channels: [sine(1, 16_000, 440)] });
    const ROUTES = {
      speech: {
        path: "/v1/audio/speech",
        price: 18_000n,
        request: () => speechRequest({ input: "Once.", voice: "flite:slt" }),
        metered: speechAmount("Once.", 6, 18_000n),
      },
      transcription: {
        path: "/v1/audio/transcriptions",
        price: 15_000n,
        request: () => transcriptionRequest(second, "second.wav", "audio/wav"),
        metered: transcriptionAmount(1, 6, 15_000n),
      },
    } as const;

    describe.each(["speech", "transcription"] as const)("%s bought at once", (route) => {
      const r = ROUTES[route];
      describe.each(["exact", "upto"] as const)("with %s", (scheme) => {
        const cost = scheme === "exact" ? r.price : r.metered;

        it("runs one payment sent four times at once once, and charges it once", async () => {
          const b = buyer(4);
          const unpaid = await fetch(`${host.url}${r.path}`, r.request());
          expect(unpaid.status).toBe(402);
          const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
          const signature = encodePaymentSignatureHeader(
            await x402ClientFor(b, scheme).createPaymentPayload(required),
          );
          const [before, shopBefore, ranBefore] = [
            await usdc.balanceOf(b.address),
            await usdc.balanceOf(payTo),
            ran[route],
          ];
          const answers = await Promise.all(
            Array.from({ length: 4 }, () => {
              const init: RequestInit = r.request();
              const headers = new Headers(init.headers);
              headers.set("payment-signature", signature);
              return fetch(`${host.url}${r.path}`, { ...init, headers });
            }),
          );
          const statuses = answers.map((a) => a.status);
          expect(
            statuses.filter((s) => s === 200),
            JSON.stringify(statuses),
          ).toHaveLength(1);
          expect(statuses.every((s) => s === 200 || s === 402 || s === 409)).toBe(true);
          expect(ran[route] - ranBefore).toBe(1);
          expect(before - (await usdc.balanceOf(b.address))).toBe(cost);
          expect((await usdc.balanceOf(payTo)) - shopBefore).toBe(cost);
        });

        it("runs one call of three at once for a wallet holding one call's price, and charges that one", async () => {
          const wallet =
            scheme === "exact"
              ? await walletHolding(devnet, r.price, 5)
              : await permit2WalletHolding(devnet, r.price, 5);
          const [shopBefore, ranBefore] = [await usdc.balanceOf(payTo), ran[route]];
          const pay = paying(wallet, scheme);
          const answers = await Promise.all(
            Array.from({ length: 3 }, () => pay(`${host.url}${r.path}`, r.request())),
          );
          const statuses = answers.map((a) => a.status);
          expect(
            statuses.filter((s) => s === 200),
            JSON.stringify(statuses),
          ).toHaveLength(1);
          // The others are refused before any work: the payer's funds are reserved for the one that runs.
          expect(statuses.filter((s) => s === 402)).toHaveLength(2);
          expect(ran[route] - ranBefore).toBe(1);
          expect(await usdc.balanceOf(wallet.address)).toBe(r.price - cost);
          expect((await usdc.balanceOf(payTo)) - shopBefore).toBe(cost);
        });
      });
    });
  },
);
