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

/** How a fake upstream answers: the reply text from the request body, or a failure. */
export type Behaviour =
  // biome-ignore lint/suspicious/noExplicitAny: the request body as the adapter sent it.
  | { kind: "reply"; text: (body: any) => string; stopReason?: "end_turn" | "max_tokens" }
  | { kind: "status"; status: number }
  | { kind: "break-stream" };
