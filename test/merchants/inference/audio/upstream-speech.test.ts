import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SpeechRequest } from "../../../../src/merchants/inference/audio/engine.ts";
import {
  openaiVoices,
  parseVoiceList,
  upstreamSpeechEngine,
} from "../../../../src/merchants/inference/audio/engines/upstream-speech.ts";
import { toneWav } from "./audio-checks.ts";
import { type FakeSpeechUpstream, startFakeSpeechUpstream } from "./fake-speech-upstream.ts";

const KEY = "sk-test-speech";
let upstream: FakeSpeechUpstream;
beforeAll(async () => {
  upstream = await startFakeSpeechUpstream(KEY);
});
afterAll(() => upstream.close());

// Generous: a loaded machine must not turn a refusal under test into a time-out.
const engine = (settings: Partial<Parameters<typeof upstreamSpeechEngine>[0]> = {}) =>
  upstreamSpeechEngine({ url: upstream.base, key: KEY, model: "tts-1", timeoutMs: 30_000, ...settings });
const request: SpeechRequest = { text: '-Hello "there".', voice: "alloy", format: "mp3", speed: 1.5 };
const signal = () => AbortSignal.timeout(30_000);

describe("an OpenAI-compatible speech upstream", () => {
  it("posts OpenAI's speech request with the key and answers the audio bytes with their content type", async () => {
    upstream.speech = { kind: "audio" };
    const before = upstream.requests.length;
    const { audio, contentType } = await engine().speak({ ...request, format: "flac" }, signal());
    expect(contentType).toBe("audio/flac");
    expect(Buffer.from(audio).equals(Buffer.from(toneWav(0.2, 24_000)))).toBe(true);
    const sent = upstream.requests.slice(before).find((r) => r.url === "/v1/audio/speech");
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(sent?.body.toString("utf8") ?? "")).toEqual({
      model: "tts-1",
      input: '-Hello "there".',
      voice: "alloy",
      response_format: "flac",
      speed: 1.5,
    });
  });

  it("uses the caller's model when the operator configured none", async () => {
    upstream.speech = { kind: "audio" };
    const before = upstream.requests.length;
    await engine({ model: undefined }).speak({ ...request, model: "gpt-4o-mini-tts" }, signal());
    const sent = upstream.requests.slice(before).find((r) => r.url === "/v1/audio/speech");
    expect(JSON.parse(sent?.body.toString("utf8") ?? "").model).toBe("gpt-4o-mini-tts");
  });

  it("offers every OpenAI format, and answers the format's type when the provider sends none usable", async () => {
    expect(engine().formats).toEqual(["mp3", "opus", "aac", "flac", "wav", "pcm"]);
    upstream.speech = { kind: "audio", contentType: "application/octet-stream" };
    expect((await engine().speak({ ...request, format: "opus" }, signal())).contentType).toBe(
      "audio/ogg; codecs=opus",
    );
  });

  it("turns a refusal into a 502 naming the status and the provider's message, never charged", async () => {
    upstream.speech = { kind: "status", status: 400 };
    await expect(engine().speak(request, signal())).rejects.toMatchObject({
      status: 502,
      code: "upstream_failed",
      message: expect.stringMatching(/HTTP 400: fake refusal of voice alloy/),
    });
  });

  it("never puts the key in an error", async () => {
    upstream.speech = { kind: "audio" };
    const failure = await upstreamSpeechEngine({ url: upstream.base, key: "sk-wrong-key", timeoutMs: 30_000 })
      .speak(request, signal())
      .catch((error: Error) => error);
    expect(failure).toMatchObject({ status: 502 });
    expect((failure as Error).message).not.toContain("sk-wrong-key");
  });

  it("turns the provider's rate limit into a 503 with Retry-After: its own wait, or 30 s", async () => {
    upstream.speech = { kind: "status", status: 429, retryAfter: "7" };
    await expect(engine().speak(request, signal())).rejects.toMatchObject({
      status: 503,
      code: "upstream_rate_limited",
      headers: { "retry-after": "7" },
    });
    upstream.speech = { kind: "status", status: 429 };
    await expect(engine().speak(request, signal())).rejects.toMatchObject({
      status: 503,
      headers: { "retry-after": "30" },
    });
  });

  it("gives up on a slow provider: 504", async () => {
    upstream.speech = { kind: "slow", ms: 2_000 };
    const started = Date.now();
    await expect(engine({ timeoutMs: 300 }).speak(request, signal())).rejects.toMatchObject({
      status: 504,
      code: "upstream_timeout",
    });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("stops reading an answer past its size cap", async () => {
    upstream.speech = { kind: "huge", bytes: 8 * 1024 * 1024 };
    await expect(engine({ maxBytes: 1024 * 1024 }).speak(request, signal())).rejects.toMatchObject({
      status: 502,
      code: "upstream_too_large",
    });
  });

  it("refuses a 200 that carries JSON instead of audio", async () => {
    upstream.speech = { kind: "json-200" };
    await expect(engine().speak(request, signal())).rejects.toMatchObject({ code: "upstream_invalid" });
  });

  it("ends the call with the caller's reason when the caller aborts", async () => {
    upstream.speech = { kind: "slow", ms: 2_000 };
    const controller = new AbortController();
    const reason = new Error("the caller left");
    setTimeout(() => controller.abort(reason), 100);
    await expect(engine().speak(request, controller.signal)).rejects.toBe(reason);
  });
});

describe("an upstream's voices", () => {
  it("are the provider's own list when it has one (Kokoro-FastAPI's shape)", async () => {
    upstream.voices = { kind: "body", body: { voices: ["af_bella", "bm_george", "af_bella"] } };
    const voices = await engine({ languages: ["en"] }).voices();
    expect(voices).toEqual([
      { id: "upstream:af_bella", name: "af_bella", provider: "upstream", languages: ["en"], gender: null },
      { id: "upstream:bm_george", name: "bm_george", provider: "upstream", languages: ["en"], gender: null },
    ]);
  });

  it("are OpenAI's documented voices when the provider has no list (OpenAI answers 404)", async () => {
    upstream.voices = { kind: "missing" };
    const voices = await engine().voices();
    expect(voices.map((v) => v.id)).toContain("upstream:alloy");
    expect(voices).toHaveLength(13);
    expect(voices.every((v) => v.gender === null)).toBe(true);
  });

  it("are kept for a while rather than asked for on every call", async () => {
    upstream.voices = { kind: "body", body: { voices: ["one"] } };
    const kept = engine();
    await kept.voices();
    upstream.voices = { kind: "body", body: { voices: ["two"] } };
    expect((await kept.voices()).map((v) => v.id)).toEqual(["upstream:one"]);
  });

  it("read the other shapes servers answer, taking gender and language only where said", () => {
    expect(
      parseVoiceList({
        object: "list",
        data: [
          { id: "v1", name: "Tara", gender: "Female", language: "en_us" },
          { voice_id: "v2", languages: ["de-de", "not a tag!"], gender: "robot" },
          { nothing: true },
        ],
      }),
    ).toEqual([
      { id: "upstream:v1", name: "Tara", provider: "upstream", languages: ["en-US"], gender: "female" },
      { id: "upstream:v2", name: "v2", provider: "upstream", languages: ["de-DE"], gender: null },
    ]);
    expect(parseVoiceList(["a", { id: "b", locale: "pt-br", gender: "m" }])).toMatchObject([
      { id: "upstream:a" },
      { id: "upstream:b", languages: ["pt-BR"], gender: "male" },
    ]);
    expect(parseVoiceList({ error: "nope" })).toBeNull();
    expect(openaiVoices(["en"])[0]).toEqual({
      id: "upstream:alloy",
      name: "alloy",
      provider: "upstream",
      languages: ["en"],
      gender: null,
    });
  });
});
