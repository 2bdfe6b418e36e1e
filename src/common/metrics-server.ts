/**
 * Where the process's metrics (metrics.ts) are read: `GET /metrics` on the operator's listener (loopback
 * by default: src/services/metrics.ts starts it) and, when the operator set a token, on every service's
 * public port too, for that token only. docs/metrics.md says how to scrape them.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { errorBody } from "./errors.ts";
import type { Fetch } from "./listen.ts";
import { register } from "./metrics.ts";

export const METRICS_PATH = "/metrics";

/** The exposition of every metric of the process, in Prometheus's text format. */
export async function exposition(): Promise<string> {
  return register.metrics();
}

/**
 * Whether an `Authorization` header carries `Bearer <token>`. The digests are compared, in constant
 * time: equal lengths whatever was sent, so the time taken says nothing about the token.
 */
export function bearerMatches(header: string | null | undefined, token: string): boolean {
  const sent = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "")?.[1];
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(sent ?? ""), digest(token)) && sent !== undefined;
}

/**
 * The answer to a request for `/metrics`: the exposition for GET (its headers alone for HEAD) when no
 * token is set or the request carries it; 401 without it, 405 for other methods.
 */
export async function metricsAnswer(request: Request, token: string | null): Promise<Response> {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return json(405, "method_not_allowed", `${METRICS_PATH} answers GET and HEAD`, { Allow: "GET, HEAD" });
  }
  if (token !== null && !bearerMatches(request.headers.get("authorization"), token)) {
    return json(
      401,
      "unauthorized",
      `${METRICS_PATH} needs the operator's token: Authorization: Bearer <token>`,
      {
        "WWW-Authenticate": 'Bearer realm="metrics"',
      },
    );
  }
  const body = await exposition();
  return new Response(request.method === "HEAD" ? null : body, {
    headers: { "Content-Type": register.contentType, "Cache-Control": "no-store" },
  });
}

/** The operator's listener: `/metrics`, and a 404 for any other path. */
export function metricsFetch(token: string | null): Fetch {
  return function metrics(request) {
    if (pathOf(request.url) === METRICS_PATH) return metricsAnswer(request, token);
    return json(
      404,
      "not_found",
      `no route for ${request.method} ${pathOf(request.url)}: try ${METRICS_PATH}`,
    );
  };
}

/**
 * A service's public `fetch`, with `/metrics` answered ahead of its app when the operator set a token
 * (and only for that token); without one, the app's own 404 as before. The path is read from the URL's
 * text: this runs on every request of the port.
 */
export function withMetrics(fetch: Fetch, token: string | null): Fetch {
  if (token === null) return fetch;
  return function withMetrics(request, env) {
    return pathOf(request.url) === METRICS_PATH ? metricsAnswer(request, token) : fetch(request, env);
  };
}

/** The path of an absolute URL, without its query: `http://h:1/metrics?x` -> `/metrics`. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  const end = Math.min(query < 0 ? url.length : query, hash < 0 ? url.length : hash);
  return url.slice(start, end);
}

function json(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(errorBody(code, message)), {
    status,
    headers: { "Content-Type": "application/json", ...headers },
  });
}
