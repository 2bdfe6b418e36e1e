/**
 * The hosted engine: one interface (`VectorizerProvider`) and the Vectorizer.AI adapter. Its wire format
 * (https://vectorizer.ai/api): `POST https://api.vectorizer.ai/api/v1/vectorize`, HTTP Basic auth (API Id :
 * API Secret), a multipart form with the file in `image`, `mode` (production, preview, test, test_preview),
 * `output.file_format` (svg, eps, pdf, dxf, png) and `processing.max_colors` (0 = unlimited); the answer is the
 * vector file itself, an error is JSON `{"error": {"status", "code", "message"}}`. The URL is the operator's,
 * never a caller's, so plain `fetch` with a time limit and a size cap is used, not the SSRF guard.
 */

import { UpstreamError } from "../../../common/errors.ts";
import { fetchWithin } from "../../../common/fetch-within.ts";
import { timeoutSignal } from "../../../common/timeout-signal.ts";
import {
  countUpstream,
  noAnswerOutcome,
  readBytes,
  readText,
  statusOutcome,
} from "../../../merchant-kit/index.ts";
import type { VectorFormat } from "./render.ts";

export interface HostedRequest {
  image: Uint8Array;
  /** The sniffed MIME type of `image`. */
  mime: string;
  format: VectorFormat;
  /** Palette cap asked by the caller. */
  colors: number;
}

export interface HostedResult {
  bytes: Buffer;
}

/** A hosted vectorizer. Failures are `UpstreamError`s (502/504), which are never charged. */
export interface VectorizerProvider {
  /** For messages and the `engine` field, e.g. "vectorizer.ai". */
  readonly name: string;
  vectorize(request: HostedRequest, signal?: AbortSignal): Promise<HostedResult>;
}

/** Settings of the Vectorizer.AI adapter (read from the environment by the config). */
export interface VectorizerAiSettings {
  apiId: string;
  apiSecret: string;
  /** Default `https://api.vectorizer.ai/api/v1/vectorize`. */
  url?: string;
  /** `production` (default, billed), `preview`, `test` or `test_preview` (free, watermarked). */
  mode?: "production" | "preview" | "test" | "test_preview";
  /** Default 60 s. */
  timeoutMs?: number;
}

export const VECTORIZER_AI_URL = "https://api.vectorizer.ai/api/v1/vectorize";
/** Largest answer read from the hosted engine. */
export const MAX_HOSTED_ANSWER_BYTES = 50 * 1024 * 1024;

export function vectorizerAiProvider(settings: VectorizerAiSettings): VectorizerProvider {
  const name = "vectorizer.ai";
  const provider = `hosted vectorizer (${name})`;
  const url = settings.url ?? VECTORIZER_AI_URL;
  const auth = `Basic ${Buffer.from(`${settings.apiId}:${settings.apiSecret}`).toString("base64")}`;
  const timeoutMs = settings.timeoutMs ?? 60_000;
  return {
    name,
    async vectorize(request, signal) {
      const form = new FormData();
      const extension = request.mime.split("/")[1] ?? "bin";
      form.append(
        "image",
        new Blob([new Uint8Array(request.image)], { type: request.mime }),
        `image.${extension}`,
      );
      form.append("mode", settings.mode ?? "production");
      form.append("output.file_format", request.format);
      form.append("processing.max_colors", String(request.colors));
      const timeout = timeoutSignal(timeoutMs);
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let response: Response | undefined;
      try {
        response = await fetchWithin(url, {
          method: "POST",
          headers: { authorization: auth },
          body: form,
          signal: combined,
          redirect: "error",
        });
        countUpstream(provider, statusOutcome(response.status));
        if (!response.ok) {
          // An error page is read only as far as a message goes: its size is the upstream's to choose.
          const text = (await readText(response, 64 * 1024, { provider: name }).catch(() => "")).slice(
            0,
            2000,
          );
          let detail = text;
          try {
            const parsed = JSON.parse(text) as { error?: { message?: unknown } };
            if (typeof parsed.error?.message === "string") detail = parsed.error.message;
          } catch {}
          throw new UpstreamError(
            `the hosted vectorizer (${name}) answered ${response.status}${detail ? `: ${detail}` : ""}`,
          );
        }
        return {
          bytes: await readBytes(response, MAX_HOSTED_ANSWER_BYTES, {
            provider: `hosted vectorizer (${name})`,
          }),
        };
      } catch (error) {
        if (!response) countUpstream(provider, noAnswerOutcome(signal, timeout));
        if (error instanceof UpstreamError) throw error;
        if (timeout.aborted)
          throw new UpstreamError(
            `the hosted vectorizer (${name}) gave no answer within ${timeoutMs} ms`,
            "upstream_timeout",
            504,
          );
        if (signal?.aborted) throw signal.reason;
        const message = error instanceof Error ? error.message : String(error);
        throw new UpstreamError(`the hosted vectorizer (${name}) could not be reached: ${message}`);
      }
    },
  };
}

/** Whether `bytes` look like a file of `format` (the hosted answer is checked before it is sold). */
export function looksLike(format: VectorFormat, bytes: Buffer): boolean {
  const head = bytes.subarray(0, 1024).toString("latin1");
  switch (format) {
    case "svg":
      return /<svg[\s>]/.test(head);
    case "png":
      return bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    case "pdf":
      return head.startsWith("%PDF-");
    case "eps":
      return head.startsWith("%!PS") || bytes.subarray(0, 4).equals(Buffer.from([0xc5, 0xd0, 0xd3, 0xc6]));
    case "dxf":
      return /\bSECTION\b/.test(head) || head.startsWith("AutoCAD Binary DXF");
  }
}
