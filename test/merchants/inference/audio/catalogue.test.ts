/**
 * The audio routes on an operator's upstream (X402M_INFERENCE_AUDIO_URL), through the same settings `serve`
 * reads: the upstream's voices come first in the list, OpenAI's names go to it, a metered call is charged its
 * characters whatever the upstream answered, and both routes declare their upstream cost, so the kit
 * reserves the payer's funds first. Against a fake OpenAI speech server on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HandlerContext } from "../../../../src/merchant-kit/endpoint.ts";
import {
  audioEndpoints,
  audioFreeRoutes,
  audioServices,
} from "../../../../src/merchants/inference/audio/catalogue.ts";
import { OFFLINE_SETTINGS } from "../../../../src/merchants/inference/catalogue.ts";
import { loadConfig } from "../../../../src/services/config.ts";
import { type FakeSpeechUpstream, startFakeSpeechUpstream } from "./fake-speech-upstream.ts";

const KEY = "sk-audio-test";
let upstream: FakeSpeechUpstream;
beforeAll(async () => {
  upstream = await startFakeSpeechUpstream(KEY);
  upstream.voices = { kind: "body", body: { voices: ["af_bella", "am_adam"] } };
});
afterAll(() => upstream?.close());

const configured = () =>
  loadConfig({ env: { X402M_INFERENCE_AUDIO_URL: upstream.base, X402M_INFERENCE_AUDIO_KEY: KEY } });

describe("the audio routes on an upstream", () => {
  it("list the upstream's voices first, then the offline engines'", async () => {
    const audio = audioServices(configured().inference.audio);
    const route = audioFreeRoutes(audio)[0];
    if (!route) throw new Error("no voices route");
    const answer = await route.handler(
      new Request("http://127.0.0.1/v1/audio/voices?limit=3"),
      undefined as never,
    );
    const list = (await answer.json()) as { data: { id: string; provider: string }[] };
    expect(list.data.slice(0, 2).map((v) => v.id)).toEqual(["upstream:af_bella", "upstream:am_adam"]);
  });

  it("speak OpenAI's names through the upstream and meter the characters; both routes cost upstream", async () => {
    const config = configured();
    const audio = audioServices(config.inference.audio);
    const endpoints = audioEndpoints(audio);
    expect(endpoints.map((e) => [e.path, e.effects])).toEqual([
      ["/v1/audio/speech", ["upstream"]],
      ["/v1/audio/transcriptions", ["upstream"]],
    ]);
    // Offline, the same routes cost nothing outside.
    expect(audioEndpoints(audioServices(OFFLINE_SETTINGS.audio)).map((e) => e.effects)).toEqual([
      undefined,
      undefined,
    ]);

    const speech = endpoints[0];
    if (!speech) throw new Error("no speech route");
    const input = speech.input.parse({ input: "Hello there", voice: "alloy", response_format: "flac" });
    expect(await speech.precheck?.(input, { services: { db: undefined as never, config } })).toBeUndefined();
    const metered: bigint[] = [];
    const ctx: HandlerContext = {
      payer: "0x2222222222222222222222222222222222222222",
      signal: new AbortController().signal,
      services: { db: undefined as never, config },
      request: new Request("http://127.0.0.1:8407/v1/audio/speech", { method: "POST" }),
      meter: (atomic) => {
        metered.push(atomic);
      },
    };
    const answer = (await speech.handler(input, ctx)) as Response;
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("audio/flac");
    expect((await answer.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    expect(metered).toEqual([66n]); // 11 characters at 6 atomic units

    // The upstream's refusal is the caller's 502, never charged (nothing metered).
    upstream.speech = { kind: "status", status: 500 };
    metered.length = 0;
    await expect(speech.handler(input, ctx)).rejects.toMatchObject({ status: 502 });
    expect(metered).toEqual([]);
    upstream.speech = { kind: "audio" };
  });
});
