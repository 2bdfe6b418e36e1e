/**
 * A fake OpenAI-compatible speech server on 127.0.0.1: `POST /v1/audio/speech` answers audio bytes (a
 * real WAV of a tone, whatever the format asked, labelled as OpenAI labels that format) or a failure, and
 * `GET /v1/audio/voices` a list in one of the shapes real servers use, or 404 as OpenAI does. It checks
 * `Authorization: Bearer <key>` as OpenAI does.
 */
import { type FixtureServer, startFixtureServer } from "../../../helpers/fixtures/index.ts";
import { sendJson } from "../../../helpers/upstreams/json.ts";
import { toneWav } from "./audio-checks.ts";

export type SpeechBehaviour =
  | { kind: "audio"; contentType?: string }
  | { kind: "status"; status: number; retryAfter?: string }
  | { kind: "slow"; ms: number }
  | { kind: "huge"; bytes: number }
  | { kind: "json-200" };

export interface FakeSpeechUpstream extends FixtureServer {
  /** Base URL as the adapter takes it: `http://127.0.0.1:PORT/v1`. */
  base: string;
  speech: SpeechBehaviour;
  /** What `GET /v1/audio/voices` answers: a body, or 404 (OpenAI has no such endpoint). */
  voices: { kind: "body"; body: unknown } | { kind: "missing" };
}

const CONTENT_TYPES: Record<string, string> = {
  mp3: "audio/mpeg",
  opus: "audio/opus",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm",
};

export async function startFakeSpeechUpstream(key: string): Promise<FakeSpeechUpstream> {
  const upstream = (await startFixtureServer()) as FakeSpeechUpstream;
  upstream.base = `${upstream.url}v1`;
  upstream.speech = { kind: "audio" };
  upstream.voices = { kind: "missing" };
  const unauthorized = (res: Parameters<Parameters<FixtureServer["route"]>[1]>[1]) =>
    sendJson(res, 401, { error: { message: "Incorrect API key provided", code: "invalid_api_key" } });
  upstream.route("/v1/audio/speech", async (request, res) => {
    if (request.headers.authorization !== `Bearer ${key}`) return unauthorized(res);
    const body = JSON.parse(request.body.toString("utf8"));
    const b = upstream.speech;
    if (b.kind === "status") {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (b.retryAfter) headers["retry-after"] = b.retryAfter;
      res.writeHead(b.status, headers).end(
        JSON.stringify({
          error: { message: `fake refusal of voice ${body.voice}`, type: "invalid_request_error" },
        }),
      );
      return;
    }
    if (b.kind === "json-200") return sendJson(res, 200, { error: "this gateway answers errors with 200" });
    if (b.kind === "slow") await new Promise((resolve) => setTimeout(resolve, b.ms));
    if (b.kind === "huge") {
      res.writeHead(200, { "content-type": "audio/mpeg" });
      // Streamed in pieces, as a provider would: the adapter must stop reading past its cap.
      const piece = Buffer.alloc(64 * 1024, 0xff);
      for (let sent = 0; sent < b.bytes && !res.destroyed; sent += piece.length) res.write(piece);
      res.end();
      return;
    }
    const contentType =
      b.kind === "audio" && b.contentType ? b.contentType : CONTENT_TYPES[body.response_format];
    res
      .writeHead(200, { "content-type": contentType ?? "audio/mpeg" })
      .end(Buffer.from(toneWav(0.2, 24_000)));
  });
  upstream.route("/v1/audio/voices", (request, res) => {
    if (request.headers.authorization !== `Bearer ${key}`) return unauthorized(res);
    if (upstream.voices.kind === "missing")
      return sendJson(res, 404, { error: { message: "Invalid URL (GET /v1/audio/voices)" } });
    sendJson(res, 200, upstream.voices.body);
  });
  return upstream;
}
