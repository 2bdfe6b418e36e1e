/**
 * A fake OpenAI `POST /v1/audio/transcriptions` on 127.0.0.1: it checks `Authorization: Bearer <key>` (401
 * `invalid_api_key` otherwise, as OpenAI does), reads the multipart form as OpenAI would, records it, and
 * answers whisper-1's verbose_json (words only when `timestamp_granularities[]` asks for them), or a
 * chosen failure.
 */
import { type FixtureServer, startFixtureServer } from "../../../helpers/fixtures/index.ts";
import { sendJson } from "../../../helpers/upstreams/json.ts";

/** What the fake answers next. */
export type TranscriptionBehaviour =
  | { kind: "verbose" }
  | { kind: "text-only" }
  | { kind: "status"; status: number; retryAfter?: string }
  | { kind: "slow"; ms: number }
  | { kind: "raw"; contentType: string; body: string };

/** One request as the fake read it: its form fields (repeated ones in order) and its file. */
export interface ReceivedTranscription {
  fields: Record<string, string[]>;
  file: { name: string; type: string; bytes: Buffer } | undefined;
}

export interface FakeTranscriptions extends FixtureServer {
  /** `http://127.0.0.1:<port>/v1`, as the engine's `url` setting takes it. */
  base: string;
  behaviour: TranscriptionBehaviour;
  received: ReceivedTranscription[];
}

/** whisper-1's answer for its sample sentence, in its exact shape. */
export const VERBOSE = {
  task: "transcribe",
  language: "english",
  duration: 8.470000267028809,
  text: "The beach was a popular spot on a hot summer day. People were swimming in the ocean.",
  segments: [
    {
      id: 0,
      seek: 0,
      start: 0,
      end: 3.319999933242798,
      text: " The beach was a popular spot on a hot summer day.",
      tokens: [50364, 440, 7534, 390, 257, 3743, 4008, 322, 257, 2368, 4266, 786, 13, 50530],
      temperature: 0,
      avg_logprob: -0.2860786020755768,
      compression_ratio: 1.2363636493682861,
      no_speech_prob: 0.00985979475080967,
    },
    {
      id: 1,
      seek: 0,
      start: 3.319999933242798,
      // Past the end of the 5 s file the tests send: the engine clamps it.
      end: 8.470000267028809,
      text: " People were swimming in the ocean.",
      tokens: [50530, 3432, 645, 11989, 294, 264, 7810, 13, 50787],
      temperature: 0,
      avg_logprob: -0.2860786020755768,
      compression_ratio: 1.2363636493682861,
      no_speech_prob: 0.00985979475080967,
    },
  ],
  words: [
    { word: "The", start: 0, end: 0.23999999463558197 },
    { word: "beach", start: 0.23999999463558197, end: 0.6200000047683716 },
    { word: "ocean", start: 7.9, end: 8.470000267028809 },
  ],
};

export async function startTranscriptionUpstream(key: string): Promise<FakeTranscriptions> {
  const upstream = (await startFixtureServer()) as FakeTranscriptions;
  upstream.base = `${upstream.url}v1`;
  upstream.behaviour = { kind: "verbose" };
  upstream.received = [];
  upstream.route("/v1/audio/transcriptions", async (request, res) => {
    if (request.headers.authorization !== `Bearer ${key}`)
      return sendJson(res, 401, {
        error: {
          message: "Incorrect API key provided",
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      });
    const form = await new Request("http://fake/", {
      method: "POST",
      headers: { "content-type": String(request.headers["content-type"]) },
      body: new Uint8Array(request.body),
    }).formData();
    const received: ReceivedTranscription = { fields: {}, file: undefined };
    for (const [name, value] of form.entries()) {
      if (typeof value === "string") received.fields[name] = [...(received.fields[name] ?? []), value];
      else
        received.file = { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
    }
    upstream.received.push(received);
    const b = upstream.behaviour;
    if (b.kind === "status") {
      res.writeHead(b.status, {
        "content-type": "application/json",
        ...(b.retryAfter !== undefined && { "retry-after": b.retryAfter }),
      });
      return void res.end(
        JSON.stringify({
          error: {
            message: b.status === 429 ? "Rate limit reached for whisper-1" : "Invalid file format.",
            type: "invalid_request_error",
          },
        }),
      );
    }
    if (b.kind === "slow") await new Promise((resolve) => setTimeout(resolve, b.ms));
    if (b.kind === "raw") return void res.writeHead(200, { "content-type": b.contentType }).end(b.body);
    if (b.kind === "text-only") return sendJson(res, 200, { text: VERBOSE.text });
    const words = received.fields["timestamp_granularities[]"]?.includes("word");
    const { words: allWords, ...rest } = VERBOSE;
    sendJson(res, 200, words ? { ...rest, words: allWords } : rest);
  });
  return upstream;
}
