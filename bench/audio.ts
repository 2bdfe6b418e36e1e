/**
 * The audio routes against their engines called directly (`npm run bench:audio [-- --runs N]`), in one run
 * on a devnet, with Debian's offline engines:
 *
 * 1. **Speech**: 3,000 characters (the route's limit) to MP3, by the flite `slt` and espeak-ng `en-us`
 *    engines called in process (the baseline), then through `POST /v1/audio/speech` paid with upto by
 *    `@x402/fetch` (402, Permit2 signature, verify, engine, settlement on chain). Characters a second,
 *    and the route's time over the engine's.
 * 2. **Transcription**: about 45 s of flite's `rms` speech (ten sentences) as a 16 kHz WAV and as an MP3, by
 *    the pocketsphinx engine called directly, then through `POST /v1/audio/transcriptions` paid with upto.
 *    Real-time factor (seconds of work a second of audio: lower is faster), and the route's over the
 *    engine's.
 *
 * Each figure is the median of `--runs` runs (default 5), phases interleaved so that load on the machine
 * falls on both sides alike. One JSON line on stdout, a table on stderr.
 */
import os from "node:os";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { startDevnet } from "../src/chain/devnet/index.ts";
import { inProcessClient } from "../src/facilitator/index.ts";
import { audioServices } from "../src/merchants/inference/audio/catalogue.ts";
import type { SpeechEngine } from "../src/merchants/inference/audio/engine.ts";
import { espeakEngine } from "../src/merchants/inference/audio/engines/espeak.ts";
import { fliteEngine } from "../src/merchants/inference/audio/engines/flite.ts";
import { pocketsphinxEngine } from "../src/merchants/inference/audio/engines/pocketsphinx.ts";
import { probeAudio } from "../src/merchants/inference/audio/probe.ts";
import { AUDIO_PACKAGES, installCommand } from "../src/merchants/inference/audio/program.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../src/merchants/inference/catalogue.ts";
import { missingPrograms, mp3, speak } from "../test/helpers/audio.ts";
import { startMiner } from "../test/helpers/chain.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { devnetFacilitator } from "../test/helpers/facilitator.ts";
import { startMerchant } from "../test/helpers/merchant.ts";
import { newMerchant, usdcReader, x402ClientFor } from "../test/helpers/x402.ts";

const args = process.argv.slice(2);
const runsAt = args.indexOf("--runs");
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 5;
if (!Number.isInteger(RUNS) || RUNS < 1) {
  process.stderr.write("bench:audio: --runs takes a positive integer\n");
  process.exit(2);
}
const log = (message: string) => process.stderr.write(`${message}\n`);
const missing = await missingPrograms("flite", "espeak-ng", "lame", "pocketsphinx_continuous");
if (missing.length > 0) {
  process.stderr.write(`bench:audio: needs ${missing.join(", ")}: ${installCommand(AUDIO_PACKAGES)}\n`);
  process.exit(1);
}

const SENTENCES = [
  "The committee will meet on Thursday to review the budget for next year.",
  "Please send the signed contract back to our office before the end of the month.",
  "A light rain is expected in the morning, clearing to sunshine by the afternoon.",
  "The new bridge across the river should open to traffic in the spring.",
  "Our team tested the service with several thousand requests from many clients.",
];
/** Exactly 3,000 characters of plain English prose (the speech route's limit), the sentences repeated. */
const TEXT_3000 = Array.from({ length: 50 }, (_, i) => SENTENCES[i % SENTENCES.length])
  .join(" ")
  .slice(0, 3_000);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const round = (x: number, places = 2) => Math.round(x * 10 ** places) / 10 ** places;
const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const t0 = performance.now();
  const result = await work();
  return [result, (performance.now() - t0) / 1000];
};

const closers: (() => Promise<unknown>)[] = [];
try {
  const devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
  closers.push(() => devnet.stop());
  const miner = startMiner(devnet, 5, "wall");
  closers.push(() => miner.stop());
  const ledger = await openTestDatabase(process.env.DATABASE_URL ? "postgres" : "pglite");
  closers.push(ledger.close);
  const facilitator = await devnetFacilitator(devnet, ledger.db);
  closers.push(() => facilitator.close());
  const state = await openTestDatabase(process.env.DATABASE_URL ? "postgres" : "pglite");
  closers.push(state.close);
  const payTo = newMerchant();
  // The same engine objects serve the route and the baseline.
  const flite = fliteEngine();
  const espeak = espeakEngine();
  const pocketsphinx = pocketsphinxEngine();
  const audio = audioServices(OFFLINE_SETTINGS.audio, {
    speech: [flite, espeak],
    transcription: pocketsphinx,
  });
  const host = await startMerchant(
    (url) => inferenceMerchant({ payTo, publicUrl: url }, OFFLINE_SETTINGS, audio),
    state.db,
    inProcessClient(facilitator),
    { rpcUrl: devnet.rpc },
  );
  closers.push(() => host.close());
  const buyer = devnet.buyers[0];
  if (!buyer) throw new Error("no buyer");
  const pay = wrapFetchWithPayment(fetch, x402ClientFor(buyer, "upto"));
  let settled = 0n;
  const paid = async (path: string, init: RequestInit): Promise<Uint8Array> => {
    const response = await pay(`${host.url}${path}`, init);
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.status !== 200)
      throw new Error(`${path}: ${response.status} ${Buffer.from(body).toString("utf8").slice(0, 300)}`);
    settled += BigInt(
      decodePaymentResponseHeader(response.headers.get("payment-response") as string).amount ?? "0",
    );
    return body;
  };

  log(
    `bench:audio on ${os.cpus()[0]?.model ?? "?"} x${os.cpus().length}, Node ${process.version}, ${RUNS} runs`,
  );
  const speech: Record<string, { engine: number; route: number; audioSeconds: number }> = {};
  const voices: [SpeechEngine, string][] = [
    [flite, "flite:slt"],
    [espeak, "espeak-ng:en-us"],
  ];
  for (const [engine, id] of voices) {
    const request = { text: TEXT_3000, voice: id.split(":")[1] as string, format: "mp3" as const, speed: 1 };
    const body = JSON.stringify({ input: TEXT_3000, voice: id });
    const post = { method: "POST", headers: { "content-type": "application/json" }, body };
    await engine.speak(request, AbortSignal.timeout(60_000)); // warm: voice lists, page cache
    await paid("/v1/audio/speech", post);
    const direct: number[] = [];
    const route: number[] = [];
    let audioSeconds = 0;
    for (let i = 0; i < RUNS; i++) {
      const [spoken, seconds] = await timed(() => engine.speak(request, AbortSignal.timeout(60_000)));
      direct.push(seconds);
      audioSeconds = probeAudio(spoken.audio).durationSeconds;
      route.push((await timed(() => paid("/v1/audio/speech", post)))[1]);
    }
    speech[id] = { engine: median(direct), route: median(route), audioSeconds };
  }

  const said = Array.from({ length: 10 }, (_, i) => SENTENCES[i % SENTENCES.length]).join(" ");
  const wav = new Uint8Array(await speak(said, "rms"));
  const inputs = { wav, mp3: new Uint8Array(await mp3(wav)) };
  const transcription: Record<string, { engine: number; route: number; audioSeconds: number }> = {};
  for (const [container, bytes] of Object.entries(inputs)) {
    const info = probeAudio(bytes);
    const form = () => {
      const data = new FormData();
      data.append(
        "file",
        new File([bytes], `speech.${container}`, { type: container === "wav" ? "audio/wav" : "audio/mpeg" }),
      );
      return { method: "POST", body: data };
    };
    const request = () => ({ audio: bytes, info, words: false, signal: AbortSignal.timeout(120_000) });
    await paid("/v1/audio/transcriptions", form()); // warm: the model's files in the page cache
    const direct: number[] = [];
    const route: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      direct.push((await timed(() => pocketsphinx.transcribe(request())))[1]);
      route.push((await timed(() => paid("/v1/audio/transcriptions", form())))[1]);
    }
    transcription[container] = {
      engine: median(direct),
      route: median(route),
      audioSeconds: info.durationSeconds,
    };
  }

  await miner.pending();
  const received = await usdcReader(devnet.rpc).balanceOf(payTo);
  if (received !== settled) throw new Error(`the merchant received ${received}, the answers said ${settled}`);

  const results = {
    date: new Date().toISOString(),
    cpu: `${os.cpus()[0]?.model ?? "?"} x${os.cpus().length}`,
    runs: RUNS,
    speech: Object.fromEntries(
      Object.entries(speech).map(([id, s]) => [
        id,
        {
          characters: TEXT_3000.length,
          audioSeconds: round(s.audioSeconds, 1),
          engineCharsPerSecond: Math.round(TEXT_3000.length / s.engine),
          routeCharsPerSecond: Math.round(TEXT_3000.length / s.route),
          routeOverEngine: round(s.route / s.engine),
        },
      ]),
    ),
    transcription: Object.fromEntries(
      Object.entries(transcription).map(([container, t]) => [
        container,
        {
          audioSeconds: round(t.audioSeconds, 1),
          engineRealTimeFactor: round(t.engine / t.audioSeconds, 3),
          routeRealTimeFactor: round(t.route / t.audioSeconds, 3),
          routeOverEngine: round(t.route / t.engine),
        },
      ]),
    ),
    settledAtomic: settled.toString(),
    receivedMatches: true,
  };
  log("");
  for (const [id, s] of Object.entries(results.speech))
    log(
      `speech ${id.padEnd(16)} ${s.characters} chars (${s.audioSeconds} s of audio): engine ${s.engineCharsPerSecond} chars/s, paid route ${s.routeCharsPerSecond} chars/s (x${s.routeOverEngine})`,
    );
  for (const [container, t] of Object.entries(results.transcription))
    log(
      `transcription ${container.padEnd(4)} ${t.audioSeconds} s of audio: engine RTF ${t.engineRealTimeFactor}, paid route RTF ${t.routeRealTimeFactor} (x${t.routeOverEngine})`,
    );
  log(`settled ${settled} atomic units with upto, all received on chain`);
  process.stdout.write(`${JSON.stringify(results)}\n`);
} finally {
  for (const close of closers.reverse()) await close().catch((error) => log(`closing: ${error}`));
}
process.exit(0);
