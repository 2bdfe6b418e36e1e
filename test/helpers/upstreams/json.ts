/** Small helpers shared by the fake upstreams. */
import type http from "node:http";
import type { FixtureRequest } from "../fixtures/index.ts";

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

// biome-ignore lint/suspicious/noExplicitAny: fake upstreams read whatever the adapter sent.
export function bodyOf(request: FixtureRequest): any {
  return JSON.parse(request.body.toString("utf8"));
}

/** Text cut into a few pieces, as a model streams it. */
export function pieces(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The usage an OpenAI-compatible server reports (OpenAI's fields; some servers add or leave out some). */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details?: { reasoning_tokens: number };
}

/** How a fake upstream answers: the reply text from the request body, or a failure. */
export type Behaviour =
  | {
      kind: "reply";
      // biome-ignore lint/suspicious/noExplicitAny: the request body as the adapter sent it.
      text: (body: any) => string;
      stopReason?: "end_turn" | "max_tokens";
      /** The OpenAI fake's usage, instead of its fixed one. */
      usage?: FakeUsage;
    }
  | { kind: "status"; status: number }
  | { kind: "break-stream" }
  /**
   * The OpenAI fake, streaming: `pieces` one every `everyMs` ms (a slow model), then the end; with `stall`,
   * nothing after the pieces, until the client gives up.
   */
  | { kind: "drip"; pieces: string[]; everyMs: number; stall?: boolean };
