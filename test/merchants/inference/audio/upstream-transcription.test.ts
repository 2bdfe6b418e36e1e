import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamError } from "../../../../src/common/errors.ts";
import type { TranscriptionRequest } from "../../../../src/merchants/inference/audio/engine.ts";
import { upstreamTranscriptionEngine } from "../../../../src/merchants/inference/audio/engines/upstream-transcription.ts";
import { probeAudio } from "../../../../src/merchants/inference/audio/probe.ts";
import { sine, wav } from "../../../helpers/audio.ts";
import { type FakeTranscriptions, startTranscriptionUpstream, VERBOSE } from "./fake-transcriptions.ts";

const KEY = "sk-test-transcriptions";
let upstream: FakeTranscriptions;
beforeAll(async () => {
  upstream = await startTranscriptionUpstream(KEY);
});
afterAll(() => upstream.close());

const audio = wav({ sampleRate: 16_000, channels: [sine(5, 16_000, 440)] });
const request = (overrides: Partial<TranscriptionRequest> = {}): TranscriptionRequest => ({
  audio,
  info: probeAudio(audio),
  words: false,
  signal: new AbortController().signal,
  ...overrides,
});
// A generous limit: a loaded machine must not turn the failures under test into time-outs.
const engine = (settings: { model?: string; key?: string; timeoutMs?: number } = {}) =>
  upstreamTranscriptionEngine({
    url: upstream.base,
    key: KEY,
    model: "whisper-1",
    timeoutMs: 30_000,
    ...settings,
  });

describe("an OpenAI-compatible transcription upstream", () => {
  it("sends the file and the options as OpenAI's multipart form, and reads verbose_json into a transcript", async () => {
    upstream.behaviour = { kind: "verbose" };
    const transcript = await engine().transcribe(
      request({ language: "en", prompt: "Beach, ocean.", temperature: 0.2, words: true, model: "ignored" }),
    );
    const sent = upstream.received.at(-1);
    expect(sent?.file).toEqual({ name: "audio.wav", type: "audio/wav", bytes: audio });
    expect(sent?.fields).toEqual({
      model: ["whisper-1"],
      response_format: ["verbose_json"],
      "timestamp_granularities[]": ["segment", "word"],
      language: ["en"],
      prompt: ["Beach, ocean."],
      temperature: ["0.2"],
    });
    expect(transcript).toEqual({
      language: "english",
      // The probed duration (what the call was priced on), not the upstream's 8.47 s.
      duration: 5,
      text: VERBOSE.text,
      segments: [
        {
          id: 0,
          start: 0,
          end: 3.319999933242798,
          text: " The beach was a popular spot on a hot summer day.",
          seek: 0,
          tokens: VERBOSE.segments[0]?.tokens,
          temperature: 0,
          avgLogprob: -0.2860786020755768,
          compressionRatio: 1.2363636493682861,
          noSpeechProb: 0.00985979475080967,
        },
        expect.objectContaining({
          id: 1,
          start: 3.319999933242798,
          end: 5,
          text: " People were swimming in the ocean.",
        }),
      ],
      words: [
        { word: "The", start: 0, end: 0.23999999463558197 },
        { word: "beach", start: 0.23999999463558197, end: 0.6200000047683716 },
        { word: "ocean", start: 5, end: 5 },
      ],
    });
  });

  it("asks for segments only unless words are wanted, and sends the caller's model when none is configured", async () => {
    upstream.behaviour = { kind: "verbose" };
    const mp3ish = { ...request(), info: { ...probeAudio(audio), container: "mp3" as const } };
    const transcript = await engine({ model: undefined }).transcribe({
      ...mp3ish,
      model: "whisper-large-v3",
    });
    const sent = upstream.received.at(-1);
    expect(sent?.fields["timestamp_granularities[]"]).toEqual(["segment"]);
    expect(sent?.fields.model).toEqual(["whisper-large-v3"]);
    expect(sent?.fields).not.toHaveProperty("language");
    expect(sent?.file).toMatchObject({ name: "audio.mp3", type: "audio/mpeg" });
    expect(transcript).not.toHaveProperty("words");
    await engine({ model: undefined }).transcribe(request());
    expect(upstream.received.at(-1)?.fields.model).toEqual(["whisper-1"]);
  });

  it("takes a text-only answer as one segment spanning the file", async () => {
    upstream.behaviour = { kind: "text-only" };
    const transcript = await engine().transcribe(request({ language: "de" }));
    expect(transcript).toEqual({
      language: "de",
      duration: 5,
      text: VERBOSE.text,
      segments: [{ id: 0, start: 0, end: 5, text: VERBOSE.text }],
    });
  });

  it("turns the upstream's refusal into an upstream error that names its message", async () => {
    upstream.behaviour = { kind: "status", status: 400 };
    const error = await engine()
      .transcribe(request())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 502, code: "upstream_failed" });
    expect((error as Error).message).toMatch(/HTTP 400: Invalid file format\.$/);
    upstream.behaviour = { kind: "status", status: 500 };
    await expect(engine().transcribe(request())).rejects.toMatchObject({ status: 502 });
    upstream.behaviour = { kind: "verbose" };
    await expect(engine({ key: "sk-wrong" }).transcribe(request())).rejects.toThrow(
      /HTTP 401: Incorrect API key/,
    );
  });

  it("turns the upstream's rate limit into a 503 with Retry-After: its own wait, or 30 s", async () => {
    upstream.behaviour = { kind: "status", status: 429, retryAfter: "7" };
    const error = await engine()
      .transcribe(request())
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 503,
      code: "upstream_rate_limited",
      headers: { "retry-after": "7" },
    });
    expect((error as Error).message).toMatch(
      /rate limiting this server: Rate limit reached for whisper-1; try again in 7 s$/,
    );
    upstream.behaviour = { kind: "status", status: 429 };
    await expect(engine().transcribe(request())).rejects.toMatchObject({
      status: 503,
      headers: { "retry-after": "30" },
    });
  });

  it("gives up on a slow upstream at its time limit (504), and leaves when the caller does", async () => {
    upstream.behaviour = { kind: "slow", ms: 3_000 };
    const started = Date.now();
    await expect(engine({ timeoutMs: 300 }).transcribe(request())).rejects.toMatchObject({
      status: 504,
      code: "upstream_timeout",
    });
    expect(Date.now() - started).toBeLessThan(2_500);
    const controller = new AbortController();
    const reason = new Error("the caller left");
    setTimeout(() => controller.abort(reason), 100);
    await expect(engine().transcribe(request({ signal: controller.signal }))).rejects.toBe(reason);
  });

  it("refuses an answer that is not a transcription", async () => {
    for (const [contentType, body] of [
      ["text/html", "<html>Bad gateway</html>"],
      ["application/json", JSON.stringify({ segments: [] })],
      ["application/json", JSON.stringify({ text: "hi", segments: [{ start: "0", end: 1, text: "hi" }] })],
      ["application/json", JSON.stringify({ text: "hi", words: [{ word: "hi", start: null, end: 1 }] })],
    ] as const) {
      upstream.behaviour = { kind: "raw", contentType, body };
      await expect(engine().transcribe(request()), body).rejects.toMatchObject({
        status: 502,
        code: "upstream_invalid",
      });
    }
  });
});
